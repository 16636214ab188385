import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { order, useServer } from '../helpers/server.js';

describe('rate limits (simulated clock)', () => {
  const clock = new ManualClock();

  const t = useServer({ clock, config: { defaultRateLimitPerMinute: 60, authFailuresPerMinute: 5 }, services: { main: {} }, accounts: { burst: '1000' } });

  it('a fresh key spends its whole minute at once, then gets 429 RATE with Retry-After', async () => {
    const limit = await t.admin('PATCH', `/admin/v1/accounts/${t.accounts.burst.id}`, { rate_limit_per_minute: 3 });
    expect(limit.body.account.rate_limit_per_minute).toBe(3);
    // Every endpoint counts against the same bucket.
    expect((await t.api('GET', '/api/v1/balance', t.accounts.burst)).status).toBe(200);
    expect((await t.api('GET', '/api/v1/services', t.accounts.burst)).status).toBe(200);
    const third = await t.api('POST', '/api/v1/order', t.accounts.burst, order(t.services.main, 1));
    expect(third.status).toBe(201);
    expect(third.headers.get('ratelimit')).toBe('"default";r=0;t=60');
    const refused = await t.api('POST', '/api/v1/order', t.accounts.burst, order(t.services.main, 1));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ ok: false, error: 'RATE', retry_after: 20 });
    expect(refused.headers.get('retry-after')).toBe('20');
    expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
    // A refused order changes nothing.
    expect((await t.admin('GET', `/admin/v1/accounts/${t.accounts.burst.id}`)).body.account.credits).toBe(999.9);
  });

  it('refills at limit/60 per second on the monotonic clock', async () => {
    const refilled = await t.createAccount('refilled');
    expect((await t.admin('PATCH', `/admin/v1/accounts/${refilled.id}`, { rate_limit_per_minute: 3 })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await t.api('GET', '/api/v1/balance', refilled)).status).toBe(200);
    expect((await t.api('GET', '/api/v1/balance', refilled)).status).toBe(429);
    clock.advance(19_999);
    expect((await t.api('GET', '/api/v1/balance', refilled)).status).toBe(429);
    clock.advance(1);
    expect((await t.api('GET', '/api/v1/balance', refilled)).status).toBe(200);
    expect((await t.api('GET', '/api/v1/balance', refilled)).status).toBe(429);
  });

  it('supports limits up to 100,000,000 per minute', async () => {
    const r = await t.admin('PATCH', `/admin/v1/accounts/${t.accounts.burst.id}`, { rate_limit_per_minute: 100_000_000 });
    expect(r.status).toBe(200);
    const balance = await t.api('GET', '/api/v1/balance', t.accounts.burst);
    expect(balance.headers.get('ratelimit')).toMatch(/^"default";r=99999999;/);
    expect((await t.admin('PATCH', `/admin/v1/accounts/${t.accounts.burst.id}`, { rate_limit_per_minute: 100_000_001 })).status).toBe(400);
  });

  it('limits failed authentication per client IP, and serves valid credentials from a blocked IP', async () => {
    const wrong = { ...t.accounts.burst, secret: 'sec_wrong' };
    for (let i = 0; i < 5; i++) expect((await t.api('GET', '/api/v1/balance', wrong)).status).toBe(401);
    const blocked = await t.api('GET', '/api/v1/balance', wrong);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('RATE');
    expect((await t.api('GET', '/api/v1/balance', t.accounts.burst)).status).toBe(200);
    clock.advance(12_000);
    expect((await t.api('GET', '/api/v1/balance', wrong)).status).toBe(401);
  });
});

describe('RATE_LIMIT_HEADERS=both: the X-RateLimit-* trio besides the draft pair', () => {
  const clock = new ManualClock();
  const t = useServer({ clock, config: { defaultRateLimitPerMinute: 2, rateLimitHeaders: 'both' }, services: { main: {} }, accounts: { both: '1000' } });

  /** The trio must say what the pair says: the same limit, requests left and seconds until full. */
  function sameInBoth(headers: Headers): { limit: string | null; remaining: string | null; reset: string | null } {
    const pair = /^"default";r=(\d+);t=(\d+)$/.exec(headers.get('ratelimit') ?? '');
    expect(pair, 'a RateLimit header').not.toBeNull();
    expect(headers.get('ratelimit-policy')).toBe(`"default";q=${headers.get('x-ratelimit-limit')};w=60`);
    expect([headers.get('x-ratelimit-remaining'), headers.get('x-ratelimit-reset')]).toEqual([pair![1], pair![2]]);
    return { limit: headers.get('x-ratelimit-limit'), remaining: headers.get('x-ratelimit-remaining'), reset: headers.get('x-ratelimit-reset') };
  }

  it('answers, refusals included, carry both families with the same numbers', async () => {
    const balance = await t.api('GET', '/api/v1/balance', t.accounts.both);
    expect(balance.status).toBe(200);
    expect(sameInBoth(balance.headers)).toEqual({ limit: '2', remaining: '1', reset: '30' });
    const placed = await t.api('POST', '/api/v1/order', t.accounts.both, order(t.services.main, 1));
    expect(placed.status).toBe(201);
    expect(sameInBoth(placed.headers)).toEqual({ limit: '2', remaining: '0', reset: '60' });
    const refused = await t.api('POST', '/api/v1/order', t.accounts.both, order(t.services.main, 1));
    expect(refused.status).toBe(429);
    expect(sameInBoth(refused.headers)).toEqual({ limit: '2', remaining: '0', reset: '60' });
  });
});
