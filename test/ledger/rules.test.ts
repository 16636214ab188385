/**
 * The money rules of src/ledger/rules.ts against concrete figures, worked
 * out by hand (micro-credits: 1 credit = 1,000,000), never against a second
 * copy of the rule.
 */
import { describe, expect, it } from 'vitest';
import {
  chargeDelivered,
  chargeFor,
  isOrderStatus,
  isUnlimited,
  ORDER_STATUSES,
  planPriceInr,
  refundFor,
  remainsRefusal,
  unitsOrdered,
  statusMoveRefusal,
} from '../../src/ledger/index.js';

describe('refundFor', () => {
  // 1,000 units at 0.0125 credits each: charged 12.5 credits = 12,500,000 micro.
  const order = { debit: 12_500_000, rate: 12_500 };

  it('canceled returns the whole debit', () => {
    expect(refundFor(order, 'canceled', null)).toBe(12_500_000);
  });

  it('partial returns remains × the rate the order was placed with', () => {
    expect(refundFor(order, 'partial', 400)).toBe(5_000_000);
    expect(refundFor(order, 'partial', 1)).toBe(12_500);
    expect(refundFor(order, 'partial', 999)).toBe(12_487_500);
  });

  it('completed and the moves before a final state return nothing', () => {
    for (const to of ['processing', 'in_progress', 'completed'] as const) expect(refundFor(order, to, null)).toBe(0);
  });

  it('an order billed under the unlimited plan (debit 0) gets nothing back, canceled or partial', () => {
    expect(refundFor({ debit: 0, rate: 12_500 }, 'canceled', null)).toBe(0);
    expect(refundFor({ debit: 0, rate: 12_500 }, 'partial', 400)).toBe(0);
  });

  it('a refund larger than the debit is a broken invariant, not a value', () => {
    expect(() => refundFor(order, 'partial', 1_001)).toThrow(/invariant/);
    expect(() => refundFor(order, 'partial', 1_001)).toThrow(/a partial refund \(remains × rate\) must not exceed the debit/);
  });

  it('the invariant bounds a refund by the debit itself: a refund of every unit (remains × rate = debit) is allowed', () => {
    expect(refundFor(order, 'partial', 1_000)).toBe(12_500_000);
  });

  it('a refund beyond the exact range is a broken invariant too, never a null refund', () => {
    // 2 × 9,007,199,254,740,991 micro-credits leaves the safe integers.
    expect(() => refundFor({ debit: Number.MAX_SAFE_INTEGER, rate: Number.MAX_SAFE_INTEGER }, 'partial', 2)).toThrow(/must not exceed the debit/);
  });
});

describe('isOrderStatus', () => {
  it('is true for the six statuses and nothing else', () => {
    for (const status of ['pending', 'processing', 'in_progress', 'completed', 'partial', 'canceled']) expect(isOrderStatus(status), status).toBe(true);
    for (const value of ['shipped', 'Pending', '', 'constructor', 0, null, undefined, ['pending']]) expect(isOrderStatus(value), String(value)).toBe(false);
  });
});

describe('statusMoveRefusal', () => {
  it('moves go strictly forward and may skip states', () => {
    expect(statusMoveRefusal('pending', 'processing')).toBeNull();
    expect(statusMoveRefusal('pending', 'completed')).toBeNull();
    expect(statusMoveRefusal('processing', 'canceled')).toBeNull();
    expect(statusMoveRefusal('in_progress', 'partial')).toBeNull();
    expect(statusMoveRefusal('in_progress', 'processing')).toBe('backwards');
    expect(statusMoveRefusal('processing', 'processing')).toBe('backwards');
  });

  it('a final order never moves again, not even to the status it has', () => {
    for (const from of ['completed', 'partial', 'canceled'] as const) {
      for (const to of ORDER_STATUSES) expect(statusMoveRefusal(from, to)).toBe('final');
    }
  });
});

describe('unitsOrdered', () => {
  it('is the quantity, times the runs of a drip-feed order', () => {
    expect(unitsOrdered({ quantity: 100 })).toBe(100);
    expect(unitsOrdered({ quantity: 100, extras: { runs: 5 } })).toBe(500);
  });
});

describe('remainsRefusal', () => {
  it('partial names 1 to units − 1 undelivered units; other moves name none', () => {
    expect(remainsRefusal(100, 'partial', 1)).toBeNull();
    expect(remainsRefusal(100, 'partial', 99)).toBeNull();
    for (const bad of [0, 100, -1, 1.5, null, '5']) expect(remainsRefusal(100, 'partial', bad)).toBe('partial-needs-remains');
    expect(remainsRefusal(100, 'completed', null)).toBeNull();
    expect(remainsRefusal(100, 'canceled', 3)).toBe('remains-only-on-partial');
  });
});

describe('chargeFor', () => {
  it('quantity × rate exactly, × runs for drip-feed', () => {
    expect(chargeFor(1_000, 12_500)).toBe(12_500_000);
    // 3 × 0.1 credits is 0.3 credits exactly, not 0.30000000000000004.
    expect(chargeFor(3, 100_000)).toBe(300_000);
    expect(chargeFor(500, 12_500, 4)).toBe(25_000_000);
  });

  it('refuses what would leave the exact integer range', () => {
    expect(chargeFor(2 ** 40, 2 ** 20)).toBeNull();
    expect(chargeFor(1_000_000, 1_000_000_000, 10_000)).toBeNull();
  });
});

describe('the API Unlimited plan', () => {
  it('costs 9,999 INR a month', () => {
    expect(planPriceInr(1)).toBe(9_999);
    expect(planPriceInr(12)).toBe(119_988);
  });

  it('covers moments strictly before its end', () => {
    expect(isUnlimited({ unlimitedExpiresMs: 1_000 }, 999)).toBe(true);
    expect(isUnlimited({ unlimitedExpiresMs: 1_000 }, 1_000)).toBe(false);
    expect(isUnlimited({ unlimitedExpiresMs: null }, 0)).toBe(false);
  });

  it('never covers a wallet without a plan, at any instant (a missing end is not read as time 0)', () => {
    expect(isUnlimited({ unlimitedExpiresMs: null }, -1)).toBe(false);
    expect(isUnlimited({ unlimitedExpiresMs: null }, Number.MIN_SAFE_INTEGER)).toBe(false);
  });
});

describe('chargeDelivered', () => {
  // 1,000 units at 0.0125 credits each: charged 12.5 credits = 12,500,000 micro.
  const order = { charge: 12_500_000, rate: 12_500, remains: null };

  it('is the whole charge before a final state and once completed', () => {
    for (const status of ['pending', 'processing', 'in_progress', 'completed'] as const) expect(chargeDelivered({ ...order, status }), status).toBe(12_500_000);
  });

  it('is nothing once canceled', () => {
    expect(chargeDelivered({ ...order, status: 'canceled' })).toBe(0);
  });

  it('is the charge less remains × rate once partial', () => {
    expect(chargeDelivered({ ...order, status: 'partial', remains: 400 })).toBe(7_500_000);
    expect(chargeDelivered({ ...order, status: 'partial', remains: 1 })).toBe(12_487_500);
    expect(chargeDelivered({ ...order, status: 'partial', remains: 1_000 })).toBe(0);
  });

  it('undelivered units worth more than the charge, or beyond the exact range, are a broken invariant', () => {
    const sentence = /^invariant: a partial order's remains × rate must not exceed its charge; got 1001$/;
    expect(() => chargeDelivered({ ...order, status: 'partial', remains: 1_001 })).toThrow(sentence);
    expect(() => chargeDelivered({ charge: Number.MAX_SAFE_INTEGER, rate: Number.MAX_SAFE_INTEGER, remains: 2, status: 'partial' })).toThrow(/must not exceed its charge; got 2$/);
  });
});
