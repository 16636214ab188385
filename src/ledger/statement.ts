/**
 * An account's statement: its money movements, read from the log. A wallet
 * opens at zero and its balance moves only through three events (the
 * replay's invariant (a)): an operator's adjustment, an order's debit and a
 * refund in the move to a final status; each carries the balance it leaves.
 * The statement lists those, the opening of the account and the grants of
 * the Unlimited plan (which cost no credits but change what orders cost),
 * so its last balance is the wallet's.
 */
import type { LogEvent } from './records.js';

export type StatementKind = 'account_opened' | 'top_up' | 'deduction' | 'order' | 'refund' | 'partial_refund' | 'plan_grant';

export interface StatementLine {
  /** The event's position in the log. */
  seq: number;
  atMs: number;
  kind: StatementKind;
  /** Signed micro-credits: what the movement added to the wallet (negative: took). */
  amount: number;
  /**
   * The wallet's balance after the movement, in micro-credits. A plan grant
   * carries no balance and leaves the one before it: null when the walk
   * has seen no earlier movement (a statement that starts at a time).
   */
  balance: number | null;
  order: string | null;
  /** The order's number when the event carries it; otherwise the caller looks it up. */
  number: number | null;
  /** The operator's reason, or what the event records about the movement. */
  reason: string | null;
}

/** The statement line of `event` for `account`, or null when the event moves none of its money. */
export function statementLine(seq: number, event: LogEvent, account: number, balanceBefore: number | null): StatementLine | null {
  if (!('account' in event) || event.account !== account) return null;
  const line = { seq, atMs: event.atMs, order: null, number: null, reason: null };
  switch (event.type) {
    case 'account.created':
      return { ...line, kind: 'account_opened', amount: event.credits, balance: event.credits };
    case 'credits.adjusted':
      return { ...line, kind: event.amount >= 0 ? 'top_up' : 'deduction', amount: event.amount, balance: event.balance, reason: event.reason };
    case 'order.placed':
      return {
        ...line,
        kind: 'order',
        amount: -event.debit,
        balance: event.balance,
        order: event.order,
        number: event.number ?? null,
        reason: event.debit === 0 && event.charge > 0 ? 'billed under the Unlimited plan' : null,
      };
    case 'order.status':
      if (event.to !== 'canceled' && event.to !== 'partial') return null;
      return { ...line, kind: event.to === 'canceled' ? 'refund' : 'partial_refund', amount: event.refund, balance: event.balance, order: event.order, reason: event.reason ?? null };
    case 'plan.granted': {
      const months = `${event.months} month${event.months === 1 ? '' : 's'}`;
      return { ...line, kind: 'plan_grant', amount: 0, balance: balanceBefore, reason: event.reason ?? `${months} of the Unlimited plan (${event.priceInr} INR)` };
    }
    default:
      return null;
  }
}
