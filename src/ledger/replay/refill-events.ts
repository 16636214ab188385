/**
 * The refill events, part of invariant (f) of `replayLedger`: a refill is
 * requested for a finished order within its service's refill window while
 * no other refill of the order is open, and moves forward from the status
 * it is in until completed or rejected. Refills move no money.
 */
import { isOpenRefill, isRefillStatus, refillMoveRefusal, refillRefusal, refillRefusalMessage } from '../lifecycle.js';
import { fail } from './finding.js';
import type { OpenOrder } from './open-orders.js';
import { isInt, type Raw } from './raw.js';
import type { ReplayState } from './replay-state.js';

/** refill.requested: opens refill `refillId` of the order, if the actor would. */
export function refillRequested(
  state: ReplayState,
  seq: number,
  id: number,
  orderId: string,
  order: OpenOrder,
  refillId: unknown,
  atMs: number,
  refused: (why: string) => never,
): void {
  if (!isInt(refillId) || refillId < 1) fail('lifecycle', seq, id, orderId, `refill.requested carries an invalid refill id ${String(refillId)}.`);
  const asked = { status: order.status, finishedAtMs: order.finishedAtMs, refill: state.openRefills.get(orderId) };
  const services = state.services.seen(order.service);
  const refusals = services.map((service) => refillRefusal(asked, service, atMs));
  if (!refusals.includes(null)) refused(refillRefusalMessage(refusals[0]!, order.status, services[0]?.refillDays ?? 0));
  state.openRefills.set(orderId, { id: refillId, status: 'pending', createdAtMs: atMs });
}

/**
 * refill.status: the actor moves a refill from the status the order's
 * record holds for it, and only while it is the order's open refill.
 */
export function refillMoved(state: ReplayState, seq: number, id: number, orderId: string, e: Raw): void {
  const refill = state.openRefills.get(orderId);
  const move = `refill ${String(e.refill)} moves from ${String(e.from)} to ${String(e.to)}`;
  if (refill === undefined || refill.id !== e.refill || refill.status !== e.from) {
    const open = refill === undefined ? 'the order has no open refill' : `the order's open refill is ${refill.id}, ${refill.status}`;
    fail('lifecycle', seq, id, orderId, `${move} but ${open}.`);
  }
  if (!isRefillStatus(e.to) || refillMoveRefusal(refill.status, e.to) !== null) {
    fail('lifecycle', seq, id, orderId, `${move}; refills move forward only and completed or rejected is final.`);
  }
  if (isOpenRefill(e.to)) refill.status = e.to;
  else state.openRefills.delete(orderId);
}
