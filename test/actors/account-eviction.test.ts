import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { ACCOUNT_IDLE_EVICT_MS } from '../../src/actors/index.js';
import { order, withServer } from '../helpers/server.js';

/**
 * Accounts are loaded on first use and dropped after a long idle spell, so
 * memory follows the accounts in use, not all accounts. A dropped account
 * comes back exactly as it was durably left.
 */
describe('accounts load on demand and idle ones are dropped', () => {
  it('drops only idle accounts, and a dropped account comes back with its durable state', async () => {
    const clock = new ManualClock();
    await withServer({ clock }, async (t) => {
      const service = await t.createService({ rate: '0.5', min: 1, max: 100 });
      const a = await t.createAccount('a', '10');
      const b = await t.createAccount('b', '10');
      await t.admin('PATCH', `/admin/v1/accounts/${a.id}`, { rate_limit_per_minute: 120 });
      expect((await t.api('POST', '/api/v1/order', a, order(service, 4))).status).toBe(201);
      const registry = t.server.context.registry;
      expect([...registry.loaded()].map((x) => x.profile.id).sort()).toEqual([a.id, b.id]);

      clock.advance(ACCOUNT_IDLE_EVICT_MS - 1);
      await t.api('GET', '/api/v1/balance', b);
      clock.advance(1);
      expect(registry.evictIdle()).toBe(1);
      expect([...registry.loaded()].map((x) => x.profile.id)).toEqual([b.id]);
      expect(registry.size).toBe(2);

      // Listing does not load it; using it does, with its durable state and settings.
      const listed = (await t.admin('GET', '/admin/v1/accounts')).body.accounts;
      expect(listed.map((x: { credits: number }) => x.credits)).toEqual([8, 10]);
      expect([...registry.loaded()].map((x) => x.profile.id)).toEqual([b.id]);
      const balance = await t.api('GET', '/api/v1/balance', a);
      expect(balance.body.credits).toBe(8);
      expect(balance.headers.get('ratelimit-policy')).toBe('"default";q=120;w=60');
      expect((await t.api('GET', '/api/v1/balance', { ...a, secret: 'sec_wrong' })).status).toBe(401);
    });
  });

  it('never drops an account with a write in flight', async () => {
    const clock = new ManualClock();
    await withServer({ clock }, async (t) => {
      const service = await t.createService({ rate: '1', min: 1, max: 100 });
      const a = await t.createAccount('a', '10');
      const account = t.server.context.registry.get(a.id)!;
      const sent = account.actor.send({
        kind: 'credit',
        amount: 1_000_000,
        reason: 'in flight',
      });
      clock.advance(ACCOUNT_IDLE_EVICT_MS * 2);
      expect(account.actor.idle).toBe(false);
      expect(t.server.context.registry.evictIdle()).toBe(0);
      await sent!.durable;
      expect(t.server.context.registry.evictIdle()).toBe(1);
      expect((await t.api('POST', '/api/v1/order', a, order(service, 11))).status).toBe(201);
    });
  });

  it('never drops an account with a profile change in flight: a rotated secret lands on the account in use', async () => {
    const clock = new ManualClock();
    await withServer({ clock }, async (t) => {
      const a = await t.createAccount('a', '10');
      const registry = t.server.context.registry;
      const rotating = registry.rotateSecret(registry.get(a.id)!);
      clock.advance(ACCOUNT_IDLE_EVICT_MS * 2);
      expect(registry.evictIdle()).toBe(0);
      // A request that looks the account up before the rotation is durable gets the object the rotation lands on
      // (a dropped one would be loaded again from the old row, and the new secret refused until its next drop).
      registry.get(a.id);
      const secret = await rotating;
      expect((await t.api('GET', '/api/v1/balance', { ...a, secret })).status).toBe(200);
      expect((await t.api('GET', '/api/v1/balance', a)).status).toBe(401);
      clock.advance(ACCOUNT_IDLE_EVICT_MS * 2);
      expect(registry.evictIdle()).toBe(1);
    });
  });
});
