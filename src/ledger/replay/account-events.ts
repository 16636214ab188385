/**
 * The events that open a wallet and move its money outside orders
 * (account.created, credits.adjusted, plan.granted), and the balance check
 * every money move goes through (invariant (a) of `replayLedger`).
 */
import { PLAN_MONTHS_MAX } from '../limits.js';
import { planExpiryAfter, planExpiryAfterBeforeClamp, planPriceInr } from '../rules.js';
import { fail } from './finding.js';
import { isInt, type Raw } from './raw.js';
import type { AccountState, ReplayState } from './replay-state.js';
import { credits, instant } from './wording.js';

/** account.created: a new account, opening empty. */
export function accountCreated(state: ReplayState, seq: number, id: number, e: Raw): void {
  if (state.accounts.has(id)) fail('balance', seq, id, null, 'account.created opens an account that was already opened earlier in the log.');
  // Money reaches a wallet only through logged adjustments and refunds, so
  // an account opens empty; anything else would be credit with no reason.
  if (e.credits !== 0) fail('balance', seq, id, null, `account.created opens the wallet with ${credits(e.credits)}; an account must open with 0.`);
  state.accounts.set(id, { balance: 0, unlimitedExpiresMs: null, hasWallet: false });
  state.counts.accounts++;
}

/** credits.adjusted: the operator's signed change to a balance. */
export function creditsAdjusted(state: ReplayState, seq: number, id: number, account: AccountState, e: Raw): void {
  if (!isInt(e.amount)) fail('balance', seq, id, null, `credits.adjusted carries an invalid amount ${credits(e.amount)}.`);
  account.balance = moveBalance(seq, id, null, account, e.amount, e.balance, () => `credits.adjusted of ${credits(e.amount)}`);
  state.totals.credited += BigInt(e.amount);
}

/**
 * plan.granted, as the actor makes it (decideGrant): 1 to PLAN_MONTHS_MAX
 * months at planPriceInr, the window ending where planExpiryAfter puts it
 * from the grant's time and the window the account had before it.
 */
export function planGranted(seq: number, id: number, account: AccountState, e: Raw): void {
  const { months, atMs, expiresMs } = e;
  if (!isInt(months) || months < 1 || months > PLAN_MONTHS_MAX) {
    fail('balance', seq, id, null, `plan.granted grants ${String(months)} months; a grant is a whole number of months from 1 to ${PLAN_MONTHS_MAX}.`);
  }
  if (!isInt(atMs)) fail('balance', seq, id, null, `plan.granted carries an invalid time (${String(atMs)}).`);
  if (e.priceInr !== planPriceInr(months)) {
    fail('balance', seq, id, null, `plan.granted prices ${months} months at ${String(e.priceInr)} INR but the plan costs ${planPriceInr(months)} INR.`);
  }
  const expected = planExpiryAfter(atMs, account.unlimitedExpiresMs, months);
  if (expiresMs !== expected && expiresMs !== planExpiryAfterBeforeClamp(atMs, account.unlimitedExpiresMs, months)) {
    fail(
      'balance',
      seq,
      id,
      null,
      `plan.granted ends the window at ${instant(expiresMs)} but ${months} months from ${instant(Math.max(atMs, account.unlimitedExpiresMs ?? 0))} end at ${instant(expected)}.`,
    );
  }
  // The window the wallet got is the logged one (either rule's).
  account.unlimitedExpiresMs = expiresMs as number;
}

/**
 * Applies a signed change to a balance and checks (a): never negative,
 * equal to the balance the event carries. Returns the new balance. `what`
 * describes the event and is only called on failure (formatting money per
 * event would double the cost of a replay).
 */
export function moveBalance(seq: number, id: number, orderId: string | null, account: AccountState, delta: number, carried: unknown, what: () => string): number {
  const next = account.balance + delta;
  if (!isInt(next)) fail('balance', seq, id, orderId, `${what()} takes the balance of ${credits(account.balance)} out of the exact range.`);
  if (next < 0) {
    fail('balance', seq, id, orderId, `${what()} takes the balance of ${credits(account.balance)} below zero, to ${credits(next)}.`);
  }
  if (carried !== next) {
    fail('balance', seq, id, orderId, `${what()} leaves a replayed balance of ${credits(next)} but the event records ${credits(carried)}.`);
  }
  return next;
}
