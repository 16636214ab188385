/**
 * Invariant (f) of `replayLedger`: the lifecycle events that move no money
 * (order.progress, order.cancel_requested, refill.requested, refill.status,
 * and the lease events of `lease-events.ts`).
 * None carries an amount, a refund or a balance, each names an order of its
 * account, and each is one the actor would accept at that point of the log,
 * by the same rules (src/ledger/lifecycle.ts): progress while in_progress, a
 * cancel request once per processing or in_progress order of a service
 * that allows it, and the refill rules of `refill-events.ts`.
 */
import { cancelRefusalMessage, cancelVerdict, progressRefusal } from '../lifecycle.js';
import { unitsOrdered } from '../rules.js';
import { fail } from './finding.js';
import type { OpenOrder } from './open-orders.js';
import { isInt, type Raw } from './raw.js';
import { leaseExtended, orderReleased } from './lease-events.js';
import { refillMoved, refillRequested } from './refill-events.js';
import type { ReplayState } from './replay-state.js';
import { credits } from './wording.js';

/** Fields that move money; the lifecycle events carry none. */
const MONEY_FIELDS = ['amount', 'refund', 'debit', 'charge', 'balance'] as const;

/** A lifecycle event of account `id`: what every one must be, then what its type must be. */
export function lifecycleEvent(state: ReplayState, seq: number, id: number, e: Raw): void {
  const type = String(e.type);
  const orderId = e.order;
  if (typeof orderId !== 'string') fail('lifecycle', seq, id, null, `${type} does not carry an order id.`);
  for (const field of MONEY_FIELDS) {
    if (e[field] !== undefined) fail('lifecycle', seq, id, orderId, `${type} carries ${field} ${credits(e[field])}; it must move no money.`);
  }
  const order = state.orders.find(orderId);
  if (order === undefined) fail('lifecycle', seq, id, orderId, `${type} names an order that no earlier order.placed created.`);
  if (order.account !== id) fail('lifecycle', seq, id, orderId, `${type} names account ${id} but the order belongs to account ${order.account}.`);
  const atMs = e.atMs;
  if (!isInt(atMs)) fail('lifecycle', seq, id, orderId, `${type} carries an invalid time (${String(atMs)}).`);
  const refused = (why: string): never => fail('lifecycle', seq, id, orderId, `the actor refuses ${type} here: ${why}`);
  switch (e.type) {
    case 'order.progress':
      return progressRecorded(order, e, refused);
    case 'order.cancel_requested':
      return cancelRequested(state, orderId, order, refused);
    case 'refill.requested':
      return refillRequested(state, seq, id, orderId, order, e.refill, atMs, refused);
    case 'refill.status':
      return refillMoved(state, seq, id, orderId, e);
    case 'order.lease_extended':
      return leaseExtended(state, orderId, order, e, atMs, refused);
    case 'order.released':
      return orderReleased(state, orderId, order, e, atMs, refused);
  }
}

/** order.progress: recorded only while the order is in_progress, with a start count and remains in range. */
function progressRecorded(order: OpenOrder, e: Raw, refused: (why: string) => never): void {
  const refusal = progressRefusal(order, e.startCount as number | null | undefined, e.remains as number | null | undefined);
  if (refusal === 'not-in-progress') refused(`progress is recorded only while the order is in_progress, and it is ${order.status}.`);
  if (refusal !== null) {
    refused(`it records start_count ${String(e.startCount)} and remains ${String(e.remains)}; start_count must be 0 or more, remains must lie in 0..${unitsOrdered(order)}.`);
  }
}

/**
 * order.cancel_requested: one request per order, of a processing or
 * in_progress order whose service (a version the actor may have read)
 * allows it; it stays open until the order's move to a final state.
 */
function cancelRequested(state: ReplayState, orderId: string, order: OpenOrder, refused: (why: string) => never): void {
  const asked = { status: order.status, cancelRequested: state.cancelRequests.has(orderId) };
  const verdicts = state.services.seen(order.service).map((service) => cancelVerdict(asked, service));
  if (!verdicts.some((v) => v.kind === 'request')) {
    const verdict = verdicts[0]!;
    refused(verdict.kind === 'refused' ? cancelRefusalMessage(verdict.reason, order.status) : 'a pending order is canceled at once (order.status), never by request.');
  }
  // Stryker disable next-line BooleanLiteral: equivalent: the replay asks only whether an order has an entry (has), never for its value
  state.cancelRequests.set(orderId, true);
}
