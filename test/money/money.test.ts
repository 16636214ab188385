import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  addMicro,
  formatBig,
  formatMicro,
  microFromJson,
  MICRO_MAX,
  MICRO_PER_CREDIT,
  multiplyMicro,
  parseMicro,
} from '../../src/money/index.js';

const MAX = Number.MAX_SAFE_INTEGER;
const MAX_BIG = BigInt(MAX);

/** Reference: exact decimal rendering of a micro amount, via BigInt. */
function referenceFormat(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const whole = abs / 1_000_000n;
  const frac = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return (negative ? '-' : '') + whole.toString() + (frac === '' ? '' : '.' + frac);
}

/** Reference: the result a checked operation must give for an exact BigInt result. */
function fitOrNull(exact: bigint): number | null {
  return exact > MAX_BIG || exact < -MAX_BIG ? null : Number(exact);
}

/** Micro amounts, biased towards the edges of the safe range and towards small values. */
const microAmount = fc.oneof(
  fc.maxSafeInteger(),
  fc.integer({ min: -10_000_000, max: 10_000_000 }),
  fc.integer({ min: MAX - 2_000_000, max: MAX }),
  fc.integer({ min: -MAX, max: -MAX + 2_000_000 }),
);

describe('constants', () => {
  it('one credit is one million micro-credits and the ceiling is the largest safe integer', () => {
    expect(MICRO_PER_CREDIT).toBe(1_000_000);
    expect(MICRO_MAX).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('parseMicro / formatMicro', () => {
  it('round-trips every safe integer micro amount (property)', () => {
    fc.assert(
      fc.property(microAmount, (x) => {
        expect(parseMicro(formatMicro(x))).toBe(x);
      }),
      { numRuns: 2000 },
    );
  });

  it('formats every amount as the shortest exact decimal (property, BigInt reference)', () => {
    fc.assert(
      fc.property(microAmount, (x) => {
        expect(formatMicro(x)).toBe(referenceFormat(BigInt(x)));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    [0, '0'],
    [1, '0.000001'],
    [-1, '-0.000001'],
    [100_000, '0.1'],
    [300_000, '0.3'],
    [1_000_000, '1'],
    [1_500_000, '1.5'],
    [12_345_678, '12.345678'],
    [-12_000_000, '-12'],
    [999_999, '0.999999'],
    [1_000_000_000_000_000, '1000000000'],
    [1_000_000_000_000_001, '1000000000.000001'],
    [8_999_999_999_999_999, '8999999999.999999'],
    [MAX, '9007199254.740991'],
    [-MAX, '-9007199254.740991'],
  ])('formatMicro(%d) is %s and parses back', (micro, text) => {
    expect(formatMicro(micro)).toBe(text);
    expect(parseMicro(text)).toBe(micro);
  });

  it('parses any decimal with up to 6 places exactly (property, BigInt reference)', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.bigInt({ min: 0n, max: 9_007_199_254n }),
        fc.option(fc.stringMatching(/^\d{1,6}$/), { nil: undefined }),
        (negative, whole, frac) => {
          const text = (negative ? '-' : '') + whole.toString() + (frac === undefined ? '' : '.' + frac);
          const exact = (whole * 1_000_000n + BigInt((frac ?? '').padEnd(6, '0'))) * (negative ? -1n : 1n);
          expect(parseMicro(text)).toBe(fitOrNull(exact));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('accepts leading zeros and trailing zeros in the fraction', () => {
    expect(parseMicro('007.500000')).toBe(7_500_000);
    expect(parseMicro('0.100')).toBe(100_000);
    expect(parseMicro('-0')).toBe(0);
    expect(Object.is(parseMicro('-0'), -0)).toBe(false);
  });

  it('handles the wallet size the operator needs (1,000,000,000 credits) exactly', () => {
    expect(parseMicro('1000000000')).toBe(1e15);
    expect(parseMicro('1000000000.000001')).toBe(1e15 + 1);
    expect(formatMicro(parseMicro('999999999.999999')!)).toBe('999999999.999999');
  });

  it.each([
    '0.1234567', // 7 decimal places
    '1.0000001',
    '1e-7',
    '1E3',
    '1e6',
    '1 000',
    '1. 5',
    '1 .5',
    '- 1',
    ' 1',
    '1 ',
    '',
    '.',
    '.5',
    '1.',
    '+1',
    '--1',
    '0x10',
    '1_000',
    '1,5',
    'NaN',
    'Infinity',
    '-Infinity',
    '１', // full-width digit
    '9007199254.740992', // one micro beyond the safe range
    '-9007199254.740992',
    '99999999999999999', // 17 integer digits
  ])('parseMicro refuses %j', (text) => {
    expect(parseMicro(text)).toBeNull();
  });

  it('formatMicro refuses anything that is not a safe integer of micro-credits', () => {
    for (const bad of [0.5, NaN, Infinity, -Infinity, MAX + 1, 2 ** 60]) {
      expect(() => formatMicro(bad)).toThrow(/not a safe integer/);
    }
  });
});

describe('multiplyMicro', () => {
  it('0.1 × 3 is exactly 0.3', () => {
    const charge = multiplyMicro(3, parseMicro('0.1')!);
    expect(charge).toBe(300_000);
    expect(formatMicro(charge!)).toBe('0.3');
    // The float answer a naive implementation would give:
    expect(String(0.1 * 3)).not.toBe('0.3');
  });

  it('computes typical charges exactly', () => {
    expect(formatMicro(multiplyMicro(1000, parseMicro('0.001234')!)!)).toBe('1.234');
    expect(formatMicro(multiplyMicro(7, parseMicro('0.000001')!)!)).toBe('0.000007');
    expect(multiplyMicro(0, MAX)).toBe(0);
  });

  it('refuses a non-integer operand instead of returning an inexact amount', () => {
    expect(() => multiplyMicro(1.5, 2)).toThrow(/takes integers/);
    expect(() => multiplyMicro(2, 0.1)).toThrow(/takes integers/);
    expect(() => multiplyMicro(Number.NaN, 1)).toThrow(/takes integers/);
  });

  it('returns null instead of overflowing at the MAX_SAFE boundaries', () => {
    expect(multiplyMicro(1, MAX)).toBe(MAX);
    expect(multiplyMicro(MAX, 1)).toBe(MAX);
    expect(multiplyMicro(-1, MAX)).toBe(-MAX);
    expect(multiplyMicro(2, MAX)).toBeNull();
    expect(multiplyMicro(MAX, MAX)).toBeNull();
    expect(multiplyMicro(-2, MAX)).toBeNull();
    // 94906265² fits, 94906266² does not (MAX ≈ 9.007e15).
    expect(multiplyMicro(94_906_265, 94_906_265)).toBe(94_906_265 * 94_906_265);
    expect(multiplyMicro(94_906_266, 94_906_266)).toBeNull();
    // A product that is exactly MAX: 9007199254740991 = 6361 × 69431 × 20394401.
    expect(multiplyMicro(6361 * 69431, 20_394_401)).toBe(MAX);
    expect(multiplyMicro(6361 * 69431 + 1, 20_394_401)).toBeNull();
  });

  it('agrees with a BigInt reference for every pair of safe integers (property)', () => {
    fc.assert(
      fc.property(microAmount, microAmount, (q, r) => {
        expect(multiplyMicro(q, r)).toBe(fitOrNull(BigInt(q) * BigInt(r)));
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with a BigInt reference right at the overflow boundary (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX }), fc.integer({ min: -2, max: 2 }), fc.boolean(), (q, delta, neg) => {
        const r = Math.max(0, Math.floor(MAX / q) + delta);
        const rate = neg ? -r : r;
        const result = multiplyMicro(q, rate);
        expect(result).toBe(fitOrNull(BigInt(q) * BigInt(rate)));
        if (result !== null) expect(Number.isSafeInteger(result)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('addMicro', () => {
  it('returns null when the sum leaves the safe range', () => {
    expect(addMicro(MAX, 1)).toBeNull();
    expect(addMicro(-MAX, -1)).toBeNull();
    expect(addMicro(MAX, 0)).toBe(MAX);
    expect(addMicro(MAX, -MAX)).toBe(0);
    expect(addMicro(100_000, 200_000)).toBe(300_000);
  });

  it('agrees with a BigInt reference (property)', () => {
    fc.assert(
      fc.property(microAmount, microAmount, (a, b) => {
        expect(addMicro(a, b)).toBe(fitOrNull(BigInt(a) + BigInt(b)));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('microFromJson', () => {
  it('takes a JSON number at the decimal the client wrote: 0.1 → 100000', () => {
    expect(microFromJson(0.1)).toBe(100_000);
    expect(microFromJson(JSON.parse('0.1'))).toBe(100_000);
    expect(microFromJson(JSON.parse('0.3'))).toBe(300_000);
    expect(microFromJson(JSON.parse('1.000001'))).toBe(1_000_001);
    expect(microFromJson(JSON.parse('-2.5'))).toBe(-2_500_000);
    expect(microFromJson(JSON.parse('1000000000'))).toBe(1e15);
    expect(microFromJson(-0)).toBe(0);
  });

  it('accepts exact decimal strings, with the spaces around them left out', () => {
    expect(microFromJson(' 0.1 ')).toBe(100_000);
    expect(microFromJson('0.1')).toBe(100_000);
    expect(microFromJson('1000000000.000001')).toBe(1e15 + 1);
  });

  it('reads back exactly any decimal of up to 15 significant digits written as a JSON number (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }), (x) => {
        const json = formatMicro(x);
        expect(microFromJson(JSON.parse(json))).toBe(x);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['7 decimal places (number)', 0.1234567],
    ['7 decimal places (string)', '0.1234567'],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['1e-7', 1e-7],
    ['5e-7', 5e-7],
    ['the string 1e-7', '1e-7'],
    ['the string 1e3', '1e3'],
    ['1e21 (prints in exponent form)', 1e21],
    ['beyond the safe range', 9007199255],
    ['a space inside', '1 000'],
    ['a space inside the fraction', '1. 5'],
    ['a tab inside', '1\t5'],
    ['null', null],
    ['undefined', undefined],
    ['true', true],
    ['an object', { amount: 1 }],
    ['an array', [1]],
    ['a bigint', 1n],
    ['an empty string', ''],
  ])('refuses %s', (_label, value) => {
    expect(microFromJson(value)).toBeNull();
  });
});

describe('formatBig (ledger totals beyond the safe integers)', () => {
  it('renders the shortest exact decimal, keeping the zeros inside the fraction', () => {
    expect(formatBig(300_000n)).toBe('0.3');
    expect(formatBig(1_000_001n)).toBe('1.000001');
    expect(formatBig(1_050_000n)).toBe('1.05');
    expect(formatBig(7_000_000n)).toBe('7');
    expect(formatBig(0n)).toBe('0');
    expect(formatBig(10n ** 20n)).toBe('100000000000000');
    expect(formatBig(10n ** 20n + 1n)).toBe('100000000000000.000001');
  });

  it('renders negatives with one minus sign before the whole number', () => {
    expect(formatBig(-1_500_000n)).toBe('-1.5');
    expect(formatBig(-1n)).toBe('-0.000001');
    expect(formatBig(-(10n ** 20n))).toBe('-100000000000000');
  });
});
