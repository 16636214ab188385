/**
 * How findings quote values: exact decimal credits, ISO instants, and the
 * raw value whenever the log holds something of another kind, so reporting
 * a malformed event never throws.
 */
import { describe, expect, it } from 'vitest';
import { credits, instant, planWindow, shown } from '../../../src/ledger/replay/wording.js';

describe('quoting values in a finding', () => {
  it('credits are exact decimals of micro-credits, or the raw value when not whole micro-credits', () => {
    expect(credits(500_001)).toBe('0.500001 credits');
    expect(credits(-3_500_000)).toBe('-3.5 credits');
    expect(credits(1.5)).toBe('1.5 (not a whole number of micro-credits)');
    expect(credits(undefined)).toBe('undefined (not a whole number of micro-credits)');
  });

  it('instants are ISO 8601 UTC, or the raw value beyond the range a Date holds', () => {
    expect(instant(1_700_000_000_000)).toBe('2023-11-14T22:13:20.000Z');
    expect(instant(8.64e15)).toBe('+275760-09-13T00:00:00.000Z');
    expect(instant(-8.64e15)).toBe('-271821-04-20T00:00:00.000Z');
    expect(instant(8.64e15 + 1)).toBe('8640000000000001');
    expect(instant('soon')).toBe('soon');
  });

  it('a plan window names its end, or says there is none', () => {
    expect(planWindow(null)).toBe('no unlimited-plan window');
    expect(planWindow(undefined)).toBe('no unlimited-plan window');
    expect(planWindow(0)).toBe('an unlimited-plan window to 1970-01-01T00:00:00.000Z');
  });

  it('a field is shown as its value, a record as its fields, an absent one as none', () => {
    expect(shown(undefined)).toBe('none');
    expect(shown(null)).toBe('null');
    expect(shown(7)).toBe('7');
    expect(shown({ runs: 3, interval: 'x' })).toBe('{runs: 3, interval: x}');
  });
});
