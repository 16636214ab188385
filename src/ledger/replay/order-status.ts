/**
 * order.status, invariant (d) of `replayLedger`: an order's status only
 * moves forward, a final state never moves again, remains is set exactly on
 * a move to partial, and the refund is the one due (the debit on canceled,
 * remains × rate on partial, 0 otherwise), once, in the same event.
 */
import { formatBig } from '../../money/index.js';
import { FINAL_STATUSES, isOrderStatus, refundFor, remainsRefusal, statusMoveRefusal, unitsOrdered } from '../rules.js';
import { moveBalance } from './account-events.js';
import { leaseOfMove } from './lease-events.js';
import { fail } from './finding.js';
import { isInt, type Raw } from './raw.js';
import type { AccountState, ReplayState } from './replay-state.js';
import { credits } from './wording.js';

/** order.status: a move of an order, with its refund. */
export function orderStatus(state: ReplayState, seq: number, id: number, account: AccountState, e: Raw): void {
  const orderId = e.order;
  if (typeof orderId !== 'string') fail('order-status', seq, id, null, 'order.status does not carry an order id.');
  const order = state.orders.find(orderId);
  if (order === undefined) fail('order-status', seq, id, orderId, 'order.status moves an order that no earlier order.placed created.');
  if (order.account !== id) fail('order-status', seq, id, orderId, `order.status names account ${id} but the order belongs to account ${order.account}.`);
  const to = e.to;
  if (!isOrderStatus(to)) fail('order-status', seq, id, orderId, `order.status moves to an unknown status ${JSON.stringify(to)}.`);
  const toStatus = to;
  const moveRefusal = statusMoveRefusal(order.status, toStatus);
  if (moveRefusal === 'final') {
    fail('order-status', seq, id, orderId, `the order is already ${order.status}, a final state, and cannot move again (here to ${toStatus}).`);
  }
  if (e.from !== order.status) {
    fail('order-status', seq, id, orderId, `order.status says it moves from ${String(e.from)} but the order is ${order.status}.`);
  }
  if (moveRefusal === 'backwards') {
    fail('order-status', seq, id, orderId, `the order moves backwards or sideways, from ${order.status} to ${toStatus}.`);
  }
  const remains = e.remains;
  const remainsProblem = remainsRefusal(unitsOrdered(order), toStatus, remains);
  if (remainsProblem === 'partial-needs-remains') {
    fail('order-status', seq, id, orderId, `a partial order needs remains from 1 to ${unitsOrdered(order) - 1}, not ${String(remains)}.`);
  }
  if (remainsProblem === 'remains-only-on-partial') {
    fail('order-status', seq, id, orderId, `remains is set (${String(remains)}) on a move to ${toStatus}; only partial carries it.`);
  }
  const expectedRefund = BigInt(refundFor(order, toStatus, remains as number | null));
  const refund = e.refund;
  if (!isInt(refund) || BigInt(refund) !== expectedRefund) {
    fail(
      'order-status',
      seq,
      id,
      orderId,
      `the move to ${toStatus} refunds ${credits(refund)} but should refund ${formatBig(expectedRefund)} credits (debit ${credits(order.debit)}).`,
    );
  }
  leaseOfMove(state, seq, id, orderId, order, toStatus, e);
  account.balance = moveBalance(seq, id, orderId, account, refund, e.balance, () => `order.status to ${toStatus} refunding ${credits(refund)}`);
  state.totals.refunded += BigInt(refund);
  state.statuses[order.status]--;
  state.statuses[toStatus]++;
  order.status = toStatus;
  // Stryker disable next-line ConditionalExpression: equivalent: remainsRefusal above has required remains to be null on every move but partial
  order.remains = toStatus === 'partial' ? (remains as number) : null;
  if (FINAL_STATUSES.has(toStatus)) {
    if (isInt(e.atMs)) order.finishedAtMs = e.atMs;
    // A final move resolves an open cancel request, as the actor's does.
    state.cancelRequests.delete(orderId);
  }
  state.orders.update(orderId, order);
}
