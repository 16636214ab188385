/**
 * How the replay reads a stored value loosely: a record as it is, anything
 * else (null, a string, a number) as an empty record, so that reading a
 * field of a damaged value never throws.
 */
import { describe, expect, it } from 'vitest';
import { asRaw, isInt } from '../../../src/ledger/replay/raw.js';

describe('asRaw', () => {
  it('gives a record back as it is', () => {
    const record = { account: 1 };
    expect(asRaw(record)).toBe(record);
  });

  it('reads null, a string and a number as an empty record', () => {
    for (const value of [null, undefined, 'order', 5]) expect(asRaw(value)).toEqual({});
  });
});

describe('isInt', () => {
  it('takes safe integers only', () => {
    expect([0, -3, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 1.5, '1', 1n].map(isInt)).toEqual([true, true, true, false, false, false, false]);
  });
});
