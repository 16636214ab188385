/**
 * The events that open a wallet and move its money outside orders, and the
 * balance check every money move goes through: never below zero, always the
 * balance the event carries.
 */
import { describe, expect, it } from 'vitest';
import { planExpiryAfter, planPriceInr } from '../../../src/ledger/index.js';
import { PLAN_MONTHS_MAX } from '../../../src/ledger/limits.js';
import { MS_PER_DAY } from '../../../src/platform/units.js';
import { accountCreated, creditsAdjusted, moveBalance, planGranted } from '../../../src/ledger/replay/account-events.js';
import type { AccountState } from '../../../src/ledger/replay/replay-state.js';
import { Ledger } from '../../helpers/ledger.js';
import { findingOf, replayStateOf } from '../../helpers/ledger-image.js';

const account = (balance = 0, unlimitedExpiresMs: number | null = null): AccountState => ({ balance, unlimitedExpiresMs, hasWallet: false });

describe('account.created', () => {
  it('opens an empty wallet and counts the account', () => {
    const state = replayStateOf(new Ledger());
    accountCreated(state, 1, 7, { credits: 0 });
    expect(state.accounts.get(7)).toEqual(account());
    expect(state.counts.accounts).toBe(1);
  });

  it('refuses a second opening and a wallet opened with credit', () => {
    const state = replayStateOf(new Ledger());
    accountCreated(state, 1, 7, { credits: 0 });
    expect(findingOf(() => accountCreated(state, 2, 7, { credits: 0 })).sentence).toMatch(/seq 2 \(account 7\): account.created opens an account that was already opened/);
    expect(findingOf(() => accountCreated(state, 3, 8, { credits: 5 })).sentence).toMatch(/opens the wallet with 0.000005 credits; an account must open with 0/);
  });
});

describe('credits.adjusted', () => {
  it('adds its signed amount to the balance and to the credited total', () => {
    const state = replayStateOf(new Ledger());
    const wallet = account(1_000_000);
    creditsAdjusted(state, 4, 1, wallet, { amount: -400_000, balance: 600_000 });
    expect(wallet.balance).toBe(600_000);
    expect(state.totals.credited).toBe(-400_000n);
  });

  it('refuses an amount that is not whole micro-credits', () => {
    expect(findingOf(() => creditsAdjusted(replayStateOf(new Ledger()), 4, 1, account(), { amount: 0.5, balance: 0.5 }))).toMatchObject({ invariant: 'balance', seq: 4, account: 1 });
  });
});

describe('the balance check of every money move', () => {
  it('returns the new balance when the event carries it', () => {
    expect(moveBalance(1, 1, null, account(5), -5, 0, () => 'x')).toBe(0);
  });

  it('refuses a balance below zero, one the event does not carry, and one beyond the exact range', () => {
    expect(findingOf(() => moveBalance(3, 1, 'o1', account(5), -6, -1, () => 'order.placed debiting 6')).sentence).toBe(
      'Balance replay failed at seq 3 (account 1, order o1): order.placed debiting 6 takes the balance of 0.000005 credits below zero, to -0.000001 credits.',
    );
    expect(findingOf(() => moveBalance(3, 1, null, account(5), 1, 7, () => 'x')).sentence).toMatch(/leaves a replayed balance of 0.000006 credits but the event records 0.000007 credits/);
    expect(findingOf(() => moveBalance(3, 1, null, account(Number.MAX_SAFE_INTEGER), 1, 0, () => 'x')).sentence).toMatch(/out of the exact range/);
  });
});

describe('plan.granted', () => {
  const atMs = 1_700_000_000_000;

  it('accepts the grant the actor makes, and the wallet gets its window', () => {
    const wallet = account();
    const expiresMs = planExpiryAfter(atMs, null, 2);
    planGranted(5, 1, wallet, { months: 2, atMs, priceInr: planPriceInr(2), expiresMs });
    expect(wallet.unlimitedExpiresMs).toBe(expiresMs);
  });

  it('a grant extends the window from its end when that is later than the grant', () => {
    const wallet = account(0, atMs + 10 * MS_PER_DAY);
    const expiresMs = planExpiryAfter(atMs, wallet.unlimitedExpiresMs, 1);
    planGranted(5, 1, wallet, { months: 1, atMs, priceInr: planPriceInr(1), expiresMs });
    expect(wallet.unlimitedExpiresMs).toBe(expiresMs);
  });

  it('a grant on the 31st ends on the last day of the next month, and the end Date overflow gave before that clamp is accepted too', () => {
    const grantMs = Date.UTC(2026, 0, 31, 12, 0, 0);
    for (const expiresMs of [Date.UTC(2026, 1, 28, 12, 0, 0), Date.UTC(2026, 2, 3, 12, 0, 0)]) {
      const wallet = account();
      planGranted(5, 1, wallet, { months: 1, atMs: grantMs, priceInr: planPriceInr(1), expiresMs });
      expect(wallet.unlimitedExpiresMs).toBe(expiresMs);
    }
    expect(findingOf(() => planGranted(5, 1, account(), { months: 1, atMs: grantMs, priceInr: planPriceInr(1), expiresMs: Date.UTC(2026, 2, 1, 12, 0, 0) })).sentence).toBe(
      'Balance replay failed at seq 5 (account 1): plan.granted ends the window at 2026-03-01T12:00:00.000Z but 1 months from 2026-01-31T12:00:00.000Z end at 2026-02-28T12:00:00.000Z.',
    );
  });

  it('refuses a month count, a price or an end the actor would not grant', () => {
    const expiresMs = planExpiryAfter(atMs, null, 1);
    expect(findingOf(() => planGranted(5, 1, account(), { months: 0, atMs, priceInr: 0, expiresMs })).sentence).toMatch(/grants 0 months; a grant is a whole number of months from 1 to/);
    expect(findingOf(() => planGranted(5, 1, account(), { months: 1, atMs, priceInr: 1, expiresMs })).sentence).toMatch(/prices 1 months at 1 INR but the plan costs 9999 INR/);
    expect(findingOf(() => planGranted(5, 1, account(), { months: 1, atMs, priceInr: planPriceInr(1), expiresMs: expiresMs + 1 })).sentence).toMatch(/plan.granted ends the window at/);
  });
});

describe('the sentences of refused account events', () => {
  const atMs = 1_700_000_000_000;

  it('name the balance replay, the seq and the account', () => {
    const state = replayStateOf(new Ledger());
    accountCreated(state, 1, 7, { credits: 0 });
    expect(findingOf(() => accountCreated(state, 2, 7, { credits: 0 })).sentence).toBe('Balance replay failed at seq 2 (account 7): account.created opens an account that was already opened earlier in the log.');
    expect(findingOf(() => creditsAdjusted(state, 4, 1, account(), { amount: 0.5, balance: 0.5 })).sentence).toBe(
      'Balance replay failed at seq 4 (account 1): credits.adjusted carries an invalid amount 0.5 (not a whole number of micro-credits).',
    );
    expect(findingOf(() => moveBalance(3, 1, null, account(Number.MAX_SAFE_INTEGER), 1, 0, () => 'credits.adjusted of 0.000001 credits')).sentence).toBe(
      'Balance replay failed at seq 3 (account 1): credits.adjusted of 0.000001 credits takes the balance of 9007199254.740991 credits out of the exact range.',
    );
  });

  it(`grants up to ${PLAN_MONTHS_MAX} months, not one more, and only at a valid time`, () => {
    const wallet = account();
    const expiresMs = planExpiryAfter(atMs, null, PLAN_MONTHS_MAX);
    planGranted(5, 1, wallet, { months: PLAN_MONTHS_MAX, atMs, priceInr: planPriceInr(PLAN_MONTHS_MAX), expiresMs });
    expect(wallet.unlimitedExpiresMs).toBe(expiresMs);
    const over = PLAN_MONTHS_MAX + 1;
    expect(findingOf(() => planGranted(5, 1, account(), { months: over, atMs, priceInr: planPriceInr(over), expiresMs })).sentence).toBe(
      `Balance replay failed at seq 5 (account 1): plan.granted grants ${over} months; a grant is a whole number of months from 1 to ${PLAN_MONTHS_MAX}.`,
    );
    expect(findingOf(() => planGranted(5, 1, account(), { months: 1, atMs: 'soon', priceInr: planPriceInr(1), expiresMs })).sentence).toBe(
      'Balance replay failed at seq 5 (account 1): plan.granted carries an invalid time (soon).',
    );
  });
});
