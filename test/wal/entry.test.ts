/**
 * The layouts of the index keys the tables are written with: each index is
 * read in key order (oldest, or first to end, first), so the order of a
 * key's parts is part of the store format.
 */
import { describe, expect, it } from 'vitest';
import { idempotencyExpiryKey, leaseKey, orderIndexKey, subscriptionExpiryKey, subscriptionPostKey } from '../../src/wal/index.js';

describe('index keys', () => {
  it('put the time (or status, then time) first, then what makes the key unique', () => {
    expect(idempotencyExpiryKey(1_700, '4:key')).toEqual([1_700, '4:key']);
    expect(leaseKey({ leaseExpiresMs: 2_500, id: 'o1' })).toEqual([2_500, 'o1']);
    expect(orderIndexKey({ status: 'pending', createdAtMs: 9, seq: 3, id: 'o2' })).toEqual(['pending', 9, 3, 'o2']);
    expect(subscriptionPostKey(12, 'post-1')).toEqual([12, 'post-1']);
    expect(subscriptionExpiryKey({ expiryMs: 86_400_000, id: 7 })).toEqual([86_400_000, 7]);
  });
});
