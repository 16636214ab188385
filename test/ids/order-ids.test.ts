import { createCipheriv } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OrderIds, ORDER_ID_PATTERN } from '../../src/ids/order-ids.js';

describe('order ids: opaque to clients, ordered in storage', () => {
  const ids = new OrderIds(Buffer.alloc(16, 7));

  it('are 22 url-safe characters, unique, and decrypt to their storage key', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const { id } = ids.next(1_800_000_000_000);
      expect(id).toMatch(ORDER_ID_PATTERN);
      seen.add(id);
    }
    expect(seen.size).toBe(10_000);
  });

  it('storage keys sort by creation time and sequence, whatever the public ids look like', () => {
    const made = Array.from({ length: 20 }, (_, i) => ids.next(1_800_000_000_000 + i * 1000));
    const keys = made.map((m) => ids.storageKey(m.id)!);
    expect([...keys].sort()).toEqual(keys);
    expect(keys[0]!.slice(0, 12)).toBe((1_800_000_000_000).toString(16).padStart(12, '0'));
    // Public ids do not sort like creation order (a chance of 1 in 20! otherwise).
    expect([...made.map((m) => m.id)].sort()).not.toEqual(made.map((m) => m.id));
  });

  it('the storage key a new id comes with is the key decryption gives', () => {
    const twin = new OrderIds(Buffer.alloc(16, 7));
    for (let i = 0; i < 100; i++) {
      const { id, key } = ids.next(1_800_000_000_000 + i);
      expect(key).toMatch(/^[0-9a-f]{32}$/);
      expect(ids.storageKey(id)).toBe(key);
      expect(twin.storageKey(id)).toBe(key);
    }
  });

  it('an id is the AES-128 encryption of its storage key: known pairs that every build must keep', () => {
    // FIPS-197, appendix C.1: key 000102…0f encrypts 00112233…ff to 69c4e0d8…c55a.
    const fips = new OrderIds(Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex'));
    expect(Buffer.from('69c4e0d86a7b0430d8cdb78070b4c55a', 'hex').toString('base64url')).toBe('acTg2Gp7BDDYzbeAcLTFWg');
    expect(fips.storageKey('acTg2Gp7BDDYzbeAcLTFWg')).toBe('00112233445566778899aabbccddeeff');
    // Ids issued under a fixed secret at the milliseconds 1,800,000,000,000 to …002 (01a3185c5000 to …5002), sequence numbers 0 to 2, random tails.
    const pinned = new OrderIds(Buffer.alloc(16, 7));
    expect(pinned.storageKey('l18dHrlBsmVtjM6VDB3RbA')).toBe('01a3185c5000000000006e599783e688');
    expect(pinned.storageKey('jYroj5Wv84TMbqA5PSivRw')).toBe('01a3185c500100000001bdd3f8e2b939');
    expect(pinned.storageKey('Nw5sGHogOT5hxgsplf5PFA')).toBe('01a3185c5002000000021a976923dcc7');
  });

  it('whatever the pace of orders, each id is its key encrypted alone, with the millisecond and the next sequence number', () => {
    const secret = Buffer.alloc(16, 9);
    const aes = createCipheriv('aes-128-ecb', secret, null).setAutoPadding(false);
    const paced = new OrderIds(secret);
    // Many ids in one millisecond (batches of every size, past the random pool's 4,096), one per millisecond, a few per millisecond, a clock that steps back.
    const times = [
      ...Array.from({ length: 5_000 }, () => 1_800_000_000_000),
      ...Array.from({ length: 300 }, (_, i) => 1_800_000_000_001 + i),
      ...Array.from({ length: 300 }, (_, i) => 1_800_000_001_000 + Math.floor(i / 3)),
      ...Array.from({ length: 300 }, (_, i) => 1_800_000_002_000 + Math.floor(i / 7) - (i % 2)),
    ];
    const tails = new Set<string>();
    times.forEach((wallMs, n) => {
      const { id, key, seq } = paced.next(wallMs);
      expect(seq).toBe(n);
      expect(key.slice(0, 12)).toBe(wallMs.toString(16).padStart(12, '0'));
      expect(key.slice(12, 20)).toBe(n.toString(16).padStart(8, '0'));
      expect(id).toBe(aes.update(Buffer.from(key, 'hex')).toString('base64url'));
      tails.add(key.slice(20));
    });
    expect(tails.size).toBe(times.length);
  });

  it('a different secret gives different ids for the same key, and text that cannot be an id has no key', () => {
    const other = new OrderIds(Buffer.alloc(16, 8));
    const a = ids.next(5);
    const key = ids.storageKey(a.id)!;
    expect(other.storageKey(a.id)).not.toBe(key);
    expect(ids.storageKey('short')).toBeNull();
    expect(ids.storageKey('!'.repeat(22))).toBeNull();
    expect(() => new OrderIds(Buffer.alloc(8))).toThrow(/16 bytes/);
  });

  it('only the spelling the server wrote is an id: the 4 unused bits of the last character must be zero', () => {
    const fresh = new OrderIds(Buffer.alloc(16, 7));
    const { id } = ids.next(1_800_000_000_000);
    const key = fresh.storageKey(id);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(id[21]!);
    // The same two meaningful bits with any of the 15 other unused-bit patterns.
    for (let unused = 1; unused < 16; unused++) {
      const respelled = id.slice(0, 21) + alphabet[last ^ unused];
      expect(Buffer.from(respelled, 'base64url').toString('hex')).toBe(Buffer.from(id, 'base64url').toString('hex'));
      expect(fresh.storageKey(respelled)).toBeNull();
    }
  });
});
