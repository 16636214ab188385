/**
 * An account's statement line for each event of the log (statementLine):
 * which events move the account's money, the signed amount and balance each
 * line shows, and the reasons the statement prints. Expected lines are
 * written out in full from the event's fields.
 */
import { describe, expect, it } from 'vitest';
import { statementLine, type LogEvent } from '../../src/ledger/index.js';

const ACCOUNT = 7;
const AT_MS = 1_800_000_000_000;

type Placed = Extract<LogEvent, { type: 'order.placed' }>;
type StatusMove = Extract<LogEvent, { type: 'order.status' }>;

function placed(fields: Partial<Placed>): Placed {
  return {
    type: 'order.placed',
    atMs: AT_MS,
    account: ACCOUNT,
    order: 'ord-1',
    service: 3,
    quantity: 100,
    rate: 25,
    charge: 2_500,
    debit: 2_500,
    balance: 97_500,
    channel: 'api',
    idempotencyKey: null,
    ...fields,
  };
}

function statusMove(fields: Partial<StatusMove>): StatusMove {
  return { type: 'order.status', atMs: AT_MS, account: ACCOUNT, order: 'ord-1', from: 'in_progress', to: 'completed', remains: null, refund: 0, balance: 97_500, ...fields };
}

describe('statement lines', () => {
  it('opens the account with its starting credits as the first balance', () => {
    const event: LogEvent = { type: 'account.created', atMs: AT_MS, account: ACCOUNT, name: 'reseller', credits: 100_000, rateLimitPerMinute: 60 };
    expect(statementLine(4, event, ACCOUNT, null)).toStrictEqual({
      seq: 4,
      atMs: AT_MS,
      kind: 'account_opened',
      amount: 100_000,
      balance: 100_000,
      order: null,
      number: null,
      reason: null,
    });
  });

  it("shows an operator's adjustment as a top-up when it adds or is zero and as a deduction when it takes, with its reason", () => {
    const adjusted = (amount: number, balance: number): LogEvent => ({ type: 'credits.adjusted', atMs: AT_MS + 1, account: ACCOUNT, amount, reason: 'bank transfer 42', balance });
    const line = { seq: 9, atMs: AT_MS + 1, order: null, number: null, reason: 'bank transfer 42' };
    expect(statementLine(9, adjusted(5_000, 105_000), ACCOUNT, 100_000)).toStrictEqual({ ...line, kind: 'top_up', amount: 5_000, balance: 105_000 });
    expect(statementLine(9, adjusted(0, 100_000), ACCOUNT, 100_000)).toStrictEqual({ ...line, kind: 'top_up', amount: 0, balance: 100_000 });
    expect(statementLine(9, adjusted(-1, 99_999), ACCOUNT, 100_000)).toStrictEqual({ ...line, kind: 'deduction', amount: -1, balance: 99_999 });
  });

  it("shows an order's debit as a negative amount with the order's id and number", () => {
    expect(statementLine(12, placed({ number: 31 }), ACCOUNT, 100_000)).toStrictEqual({
      seq: 12,
      atMs: AT_MS,
      kind: 'order',
      amount: -2_500,
      balance: 97_500,
      order: 'ord-1',
      number: 31,
      reason: null,
    });
  });

  it('leaves the number to the caller when the event carries none', () => {
    expect(statementLine(12, placed({}), ACCOUNT, 100_000)?.number).toBeNull();
  });

  it('says an order was billed under the Unlimited plan when it was charged but not debited, and only then', () => {
    const unlimited = statementLine(12, placed({ debit: 0, balance: 100_000 }), ACCOUNT, 100_000);
    expect(unlimited).toMatchObject({ kind: 'order', balance: 100_000, order: 'ord-1', reason: 'billed under the Unlimited plan' });
    expect(unlimited?.amount === 0).toBe(true);
    expect(statementLine(12, placed({ rate: 0, charge: 0, debit: 0, balance: 100_000 }), ACCOUNT, 100_000)?.reason).toBeNull();
    expect(statementLine(12, placed({ charge: 1, debit: 1, rate: 1, quantity: 1, balance: 99_999 }), ACCOUNT, 100_000)?.reason).toBeNull();
  });

  it('shows a cancel as a refund and a partial as a partial refund, with the order and the reason when one was given', () => {
    const line = { seq: 20, atMs: AT_MS, order: 'ord-1', number: null };
    expect(statementLine(20, statusMove({ from: 'pending', to: 'canceled', refund: 2_500, balance: 100_000 }), ACCOUNT, 97_500)).toStrictEqual({
      ...line,
      kind: 'refund',
      amount: 2_500,
      balance: 100_000,
      reason: null,
    });
    expect(statementLine(20, statusMove({ to: 'partial', remains: 40, refund: 1_000, balance: 98_500, reason: 'supplier stopped' }), ACCOUNT, 97_500)).toStrictEqual({
      ...line,
      kind: 'partial_refund',
      amount: 1_000,
      balance: 98_500,
      reason: 'supplier stopped',
    });
  });

  it('lists no line for a status move that returns nothing', () => {
    for (const to of ['processing', 'in_progress', 'completed'] as const) {
      expect(statementLine(20, statusMove({ to }), ACCOUNT, 97_500), to).toBeNull();
    }
  });

  it('shows a plan grant as moving nothing, at the balance before it, with its months and price or the reason given', () => {
    const grant = (months: number, reason?: string): LogEvent => ({
      type: 'plan.granted',
      atMs: AT_MS,
      account: ACCOUNT,
      months,
      priceInr: months * 9_999,
      expiresMs: AT_MS + 1,
      ...(reason === undefined ? {} : { reason }),
    });
    const line = { seq: 30, atMs: AT_MS, kind: 'plan_grant', amount: 0, order: null, number: null };
    expect(statementLine(30, grant(1), ACCOUNT, 97_500)).toStrictEqual({ ...line, balance: 97_500, reason: '1 month of the Unlimited plan (9999 INR)' });
    expect(statementLine(30, grant(3), ACCOUNT, null)).toStrictEqual({ ...line, balance: null, reason: '3 months of the Unlimited plan (29997 INR)' });
    expect(statementLine(30, grant(2, 'promotion'), ACCOUNT, 5)).toStrictEqual({ ...line, balance: 5, reason: 'promotion' });
  });

  it("lists nothing of another account's movements", () => {
    expect(statementLine(1, placed({ account: ACCOUNT + 1 }), ACCOUNT, 100_000)).toBeNull();
    expect(statementLine(1, statusMove({ account: ACCOUNT + 1, to: 'canceled', refund: 2_500 }), ACCOUNT, 100_000)).toBeNull();
  });

  it('lists nothing for events that move no money or belong to no account', () => {
    const events: LogEvent[] = [
      { type: 'secret.rotated', atMs: AT_MS, account: ACCOUNT },
      { type: 'order.progress', atMs: AT_MS, account: ACCOUNT, order: 'ord-1', startCount: 10, remains: 5 },
      { type: 'account.updated', atMs: AT_MS, account: ACCOUNT, banned: true },
      {
        type: 'service.saved',
        atMs: AT_MS,
        service: { id: 3, platform: 'x', name: 'likes', rate: 25, min: 1, max: 10, enabled: true, category: '', type: 'Default', refill: false, refillDays: 30, cancel: false, dripfeed: false, description: '' },
      },
    ];
    for (const event of events) expect(statementLine(1, event, ACCOUNT, 100_000), event.type).toBeNull();
  });
});
