/**
 * The rules of a claim's lease, written once: the wallet's decision, the
 * replay and the admin API call them. A claim moves a pending order to
 * processing for one worker until its lease ends (a wall-clock instant, so
 * that it means the same after a restart). While the lease runs, the
 * worker may extend it, release the order back to the claim queue, or move
 * it on; once the lease has ended the worker holds nothing, and the order
 * goes back to the queue (the sweep, or the next claim, logs that). A lease
 * holds only a processing order: moving it on ends the lease, and the
 * worker who claimed it keeps it until a final state.
 */
import { MS_PER_SECOND } from '../platform/units.js';
import { LEASE_SECONDS_MAX, LEASE_SECONDS_MIN } from './limits.js';
import type { LogEvent, OrderRecord } from './records.js';

type Held = Pick<OrderRecord, 'id' | 'status' | 'worker' | 'leaseExpiresMs'>;

/** Whether the order's lease has ended at `wallMs`: a processing order whose lease time has come. */
export function leaseEnded(order: Pick<OrderRecord, 'status' | 'leaseExpiresMs'>, wallMs: number): boolean {
  return (
    order.status === 'processing' &&
    // Stryker disable next-line ConditionalExpression: equivalent: without a lease the comparison below is with undefined, which is false, as this check is.
    order.leaseExpiresMs !== undefined &&
    wallMs >= order.leaseExpiresMs
  );
}

/** When a lease of `leaseSeconds` taken or extended at `wallMs` ends. */
export function leaseEnd(wallMs: number, leaseSeconds: number): number {
  return wallMs + leaseSeconds * MS_PER_SECOND;
}

/** The sentence refusing a lease length, or null when it lies within the bounds. */
export function leaseSecondsRefusal(leaseSeconds: unknown): string | null {
  if (Number.isSafeInteger(leaseSeconds) && (leaseSeconds as number) >= LEASE_SECONDS_MIN && (leaseSeconds as number) <= LEASE_SECONDS_MAX) return null;
  return `lease_seconds must be an integer from ${LEASE_SECONDS_MIN} to ${LEASE_SECONDS_MAX}.`;
}

/** Whether a lease an event carries is one the bounds allow, taken or extended at `atMs`. */
export function leaseWithinBounds(atMs: number, leaseExpiresMs: unknown): boolean {
  return Number.isSafeInteger(leaseExpiresMs) && (leaseExpiresMs as number) >= leaseEnd(atMs, LEASE_SECONDS_MIN) && (leaseExpiresMs as number) <= leaseEnd(atMs, LEASE_SECONDS_MAX);
}

/**
 * Why a worker does not hold an order: it is back in the queue, nobody
 * claimed it, another worker did, its lease ended, or (for extending and
 * releasing) it is no longer processing.
 */
export type HoldRefusal = 'in-queue' | 'not-claimed' | 'other-worker' | 'lease-ended' | 'not-processing';

/**
 * Why `worker` may not act on `order` at `wallMs`, or null when it may: the
 * order is not pending, `worker` claimed it, and a processing order's lease
 * has not ended. A final order is left to the status rules, which refuse
 * every move of it.
 */
export function holdRefusal(order: Held, worker: string, wallMs: number): HoldRefusal | null {
  if (order.status === 'pending') return 'in-queue';
  if (order.worker !== worker) return order.worker === undefined ? 'not-claimed' : 'other-worker';
  if (leaseEnded(order, wallMs)) return 'lease-ended';
  return null;
}

/** Why `worker` may not extend or release its lease on `order` at `wallMs`, or null: it holds the order, which is still processing. */
export function leaseRefusal(order: Held, worker: string, wallMs: number): HoldRefusal | null {
  return holdRefusal(order, worker, wallMs) ?? (order.status === 'processing' ? null : 'not-processing');
}

/** The plain sentence for each refusal, shared by every caller. */
export function holdRefusalMessage(refusal: HoldRefusal, order: Held, worker: string): string {
  switch (refusal) {
    case 'in-queue':
      return `Order ${order.id} is pending, back in the claim queue: ${worker} no longer holds it; claim it again.`;
    case 'not-claimed':
      return `Order ${order.id} was not claimed by ${worker}; no worker holds it.`;
    case 'other-worker':
      return `Order ${order.id} is held by ${order.worker}, not by ${worker}.`;
    case 'lease-ended':
      return `The lease of ${worker} on order ${order.id} ended at ${new Date(order.leaseExpiresMs!).toISOString()}; the order goes back to the claim queue.`;
    case 'not-processing':
      return `Order ${order.id} is ${order.status}; only a processing order has a lease to extend or release.`;
  }
}

/** Whether a change only moved a lease's end, which changes nothing a customer sees (no webhook message). */
export function onlyLeaseExtended(events: readonly LogEvent[]): boolean {
  return events.length === 1 && events[0]!.type === 'order.lease_extended';
}
