/**
 * The order.placed event of a new order, carrying the balance its debit
 * leaves: one function for an order a customer places (decide.ts) and for
 * a subscription's post (subscription-decide.ts, whose order row names its
 * subscription and post), so both log the same event.
 */
import type { LogEvent, OrderRecord } from './records.js';

export function placedEvent(order: OrderRecord, balance: number, idem: { key: string } | null, atMs: number): Extract<LogEvent, { type: 'order.placed' }> {
  // One literal, the type and extras added after it only when the order has
  // them: a spread of a conditional object would give the events several
  // shapes, slower to build and to encode.
  const event: Extract<LogEvent, { type: 'order.placed' }> = {
    type: 'order.placed',
    atMs,
    account: order.account,
    order: order.id,
    number: order.number,
    service: order.service,
    quantity: order.quantity,
    rate: order.rate,
    charge: order.charge,
    debit: order.debit,
    balance,
    channel: order.channel,
    idempotencyKey: idem === null ? null : idem.key,
  };
  if (order.type !== undefined) event.orderType = order.type;
  if (order.extras !== undefined) event.extras = order.extras;
  if (order.subscription !== undefined) event.subscription = order.subscription;
  if (order.post !== undefined) event.post = order.post;
  return event;
}
