/**
 * The checks a wallet row and an order row pass before they are written and
 * when they are read back (checkWallet, checkOrder): each rule at its
 * boundary, and the invariant each broken rule names.
 */
import { describe, expect, it } from 'vitest';
import { checkOrder, checkWallet, type WalletRecord } from '../../src/ledger/index.js';
import { ORDER } from './order-fixture.js';

const WALLET: WalletRecord = { id: 1, credits: 0, banned: false, rateLimitPerMinute: 1, unlimitedExpiresMs: null };

/** The start of the InvariantError a broken rule throws: its message, then the row. */
function broken(message: string): RegExp {
  return new RegExp(`^invariant: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; got \\{`);
}

describe('a wallet row', () => {
  it('passes with the smallest id, credits and rate limit it may have, and is returned as it is', () => {
    expect(checkWallet(WALLET)).toBe(WALLET);
  });

  it('must have a positive whole id', () => {
    for (const id of [0, -1, 1.5, Number.NaN]) {
      expect(() => checkWallet({ ...WALLET, id }), String(id)).toThrow(broken('a wallet id must be a positive safe integer'));
    }
  });

  it('must hold whole, non-negative credits', () => {
    for (const credits of [-1, 0.5, 2 ** 53]) {
      expect(() => checkWallet({ ...WALLET, credits }), String(credits)).toThrow(broken('wallet credits must be a non-negative safe integer'));
    }
  });

  it('must have a whole rate limit of at least one a minute', () => {
    for (const rateLimitPerMinute of [0, -5, 1.5]) {
      expect(() => checkWallet({ ...WALLET, rateLimitPerMinute }), String(rateLimitPerMinute)).toThrow(broken('a wallet rate limit must be a positive safe integer'));
    }
  });
});

describe('an order row', () => {
  const SHAPE = 'an order must have a string id and a safe-integer charge and debit';

  it('passes when debited its charge, or nothing under the Unlimited plan, and is returned as it is', () => {
    expect(checkOrder(ORDER)).toBe(ORDER);
    const unlimited = { ...ORDER, debit: 0, unlimited: true, number: 1 };
    expect(checkOrder(unlimited)).toBe(unlimited);
  });

  it('must have a string id and whole charge and debit', () => {
    expect(() => checkOrder({ ...ORDER, id: 7 as unknown as string, debit: 0 })).toThrow(broken(SHAPE));
    expect(() => checkOrder({ ...ORDER, charge: 2_500.5, debit: 0 })).toThrow(broken(SHAPE));
    expect(() => checkOrder({ ...ORDER, charge: 2_500.5, debit: 2_500.5 })).toThrow(broken(SHAPE));
    expect(() => checkOrder({ ...ORDER, debit: 0.5 })).toThrow(broken(SHAPE));
  });

  it('must be debited either its whole charge or nothing', () => {
    for (const debit of [1, 2_499, 2_501]) {
      expect(() => checkOrder({ ...ORDER, debit }), String(debit)).toThrow(broken("an order's debit must be 0 or its charge"));
    }
  });

  it('has a whole public number from 1 when it has one', () => {
    expect(checkOrder({ ...ORDER, number: 1 }).number).toBe(1);
    for (const number of [0, -1, 1.5]) {
      expect(() => checkOrder({ ...ORDER, number }), String(number)).toThrow(broken("an order's number must be a positive safe integer"));
    }
  });
});
