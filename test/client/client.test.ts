/**
 * The typed client (`credit-order-api/client`) against the real server:
 * typed calls, and retries (of a lost answer, a 429 and a 503) that reuse
 * the order's Idempotency-Key, honour Retry-After on the simulated clock,
 * stop at their bound, and never repeat a request that would not give the
 * same result twice.
 */
import { describe, expect, it } from 'vitest';
import { createApiClient, type RetryOptions } from '../../src/client/index.js';
import { LmdbGroupCommit } from '../../src/wal/index.js';
import { HeldWal } from '../helpers/held-wal.js';
import { assertMatchesOpenApi } from '../helpers/openapi-check.js';
import { order, useServer, type Creds } from '../helpers/server.js';
import { WAIT_DEADLINE_MS, waitFor } from '../helpers/wait-for.js';

const TARGET = 'https://instagram.com/p/client';

/** One attempt as the server saw it: the request's method, path, Idempotency-Key, and the status it got (null: the connection was lost). */
interface Attempt {
  method: string;
  path: string;
  key: string | null;
  status: number | null;
}

/**
 * A fetch that sends each attempt to the real server, records it, holds the
 * answer to the OpenAPI document, and, for the attempts `lose` names (1 is
 * the first), throws as fetch does when the connection drops after the
 * request went out, so the client never sees the answer.
 */
function recordingFetch(attempts: Attempt[], lose: ReadonlySet<number> = new Set()): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const response = await fetch(request);
    const text = await response.text();
    const attempt: Attempt = { method: request.method, path: url.pathname, key: request.headers.get('idempotency-key'), status: response.status };
    attempts.push(attempt);
    assertMatchesOpenApi(request.method, url.pathname + url.search, response.status, response.headers, text);
    if (lose.has(attempts.length)) {
      attempt.status = null;
      throw new TypeError('fetch failed');
    }
    return new Response(text, { status: response.status, headers: response.headers });
  };
}

describe('typed client', () => {
  const t = useServer({ perTest: true, services: { main: { rate: '0.5' } }, accounts: { alice: '100' } });
  const client = (creds: Creds, retry: RetryOptions = {}) => createApiClient({ baseUrl: `${t.url}/`, key: creds.key, secret: creds.secret, retry });
  /** A sleep that moves the server's clock instead of waiting, recording each wait. */
  const clockSleep = (waits: number[]) => async (ms: number) => {
    waits.push(ms);
    t.clock.advance(ms);
  };

  it('places an order, reads it back by id and in a batch, and reads the balance, all typed', async () => {
    const api = client(t.accounts.alice);
    const placed = await api.POST('/api/v1/order', { body: { service: t.services.main, target: TARGET, quantity: 10 } });
    expect(placed.response.status).toBe(201);
    expect(placed.data).toMatchObject({ ok: true, charge: 5, status: 'pending', balance: 95 });
    const id = placed.data!.order;
    const one = await api.GET('/api/v1/status', { params: { query: { order: id } } });
    expect(one.data).toMatchObject({ ok: true, order: id, status: 'pending', quantity: 10, charge: 5 });
    const batch = await api.GET('/api/v1/status', { params: { query: { orders: [id, 'AAAAAAAAAAAAAAAAAAAAAA'] } } });
    expect(batch.data).toMatchObject({ ok: true, orders: { [id]: { status: 'pending' }, AAAAAAAAAAAAAAAAAAAAAA: { error: 'NOT_FOUND' } } });
    const balance = await api.GET('/api/v1/balance');
    expect(balance.data).toEqual({ ok: true, credits: 95, unlimited: false, unlimited_expires: null });
  });

  it('answers a refusal as the typed error, with its extra fields', async () => {
    const api = client(t.accounts.alice);
    const refused = await api.POST('/api/v1/order', { body: { service: t.services.main, target: TARGET, quantity: 5000 } });
    expect(refused.response.status).toBe(422);
    expect(refused.error).toMatchObject({ ok: false, error: 'QTY', min: 1, max: 1000 });
  });

  it('retries an order whose answer was lost under the same Idempotency-Key: the server replays it, and one order is placed', async () => {
    const attempts: Attempt[] = [];
    const waits: number[] = [];
    const api = client(t.accounts.alice, { fetch: recordingFetch(attempts, new Set([1])), sleep: clockSleep(waits) });
    const placed = await api.POST('/api/v1/order', { body: { service: t.services.main, target: TARGET, quantity: 10 } });
    expect(placed.response.status).toBe(201);
    expect(placed.response.headers.get('idempotent-replayed')).toBe('true');
    expect(attempts).toHaveLength(2);
    expect(attempts[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(attempts[1]!.key).toBe(attempts[0]!.key);
    expect(waits).toHaveLength(1);
    const balance = await client(t.accounts.alice).GET('/api/v1/balance');
    expect(balance.data!.credits).toBe(95);
  });

  it('places a subscription whose answer was lost once, under one Idempotency-Key, then reads and cancels it, all typed', async () => {
    const service = (await t.admin('POST', '/admin/v1/services', { platform: 'instagram', name: 'Auto likes', rate: '0.25', min: 10, max: 100, type: 'Subscriptions' })).body.service.id as number;
    const attempts: Attempt[] = [];
    const api = client(t.accounts.alice, { fetch: recordingFetch(attempts, new Set([1])), sleep: clockSleep([]) });
    const placed = await api.POST('/api/v1/subscription', { body: { service, username: 'natgeo', min: 10, max: 20, posts: 3 } });
    expect(placed.response.status).toBe(201);
    expect(placed.response.headers.get('idempotent-replayed')).toBe('true');
    expect(attempts.map((a) => a.key)).toEqual([attempts[0]!.key, attempts[0]!.key]);
    expect(attempts[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    const id = placed.data!.subscription;
    const shown = await api.GET('/api/v1/subscription_status', { params: { query: { subscription: id } } });
    expect(shown.data).toMatchObject({ ok: true, subscription: id, status: 'Active', posts: 3, posts_done: 0, orders: [] });
    const canceled = await api.POST('/api/v1/subscription_cancel', { body: { subscription: id } });
    expect(canceled.data?.status).toBe('Canceled');
    expect((await t.admin('GET', `/admin/v1/subscriptions?account=${t.accounts.alice.id}`)).body.subscriptions).toHaveLength(1);
  });

  it("keeps the caller's own Idempotency-Key on every attempt", async () => {
    const attempts: Attempt[] = [];
    const api = client(t.accounts.alice, { fetch: recordingFetch(attempts, new Set([1, 2])), sleep: clockSleep([]) });
    const placed = await api.POST('/api/v1/order', {
      body: { service: t.services.main, target: TARGET, quantity: 2 },
      params: { header: { 'Idempotency-Key': 'panel-order-77' } },
    });
    expect(placed.response.status).toBe(201);
    expect(attempts.map((a) => a.key)).toEqual(['panel-order-77', 'panel-order-77', 'panel-order-77']);
    expect(attempts.map((a) => a.status)).toEqual([null, null, 201]);
  });

  it('waits out a 429 for its Retry-After, on the server clock, then succeeds', async () => {
    const limited = await t.admin('PATCH', `/admin/v1/accounts/${t.accounts.alice.id}`, { rate_limit_per_minute: 1 });
    expect(limited.status).toBe(200);
    const attempts: Attempt[] = [];
    const waits: number[] = [];
    const api = client(t.accounts.alice, { fetch: recordingFetch(attempts), sleep: clockSleep(waits) });
    expect((await api.GET('/api/v1/balance')).response.status).toBe(200);
    const second = await api.GET('/api/v1/balance');
    expect(second.response.status).toBe(200);
    expect(attempts.map((a) => a.status)).toEqual([200, 429, 200]);
    expect(waits).toEqual([60_000]);
  });

  it('stops after its attempts and returns the last answer; a Retry-After beyond delayMsMax is returned at once', async () => {
    await t.admin('PATCH', `/admin/v1/accounts/${t.accounts.alice.id}`, { rate_limit_per_minute: 1 });
    const attempts: Attempt[] = [];
    const waits: number[] = [];
    const standStill = async (ms: number) => void waits.push(ms);
    const api = client(t.accounts.alice, { fetch: recordingFetch(attempts), sleep: standStill, attempts: 3 });
    await api.GET('/api/v1/balance');
    const refused = await api.GET('/api/v1/balance');
    expect(refused.response.status).toBe(429);
    expect(refused.error).toMatchObject({ error: 'RATE', retry_after: 60 });
    expect(attempts.map((a) => a.status)).toEqual([200, 429, 429, 429]);
    expect(waits).toEqual([60_000, 60_000]);

    const impatient = client(t.accounts.alice, { fetch: recordingFetch(attempts), sleep: standStill, delayMsMax: 1_000 });
    expect((await impatient.GET('/api/v1/balance')).response.status).toBe(429);
    expect(attempts).toHaveLength(5);
    expect(waits).toHaveLength(2);
  });

  it('does not repeat a lost POST that has no Idempotency-Key (a cancel): the error reaches the caller', async () => {
    const placed = await client(t.accounts.alice).POST('/api/v1/order', { body: { service: t.services.main, target: TARGET, quantity: 1 } });
    const attempts: Attempt[] = [];
    const api = client(t.accounts.alice, { fetch: recordingFetch(attempts, new Set([1])), sleep: clockSleep([]) });
    await expect(api.POST('/api/v1/cancel', { body: { orders: [placed.data!.order] } })).rejects.toThrow('fetch failed');
    expect(attempts).toHaveLength(1);
  });
});

describe('typed client against a full mailbox', () => {
  let held: HeldWal;
  const t = useServer({
    services: { main: { rate: '1' } },
    accounts: { alice: '100' },
    config: { mailboxMax: 4 },
    server: {
      wal: (store, onFatal) => {
        held = new HeldWal(new LmdbGroupCommit(store, { onFatal }));
        return held;
      },
    },
  });

  it('retries a 503 after its Retry-After under the same Idempotency-Key, and the order is placed once', async () => {
    held.holding = true;
    const waiting = Array.from({ length: 4 }, () => t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 1)));
    const depth = (): number => t.server.context.registry.get(t.accounts.alice.id)?.actor.depth ?? 0;
    await waitFor("a held sync and alice's mailbox full (4 commands)", () => held.heldCount >= 1 && depth() >= 4, WAIT_DEADLINE_MS, () => `${held.heldCount} syncs held, mailbox depth ${depth()}`);
    const attempts: Attempt[] = [];
    const waits: number[] = [];
    // The wait is when the disk catches up: the held syncs are let go.
    const releaseThenRetry = async (ms: number) => {
      waits.push(ms);
      held.holding = false;
      held.release();
    };
    const api = createApiClient({ baseUrl: t.url, key: t.accounts.alice.key, secret: t.accounts.alice.secret, retry: { fetch: recordingFetch(attempts), sleep: releaseThenRetry } });
    const placed = await api.POST('/api/v1/order', { body: { service: t.services.main, target: TARGET, quantity: 1 } });
    expect(attempts.map((a) => a.status)).toEqual([503, 201]);
    expect(attempts[1]!.key).toBe(attempts[0]!.key);
    expect(waits).toEqual([1_000]);
    expect(placed.data).toMatchObject({ ok: true, charge: 1 });
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect((await t.api('GET', '/api/v1/balance', t.accounts.alice)).body.credits).toBe(95);
  });
});
