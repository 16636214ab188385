/**
 * Claims and their leases, part of invariant (g) of `replayLedger`: a
 * claim (an order.status from pending to processing naming a worker) sets
 * a lease within the bounds of lease.ts; order.lease_extended and
 * order.released come from the worker holding the order while its lease
 * runs, and an expiry (order.released, cause expired) only once it has
 * ended; any other move out of processing ends the lease. The rules are
 * lease.ts's, the ones the actor decides with. None of them moves money.
 */
import { holdRefusalMessage, leaseEnded, leaseRefusal, leaseWithinBounds } from '../lease.js';
import { LEASE_SECONDS_MAX, LEASE_SECONDS_MIN } from '../limits.js';
import type { OrderStatus } from '../records.js';
import { fail } from './finding.js';
import type { OpenOrder } from './open-orders.js';
import type { Raw } from './raw.js';
import type { ReplayState } from './replay-state.js';
import { instant } from './wording.js';

type Refused = (why: string) => never;

/**
 * The worker and lease an order.status leaves: a claim (from pending, with
 * a lease) gives the order its worker and lease; a move out of processing
 * ends the lease. Claims logged without a lease name their worker only.
 * A move to processing comes from pending, since orderStatus has refused
 * every move that is not strictly forward before it calls this.
 */
export function leaseOfMove(state: ReplayState, seq: number, id: number, orderId: string, order: OpenOrder, to: OrderStatus, e: Raw): void {
  const { worker, leaseExpiresMs, atMs } = e;
  if (worker !== undefined && (typeof worker !== 'string' || to !== 'processing')) {
    fail('order-status', seq, id, orderId, `order.status names worker ${String(worker)} on a move from ${order.status} to ${to}; only a claim (pending to processing) names one.`);
  }
  if (leaseExpiresMs !== undefined) {
    if (worker === undefined) fail('order-status', seq, id, orderId, 'order.status sets a lease without naming the worker that holds it.');
    if (!leaseWithinBounds(atMs as number, leaseExpiresMs)) {
      fail('order-status', seq, id, orderId, `the claim's lease ends at ${instant(leaseExpiresMs)}, not ${LEASE_SECONDS_MIN} s to ${LEASE_SECONDS_MAX} s after the claim at ${instant(atMs)}.`);
    }
  }
  if (order.leaseExpiresMs !== undefined) state.leases--;
  if (worker !== undefined) order.worker = worker as string;
  order.leaseExpiresMs = leaseExpiresMs as number | undefined;
  if (order.leaseExpiresMs !== undefined) state.leases++;
}

/** order.lease_extended: the worker holding the processing order, while its lease runs, sets a new end within the bounds. */
export function leaseExtended(state: ReplayState, orderId: string, order: OpenOrder, e: Raw, atMs: number, refused: Refused): void {
  const worker = workerOf(e, refused);
  const refusal = leaseRefusal({ ...order, id: orderId }, worker, atMs);
  if (refusal !== null) refused(holdRefusalMessage(refusal, { ...order, id: orderId }, worker));
  if (!leaseWithinBounds(atMs, e.leaseExpiresMs)) {
    refused(`the lease it sets ends at ${instant(e.leaseExpiresMs)}, not ${LEASE_SECONDS_MIN} s to ${LEASE_SECONDS_MAX} s after ${instant(atMs)}.`);
  }
  order.leaseExpiresMs = e.leaseExpiresMs as number;
  state.orders.update(orderId, order);
}

/**
 * order.released: the worker holding the processing order gave it back
 * while its lease ran, or (cause expired) its lease had ended. The order
 * is pending again, held by no worker.
 */
export function orderReleased(state: ReplayState, orderId: string, order: OpenOrder, e: Raw, atMs: number, refused: Refused): void {
  const worker = workerOf(e, refused);
  if (e.cause === 'released') {
    const refusal = leaseRefusal({ ...order, id: orderId }, worker, atMs);
    if (refusal !== null) refused(holdRefusalMessage(refusal, { ...order, id: orderId }, worker));
  } else if (e.cause === 'expired') {
    if (order.worker !== worker || !leaseEnded(order, atMs)) refused(`the order holds no lease of ${worker} that had ended by ${instant(atMs)}.`);
  } else {
    refused(`its cause ${JSON.stringify(e.cause)} is neither released nor expired.`);
  }
  if (order.leaseExpiresMs !== undefined) state.leases--;
  state.statuses.processing--;
  state.statuses.pending++;
  order.status = 'pending';
  order.worker = undefined;
  order.leaseExpiresMs = undefined;
  state.orders.update(orderId, order);
}

function workerOf(e: Raw, refused: Refused): string {
  if (typeof e.worker !== 'string') refused('it names no worker.');
  return e.worker as string;
}
