/**
 * The records customers receive, as JSON text: an order's status, a refill,
 * the service list, a placed order and a balance. The HTTP answers and the
 * webhook messages share them, so a status reads the same on both. Built as
 * strings so that money is written as exact decimals (never through a binary
 * float) and no generic serialiser runs on the hot path; strings from users
 * go through JSON.stringify.
 */
import { formatMicro } from '../money/index.js';
import { statusView, type OrderRecord, type OrderStatusView, type RefillRecord, type ServiceRecord } from '../ledger/index.js';

export function renderOrderPlaced(order: Pick<OrderRecord, 'id' | 'number' | 'charge'>, balanceMicro: number): string {
  return `{"ok":true,"order":"${order.id}","number":${order.number ?? null},"charge":${formatMicro(order.charge)},"status":"pending","balance":${formatMicro(balanceMicro)}}`;
}

export function renderBalance(creditsMicro: number, unlimitedExpiresMs: number | null): string {
  const expires = unlimitedExpiresMs === null ? 'null' : `"${new Date(unlimitedExpiresMs).toISOString()}"`;
  return `{"ok":true,"credits":${formatMicro(creditsMicro)},"unlimited":${unlimitedExpiresMs !== null},"unlimited_expires":${expires}}`;
}

export function renderStatus(order: OrderRecord): string {
  return `{"ok":true,${renderStatusFields(order)}}`;
}

/**
 * An order's status fields, as GET /status shows one order and the batch
 * form shows each: start_count (null until the operator records it) and
 * remains (see remainsShown) for every order, runs and interval when drip-fed.
 */
export function renderStatusFields(order: OrderRecord): string {
  return renderStatusView(statusView(order));
}

/** The same fields from a stored view (a webhook message's, taken at the change). */
export function renderStatusView(view: OrderStatusView): string {
  return (
    `"order":"${view.id}","number":${view.number},"status":"${view.status}","quantity":${view.quantity},"charge":${formatMicro(view.charge)},` +
    `"start_count":${view.startCount},"remains":${view.remains}` +
    (view.runs === undefined ? '' : `,"runs":${view.runs},"interval":${view.interval!}`)
  );
}

export function renderRefill(refill: RefillRecord): string {
  return (
    `{"refill":${refill.id},"order":"${refill.order}","status":"${refill.status}",` +
    `"created_at":"${new Date(refill.createdAtMs).toISOString()}","updated_at":"${new Date(refill.updatedAtMs).toISOString()}"` +
    (refill.reason === undefined ? '' : `,"reason":${JSON.stringify(refill.reason)}`) +
    '}'
  );
}

/**
 * A service as customers see it (no `enabled`: they only ever see enabled
 * ones). `average_time` is the median time from placement to completion of
 * its recent completed orders, in whole seconds, null before its first.
 */
export function renderPublicService(s: ServiceRecord, averageTimeS: number | null): string {
  return (
    `{"id":${s.id},"platform":${JSON.stringify(s.platform)},"name":${JSON.stringify(s.name)},"rate":${formatMicro(s.rate)},"min":${s.min},"max":${s.max},` +
    `"category":${JSON.stringify(s.category)},"type":${JSON.stringify(s.type)},"refill":${s.refill},"refill_days":${s.refillDays},` +
    `"cancel":${s.cancel},"dripfeed":${s.dripfeed},"description":${JSON.stringify(s.description)},` +
    `"average_time":${averageTimeS}}`
  );
}

export function renderServiceList(services: Iterable<ServiceRecord>, averageTimeS: (service: number) => number | null): string {
  const parts: string[] = [];
  for (const s of services) if (s.enabled) parts.push(renderPublicService(s, averageTimeS(s.id)));
  return `{"ok":true,"services":[${parts.join(',')}]}`;
}
