/** The counts row a store keeps (orders per status) is read only when every status holds a whole count. */
import { describe, expect, it } from 'vitest';
import { isCounts } from '../../../src/ledger/index.js';

describe('isCounts', () => {
  const counts = { pending: 1, processing: 0, in_progress: 2, completed: 3, partial: 0, canceled: 4 };

  it('accepts a count for every status', () => {
    expect(isCounts(counts)).toBe(true);
  });

  it('refuses a row missing a status, with a count that is not a whole number, or not a record', () => {
    const { canceled: _, ...missing } = counts;
    expect(isCounts(missing)).toBe(false);
    expect(isCounts({ ...counts, partial: 1.5 })).toBe(false);
    expect(isCounts({ ...counts, partial: '1' })).toBe(false);
    expect(isCounts(null)).toBe(false);
    expect(isCounts(7)).toBe(false);
  });
});
