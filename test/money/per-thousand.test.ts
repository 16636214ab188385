/**
 * Prices per 1,000 units: parsePer1000 turns an operator's quoted price
 * into the per-unit rate the ledger charges by, and formatPer1000 shows a
 * rate as that price. The expected rates are worked out here from the
 * price's digits (thousandths of a credit per 1,000 units are micro-credits
 * a unit), never with the code under test.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatPer1000, parsePer1000, PER_QUOTE_DIGITS, UNITS_PER_QUOTE } from '../../src/money/index.js';

/** "W.F" per 1,000 units as micro-credits a unit: the digits with F padded to three places, read as one integer. */
function plainRate(price: string): bigint {
  const [whole, frac = ''] = price.split('.');
  return BigInt(whole! + frac.padEnd(3, '0'));
}

describe('prices per 1,000 units', () => {
  it('quotes prices per 1,000 units, three decimal places at most', () => {
    expect(UNITS_PER_QUOTE).toBe(1000);
    expect(PER_QUOTE_DIGITS).toBe(3);
  });

  it('reads a price per 1,000 as micro-credits a unit, from a string or a JSON number', () => {
    expect(parsePer1000('1.5', 'price')).toEqual({ ok: true, rateMicro: 1500 });
    expect(parsePer1000(1.5, 'price')).toEqual({ ok: true, rateMicro: 1500 });
    expect(parsePer1000('0.001', 'price')).toEqual({ ok: true, rateMicro: 1 });
    expect(parsePer1000('0', 'price')).toEqual({ ok: true, rateMicro: 0 });
    expect(parsePer1000(12, 'price')).toEqual({ ok: true, rateMicro: 12000 });
    expect(parsePer1000(' 2.25 ', 'price')).toEqual({ ok: true, rateMicro: 2250 });
    expect(parsePer1000('1.5000000', 'price')).toEqual({ ok: true, rateMicro: 1500 });
    expect(parsePer1000('007.100', 'price')).toEqual({ ok: true, rateMicro: 7100 });
  });

  it('agrees with the digits for any price of up to three decimal places, shows the rate back as the price, and refuses one past the largest safe rate', () => {
    const price = fc.tuple(fc.bigInt({ min: 0n, max: 9_007_199_254_740n }), fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 3 }));
    fc.assert(
      fc.property(price, ([whole, thousandths, places]) => {
        const frac = String(thousandths).padStart(3, '0').slice(0, places);
        const text = places === 0 ? String(whole) : `${whole}.${frac}`;
        const expected = plainRate(text);
        const parsed = parsePer1000(text, 'price');
        if (expected > BigInt(Number.MAX_SAFE_INTEGER)) {
          // The largest wholes with a fraction of .992 and up pass the largest safe rate.
          expect(parsed).toEqual({ ok: false, message: `price ${text} is larger than the largest supported rate.` });
          return;
        }
        expect(parsed).toEqual({ ok: true, rateMicro: Number(expected) });
        const shown = formatPer1000(Number(expected));
        expect(plainRate(shown)).toBe(expected);
      }),
    );
  });

  it('refuses a price finer than money counts, naming the per-unit amount, and never rounds it', () => {
    expect(parsePer1000('1.2345', 'price')).toEqual({
      ok: false,
      message: 'price 1.2345 is 0.0012345 credits a unit, finer than money counts (6 decimal places); give price with at most 3 decimal places.',
    });
    expect(parsePer1000('12345.6789', 'rate_per_1000')).toEqual({
      ok: false,
      message: 'rate_per_1000 12345.6789 is 12.3456789 credits a unit, finer than money counts (6 decimal places); give rate_per_1000 with at most 3 decimal places.',
    });
    expect(parsePer1000(0.0001, 'price')).toMatchObject({ ok: false });
  });

  it('names the per-unit amount of a refused price without leading zeros and keeps the zeros inside it', () => {
    expect(parsePer1000('0012345.6789', 'price')).toEqual({
      ok: false,
      message: 'price 0012345.6789 is 12.3456789 credits a unit, finer than money counts (6 decimal places); give price with at most 3 decimal places.',
    });
    expect(parsePer1000('100000.1234', 'price')).toEqual({
      ok: false,
      message: 'price 100000.1234 is 100.0001234 credits a unit, finer than money counts (6 decimal places); give price with at most 3 decimal places.',
    });
  });

  it('refuses what is not a non-negative decimal number', () => {
    const sentence = 'price must be a non-negative decimal number of credits per 1,000 units, such as 1.5.';
    for (const value of ['-1', -1, '', '1.', '.5', '1e3', 'abc', '1,5', Number.NaN, Number.POSITIVE_INFINITY, null, undefined, true, {}, [1]]) {
      expect(parsePer1000(value, 'price'), String(value)).toEqual({ ok: false, message: sentence });
    }
  });

  it('refuses a price whose rate passes the largest safe integer, and takes the largest that does not', () => {
    const largest = BigInt(Number.MAX_SAFE_INTEGER); // 9007199254740991 micro-credits a unit
    const atLimit = `${largest / 1000n}.${String(largest % 1000n).padStart(3, '0')}`;
    expect(parsePer1000(atLimit, 'price')).toEqual({ ok: true, rateMicro: Number.MAX_SAFE_INTEGER });
    const past = `${largest / 1000n}.${String((largest % 1000n) + 1n).padStart(3, '0')}`;
    expect(parsePer1000(past, 'price')).toEqual({ ok: false, message: `price ${past} is larger than the largest supported rate.` });
  });

  it('shows a rate as its price per 1,000 units', () => {
    expect(formatPer1000(1500)).toBe('1.5');
    expect(formatPer1000(1)).toBe('0.001');
    expect(formatPer1000(0)).toBe('0');
    expect(formatPer1000(12000)).toBe('12');
  });
});
