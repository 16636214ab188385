/**
 * The order.placed event of a new order, carrying the balance its debit
 * leaves: one function for an order a customer places (decide.ts) and for
 * a subscription's post (subscription-decide.ts), so both log the same event.
 */
import type { LogEvent, OrderRecord } from './records.js';

export function placedEvent(order: OrderRecord, balance: number, idem: { key: string } | null, atMs: number): Extract<LogEvent, { type: 'order.placed' }> {
  return {
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
    idempotencyKey: idem?.key ?? null,
    ...(order.type === undefined ? {} : { orderType: order.type }),
    ...(order.extras === undefined ? {} : { extras: order.extras }),
  };
}
