/**
 * The rules of an order's life after placement, written once: operator
 * progress, customer cancel, refills, and what a status read shows. Each is
 * a pure function of the records it is given; the wallet actor's decision,
 * verify and the API front ends (v1 and v2) call them.
 */
import { MS_PER_DAY } from '../platform/units.js';
import { FINAL_STATUSES, unitsOrdered } from './rules.js';
import type { OrderExtras } from './order-types.js';
import type { LogEvent, OrderRecord, OrderStatus, OrderStatusView, RefillStatus, ServiceRecord } from './records.js';

/** What a status read shows of an order, as data (see OrderStatusView). */
export function statusView(order: OrderRecord): OrderStatusView {
  return withDripFeed({ id: order.id, number: order.number ?? null, status: order.status, quantity: order.quantity, charge: order.charge, startCount: order.startCount ?? null, remains: remainsShown(order) }, order.extras);
}

/**
 * What a status read showed of an order just placed, from its order.placed
 * event alone: equal to statusView of the order the placement wrote (a
 * placement's webhook message is rendered from it; test/ledger covers the
 * equality).
 */
export function placedStatusView(placed: Extract<LogEvent, { type: 'order.placed' }>): OrderStatusView {
  const status: OrderStatus = 'pending';
  return withDripFeed({ id: placed.order, number: placed.number ?? null, status, quantity: placed.quantity, charge: placed.charge, startCount: null, remains: remainsShown({ status, quantity: placed.quantity, remains: null, extras: placed.extras }) }, placed.extras);
}

/** `runs` and `interval` are shown for a drip-feed order only. */
function withDripFeed(view: OrderStatusView, extras: OrderExtras | undefined): OrderStatusView {
  const runs = extras?.runs;
  if (runs !== undefined) {
    view.runs = runs;
    view.interval = extras!.interval!;
  }
  return view;
}

/** What `remains` a status read shows: the units (see unitsOrdered) not (yet) delivered. */
export function remainsShown(order: Pick<OrderRecord, 'status' | 'quantity' | 'remains' | 'progressRemains' | 'extras'>): number {
  switch (order.status) {
    case 'completed':
      return 0;
    case 'partial':
      return order.remains ?? 0;
    case 'in_progress':
      return order.progressRemains ?? unitsOrdered(order);
    default:
      return unitsOrdered(order);
  }
}

export type ProgressRefusal = 'not-in-progress' | 'remains-range' | 'start-count-range' | 'nothing';

/** Why progress may not be recorded, or null: only while in_progress, remains 0..units (see unitsOrdered), start_count ≥ 0. */
export function progressRefusal(order: Pick<OrderRecord, 'status' | 'quantity' | 'extras'>, startCount: number | null | undefined, remains: number | null | undefined): ProgressRefusal | null {
  if (startCount === undefined && remains === undefined) return 'nothing';
  if (order.status !== 'in_progress') return 'not-in-progress';
  if (startCount !== undefined && startCount !== null && (!Number.isSafeInteger(startCount) || startCount < 0)) return 'start-count-range';
  if (remains !== undefined && remains !== null && (!Number.isSafeInteger(remains) || remains < 0 || remains > unitsOrdered(order))) return 'remains-range';
  return null;
}

/**
 * What a customer's cancel does to an order: a pending order of a service
 * that allows cancel is canceled at once (full refund, via refundFor); a
 * processing or in_progress one gets a request the operator resolves;
 * anything else is refused with a reason.
 */
export type CancelVerdict =
  | { kind: 'cancel-now' }
  | { kind: 'request' }
  | { kind: 'refused'; reason: 'not-allowed' | 'final' | 'already-requested' };

export function cancelVerdict(order: Pick<OrderRecord, 'status' | 'cancelRequested'>, service: Pick<ServiceRecord, 'cancel'> | null): CancelVerdict {
  if (FINAL_STATUSES.has(order.status)) return { kind: 'refused', reason: 'final' };
  if (service === null || !service.cancel) return { kind: 'refused', reason: 'not-allowed' };
  if (order.status === 'pending') return { kind: 'cancel-now' };
  if (order.cancelRequested === true) return { kind: 'refused', reason: 'already-requested' };
  return { kind: 'request' };
}

export type RefillRefusal = 'not-finished' | 'not-allowed' | 'window-closed' | 'open-refill';

/** Why a refill may not be opened for this order now, or null: completed or partial, a refill service, within refill_days of finishing, none open. */
export function refillRefusal(order: Pick<OrderRecord, 'status' | 'finishedAtMs' | 'refill'>, service: Pick<ServiceRecord, 'refill' | 'refillDays'> | null, wallMs: number): RefillRefusal | null {
  if (order.status !== 'completed' && order.status !== 'partial') return 'not-finished';
  if (service === null || !service.refill) return 'not-allowed';
  // Orders finished before finish times were kept have no window to count from: refused.
  if (order.finishedAtMs === undefined || wallMs - order.finishedAtMs > service.refillDays * MS_PER_DAY) return 'window-closed';
  if (order.refill !== undefined && isOpenRefill(order.refill.status)) return 'open-refill';
  return null;
}

export const REFILL_STATUSES: readonly RefillStatus[] = ['pending', 'in_progress', 'completed', 'rejected'];
const REFILL_RANK: Readonly<Record<RefillStatus, number>> = { pending: 0, in_progress: 1, completed: 2, rejected: 2 };

/** Whether `value` names a refill status. The list holds strings only, so no other value is found in it. */
export function isRefillStatus(value: unknown): value is RefillStatus {
  return (REFILL_STATUSES as readonly unknown[]).includes(value);
}

export function isOpenRefill(status: RefillStatus): boolean {
  return REFILL_RANK[status] < 2;
}

/** Why a refill may not move from `from` to `to`, or null: forward only, and completed/rejected are final. */
export function refillMoveRefusal(from: RefillStatus, to: RefillStatus): 'final' | 'backwards' | null {
  if (!isOpenRefill(from)) return 'final';
  if (REFILL_RANK[to] <= REFILL_RANK[from]) return 'backwards';
  return null;
}

/** The plain sentence for each per-order refusal, shared by every front end. */
export function cancelRefusalMessage(reason: Extract<CancelVerdict, { kind: 'refused' }>['reason'], status: OrderStatus): string {
  switch (reason) {
    case 'final':
      return `The order is already ${status}; a final order cannot be canceled.`;
    case 'not-allowed':
      return "This order's service does not allow cancellation.";
    case 'already-requested':
      return 'A cancel request for this order is already open; the operator will resolve it.';
  }
}

export function refillRefusalMessage(reason: RefillRefusal, status: OrderStatus, refillDays: number): string {
  switch (reason) {
    case 'not-finished':
      return `The order is ${status}; only completed or partial orders can be refilled.`;
    case 'not-allowed':
      return "This order's service does not offer refills.";
    case 'window-closed':
      return `The refill window of ${refillDays} days after completion has closed.`;
    case 'open-refill':
      return 'This order already has an open refill.';
  }
}
