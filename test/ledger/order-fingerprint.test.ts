import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { orderFingerprint, ORDER_INPUT_FIELDS, subscriptionFingerprint, type OrderPayload, type SubscriptionTerms } from '../../src/ledger/index.js';

const plain = (serviceId: number, target: string, quantity: number): OrderPayload => ({ serviceId, target, quantity });

describe('orderFingerprint (the payload as sent)', () => {
  it('is stable for the same payload, whatever order its fields were given in', () => {
    const a: OrderPayload = { serviceId: 7, target: 'https://x.test/p/1', quantity: 100, runs: 3, interval: 10 };
    const b: OrderPayload = { interval: 10, runs: 3, quantity: 100, target: 'https://x.test/p/1', serviceId: 7 };
    expect(orderFingerprint(a)).toBe(orderFingerprint(b));
  });

  it('differs when the service, the target or the quantity differs', () => {
    const base = orderFingerprint(plain(7, 'https://x.test/p/1', 100));
    expect(orderFingerprint(plain(8, 'https://x.test/p/1', 100))).not.toBe(base);
    expect(orderFingerprint(plain(7, 'https://x.test/p/2', 100))).not.toBe(base);
    expect(orderFingerprint(plain(7, 'https://x.test/p/1', 101))).not.toBe(base);
    // Values that could collide if the fields were simply concatenated.
    expect(orderFingerprint(plain(1, '23', 4))).not.toBe(orderFingerprint(plain(12, '3', 4)));
    expect(orderFingerprint(plain(1, '2\n3', 4))).not.toBe(orderFingerprint(plain(1, '2', 3)));
    expect(orderFingerprint(plain(1, '', 12))).not.toBe(orderFingerprint(plain(11, '', 2)));
  });

  it('tells an absent field from every value of it: a Package order sent without quantity is not one sent with quantity 1', () => {
    const target = 'https://x.test/p/1';
    expect(orderFingerprint({ serviceId: 7, target })).not.toBe(orderFingerprint({ serviceId: 7, target, quantity: 1 }));
    expect(orderFingerprint({ serviceId: 7, target, comments: 'a' })).not.toBe(orderFingerprint({ serviceId: 7, target, usernames: 'a' }));
  });

  it('changing or dropping exactly one order-input field always changes the fingerprint (property)', () => {
    const full: OrderPayload = {
      serviceId: 7,
      target: 'https://x.test/p/1',
      quantity: 5,
      comments: 'c',
      usernames: 'u',
      answer_number: 2,
      runs: 3,
      interval: 10,
      username: 'owner',
      hashtags: 'h',
      hashtag: 'tag',
      media: 'https://x.test/p/2',
      keywords: 'k',
      groups: 'g',
    };
    expect(Object.keys(full).length).toBe(ORDER_INPUT_FIELDS.length + 2);
    fc.assert(
      fc.property(fc.constantFrom(...ORDER_INPUT_FIELDS), fc.boolean(), (field, drop) => {
        const changed: OrderPayload = { ...full };
        if (drop) delete changed[field];
        else (changed as Record<string, unknown>)[field] = typeof full[field] === 'string' ? `${full[field]}x` : (full[field] as number) + 1;
        expect(orderFingerprint(changed)).not.toBe(orderFingerprint(full));
      }),
      { numRuns: 100 },
    );
  });

  it('differs whenever service, target or quantity differs (property)', () => {
    const payload = fc.record({ service: fc.integer({ min: 1, max: 1000 }), target: fc.string({ maxLength: 40 }), quantity: fc.integer({ min: -5, max: 100_000 }) });
    fc.assert(
      fc.property(payload, payload, (a, b) => {
        const same = a.service === b.service && a.target === b.target && a.quantity === b.quantity;
        expect(orderFingerprint(plain(a.service, a.target, a.quantity)) === orderFingerprint(plain(b.service, b.target, b.quantity))).toBe(same);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the fingerprint a key was stored with before the later fields existed, so such a key still replays', () => {
    const legacy = (fields: unknown[]): string => createHash('sha256').update(JSON.stringify(fields)).digest('base64url');
    const target = 'https://x.test/p/1';
    expect(orderFingerprint({ serviceId: 7, target, quantity: 100 })).toBe(legacy([7, target, 100, null, null, null, null, null]));
    expect(orderFingerprint({ serviceId: 7, target, comments: 'a\nb' })).toBe(legacy([7, target, null, 'a\nb', null, null, null, null]));
    // A later field, when sent, is covered by name.
    expect(orderFingerprint({ serviceId: 7, target, quantity: 100, username: 'x' })).not.toBe(orderFingerprint({ serviceId: 7, target, quantity: 100, hashtag: 'x' }));
  });

  it('is a compact printable string suitable for storage', () => {
    expect(orderFingerprint(plain(7, 'ключ 😀', 1))).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('subscriptionFingerprint (the terms as read)', () => {
  const terms: SubscriptionTerms = { service: 12, username: 'bob', min: 10, max: 100, posts: 5, oldPosts: 2, delayMinutes: 30, expiryMs: Date.UTC(2026, 1, 1, 23, 59, 59, 999) };
  const sha = (fields: unknown[]): string => createHash('sha256').update(JSON.stringify(fields)).digest('base64url');

  it('is the hash of the terms in a fixed order, led by the word subscription, so keys stored by a running server keep replaying', () => {
    expect(subscriptionFingerprint(terms)).toBe(sha(['subscription', 12, 'bob', 10, 100, 5, 2, 30, terms.expiryMs]));
    expect(subscriptionFingerprint({ ...terms, expiryMs: null })).toBe(sha(['subscription', 12, 'bob', 10, 100, 5, 2, 30, null]));
  });

  it('is never the fingerprint of an order, so a key used for an order and then for a subscription is a different payload', () => {
    expect(subscriptionFingerprint(terms)).not.toBe(orderFingerprint({ serviceId: 12, target: 'bob', quantity: 10 }));
    expect(subscriptionFingerprint(terms)).not.toBe(sha([12, 'bob', 10, 100, 5, 2, 30, terms.expiryMs]));
  });

  it('changes when any one term changes', () => {
    const changed: SubscriptionTerms[] = [
      { ...terms, service: 13 },
      { ...terms, username: 'bobby' },
      { ...terms, min: 11 },
      { ...terms, max: 101 },
      { ...terms, posts: 6 },
      { ...terms, oldPosts: 3 },
      { ...terms, delayMinutes: 60 },
      { ...terms, expiryMs: null },
    ];
    for (const other of changed) expect(subscriptionFingerprint(other)).not.toBe(subscriptionFingerprint(terms));
  });
});
