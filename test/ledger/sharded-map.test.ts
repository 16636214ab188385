import { describe, expect, it } from 'vitest';
import { ShardedMap } from '../../src/ledger/sharded-map.js';

describe('ShardedMap (the replay keeps one entry per open order in it)', () => {
  it('behaves as a Map for every key, including the empty one and ids of every first character', () => {
    const sharded = new ShardedMap<number>();
    const plain = new Map<string, number>();
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const keys = ['', ...Array.from({ length: 5_000 }, (_, i) => alphabet[i % 64]! + alphabet[(i * 7) % 64]! + i.toString(36))];
    keys.forEach((k, i) => {
      sharded.set(k, i);
      plain.set(k, i);
    });
    sharded.set(keys[10]!, -1);
    plain.set(keys[10]!, -1);
    expect(sharded.size).toBe(plain.size);
    for (const k of keys) {
      expect(sharded.has(k)).toBe(true);
      expect(sharded.get(k)).toBe(plain.get(k));
    }
    expect(sharded.has('missing')).toBe(false);
    expect(sharded.get('missing')).toBeUndefined();
    expect(new Map([...sharded])).toEqual(plain);
    expect([...sharded.values()].sort((a, b) => a - b)).toEqual([...plain.values()].sort((a, b) => a - b));
    // Deleting keeps the counted size exact, also for keys that are not there.
    for (const k of keys.slice(0, 1_000)) {
      expect(sharded.delete(k)).toBe(plain.delete(k));
    }
    expect(sharded.delete('missing')).toBe(false);
    expect(sharded.size).toBe(plain.size);
    expect(new Map([...sharded])).toEqual(plain);
  });
});
