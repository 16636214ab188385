import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { ACCOUNT_IDLE_EVICT_MS } from '../../src/actors/index.js';
import { order, useServer, withServer } from '../helpers/server.js';
import { sameText } from '../../src/actors/verified-secrets.js';

/**
 * A key's secret, once verified, is remembered so that its next requests
 * are checked without hashing it; whatever the cache holds, a change to the
 * key's standing takes effect on the very next request, and the cache
 * never holds more keys than its bound.
 */
describe('verified secrets', () => {
  const t = useServer({ perTest: true, services: { s: { rate: '0.5', min: 1, max: 100 } }, accounts: { a: '10', b: '10' } });

  it('a rotated secret is refused on the very next request, though its key was served from the cache', async () => {
    const { a } = t.accounts;
    expect((await t.api('GET', '/api/v1/balance', a)).status).toBe(200);
    expect((await t.api('GET', '/api/v1/balance', a)).status).toBe(200);
    expect(t.server.context.registry.verifiedKeys).toBe(1);
    const rotated = await t.admin('POST', `/admin/v1/accounts/${a.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const old = await t.api('GET', '/api/v1/balance', a);
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('AUTH');
    expect((await t.api('POST', '/api/v1/order', a, order(t.services.s, 2))).status).toBe(401);
    const secret: string = rotated.body.api_secret;
    expect((await t.api('GET', '/api/v1/balance', { ...a, secret })).body.credits).toBe(10);
    expect((await t.api('GET', '/api/v1/balance', a)).status).toBe(401);
  });

  it('a banned key is refused on the very next request, and served again once unbanned', async () => {
    const { a } = t.accounts;
    expect((await t.api('POST', '/api/v1/order', a, order(t.services.s, 2))).status).toBe(201);
    await t.admin('PATCH', `/admin/v1/accounts/${a.id}`, { banned: true });
    const refused = await t.api('POST', '/api/v1/order', a, order(t.services.s, 2));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('BANNED');
    await t.admin('PATCH', `/admin/v1/accounts/${a.id}`, { banned: false });
    expect((await t.api('POST', '/api/v1/order', a, order(t.services.s, 2))).body.balance).toBe(8);
  });

  it("a remembered secret opens only its own key: another key's secret, or a wrong one, is refused", async () => {
    const { a, b } = t.accounts;
    for (const creds of [a, b]) expect((await t.api('GET', '/api/v1/balance', creds)).status).toBe(200);
    expect(t.server.context.registry.verifiedKeys).toBe(2);
    expect((await t.api('GET', '/api/v1/balance', { ...a, secret: b.secret })).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', { ...b, secret: a.secret })).status).toBe(401);
    const wrong = a.secret.slice(0, -1) + (a.secret.endsWith('A') ? 'B' : 'A');
    expect((await t.api('GET', '/api/v1/balance', { ...a, secret: wrong })).status).toBe(401);
    expect((await t.api('GET', '/api/v1/balance', a)).status).toBe(200);
  });

  it('a revoked API v2 key is refused on the very next request', async () => {
    const { a } = t.accounts;
    const key = await t.issueV2Key(a.id);
    expect((await t.v2({ key, action: 'balance' })).body.balance).toBe('10');
    expect((await t.v2({ key, action: 'balance' })).body.balance).toBe('10');
    expect((await t.admin('DELETE', `/admin/v1/accounts/${a.id}/v2-key`)).status).toBe(200);
    expect((await t.v2({ key, action: 'balance' })).body).toEqual({ error: 'Invalid API key' });
  });
});

describe('the cache of verified secrets is bounded', () => {
  it('holds at most its bound of keys, the oldest dropped first, and every key is still served', async () => {
    const clock = new ManualClock();
    await withServer({ clock, server: { verifiedSecretsMax: 2 }, accounts: { a: '1', b: '2', c: '3' } }, async (t) => {
      const registry = t.server.context.registry;
      const { a, b, c } = t.accounts;
      for (const creds of [a, b, c]) expect((await t.api('GET', '/api/v1/balance', creds)).status).toBe(200);
      expect(registry.verifiedKeys).toBe(2);
      for (let round = 0; round < 2; round++) {
        for (const [creds, credits] of [[a, 1], [b, 2], [c, 3]] as const) {
          expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(credits);
          expect(registry.verifiedKeys).toBe(2);
        }
      }
      expect((await t.api('GET', '/api/v1/balance', { ...a, secret: b.secret })).status).toBe(401);
    });
  });

  it('forgets the secret of an account dropped from memory, and verifies it again when the account comes back', async () => {
    const clock = new ManualClock();
    await withServer({ clock, accounts: { a: '1', b: '2' } }, async (t) => {
      const registry = t.server.context.registry;
      const { a, b } = t.accounts;
      for (const creds of [a, b]) expect((await t.api('GET', '/api/v1/balance', creds)).status).toBe(200);
      expect(registry.verifiedKeys).toBe(2);
      clock.advance(ACCOUNT_IDLE_EVICT_MS - 1);
      expect((await t.api('GET', '/api/v1/balance', b)).status).toBe(200);
      clock.advance(1);
      expect(registry.evictIdle()).toBe(1);
      expect(registry.verifiedKeys).toBe(1);
      expect((await t.api('GET', '/api/v1/balance', { ...a, secret: b.secret })).status).toBe(401);
      expect((await t.api('GET', '/api/v1/balance', a)).body.credits).toBe(1);
      expect(registry.verifiedKeys).toBe(2);
    });
  });
});

describe('sameText, the comparison of a presented secret with a remembered one', () => {
  it('is true for equal texts only, whatever position differs', () => {
    const secret = 'sec_' + 'x'.repeat(43);
    expect(sameText(secret, 'sec_' + 'x'.repeat(43))).toBe(true);
    for (let i = 0; i < secret.length; i++) expect(sameText(secret, secret.slice(0, i) + 'y' + secret.slice(i + 1))).toBe(false);
    expect(sameText(secret, secret + 'x')).toBe(false);
    expect(sameText(secret, secret.slice(0, -1))).toBe(false);
    expect(sameText('', '')).toBe(true);
  });
});
