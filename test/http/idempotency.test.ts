import { describe, expect, it } from 'vitest';
import { LmdbGroupCommit } from '../../src/wal/index.js';
import { HeldWal } from '../helpers/held-wal.js';
import { keepAlive } from '../helpers/keep-alive.js';
import { order, roundTrips, useServer, withServer, type Creds, type TestServer } from '../helpers/server.js';

/** The default retention (IDEMPOTENCY_RETENTION_HOURS=24), which the fixture's server keeps. */
const RETENTION_MS = 24 * 3_600_000;

describe('Idempotency-Key on POST /order', () => {
  const t = useServer({ services: { main: { rate: '1', min: 1, max: 1000 } }, accounts: { alice: '100' } });

  const credits = async (c: Creds) => (await t.api('GET', '/api/v1/balance', c)).body.credits;

  it('the same key and payload return the original status and body, marked as replayed', async () => {
    const first = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 5), { 'idempotency-key': 'k-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 5), { 'idempotency-key': 'k-1' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await credits(t.accounts.alice)).toBe(95);
  });

  it('a retry replays after the operator disabled the service, for every order type (the fingerprint does not follow the catalogue)', async () => {
    const bob = await t.createAccount('retrier', '100');
    const pack = await t.createService({ rate: '2', min: 1, max: 1, type: 'Package' });
    const drip = await t.createService({ rate: '0.1', min: 10, max: 1000, dripfeed: true });
    const comments = await t.createService({ rate: '0.5', min: 1, max: 10, type: 'Custom Comments' });
    const bodies = [
      { service: pack, target: 'https://t.me/x' },
      { service: drip, target: 'https://t.me/x', quantity: 100, runs: 3, interval: 10 },
      { service: comments, target: 'https://t.me/x', comments: 'nice\ngreat' },
    ];
    const first = [];
    for (const [i, body] of bodies.entries()) {
      const r = await t.api('POST', '/api/v1/order', bob, body, { 'idempotency-key': `disabled-${i}` });
      expect(r.status, r.text).toBe(201);
      first.push(r.text);
    }
    const before = await credits(bob);
    for (const id of [pack, drip, comments]) expect((await t.admin('PATCH', `/admin/v1/services/${id}`, { enabled: false })).status).toBe(200);
    for (const [i, body] of bodies.entries()) {
      const again = await t.api('POST', '/api/v1/order', bob, body, { 'idempotency-key': `disabled-${i}` });
      expect(again.status, again.text).toBe(201);
      expect(again.text).toBe(first[i]);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    // A new order on a disabled service is still refused, and nothing was charged again.
    const fresh = await t.api('POST', '/api/v1/order', bob, bodies[0], { 'idempotency-key': 'disabled-new' });
    expect(fresh.body.error).toBe('SERVICE');
    expect(await credits(bob)).toBe(before);
  });

  it('a quoted structured-field key is the same key', async () => {
    const quoter = await t.createAccount('quoter', '100');
    const first = await t.api('POST', '/api/v1/order', quoter, order(t.services.main, 5), { 'idempotency-key': 'k-q' });
    expect(first.status).toBe(201);
    const again = await t.api('POST', '/api/v1/order', quoter, order(t.services.main, 5), { 'idempotency-key': '"k-q"' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await credits(quoter)).toBe(95);
  });

  it('the same key with a different payload is 422 IDEMPOTENCY and changes nothing', async () => {
    const changer = await t.createAccount('changer', '100');
    expect((await t.api('POST', '/api/v1/order', changer, order(t.services.main, 5), { 'idempotency-key': 'k-1' })).status).toBe(201);
    const r = await t.api('POST', '/api/v1/order', changer, order(t.services.main, 6), { 'idempotency-key': 'k-1' });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('IDEMPOTENCY');
    expect(await credits(changer)).toBe(95);
  });

  it('keys are scoped per account', async () => {
    const bob = await t.createAccount('bob', '10');
    const r = await t.api('POST', '/api/v1/order', bob, order(t.services.main, 5), { 'idempotency-key': 'k-1' });
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    expect(await credits(bob)).toBe(5);
  });

  it('twenty concurrent requests with one key create one order', async () => {
    const burster = await t.createAccount('burster', '100');
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => t.api('POST', '/api/v1/order', burster, order(t.services.main, 2), { 'idempotency-key': 'burst' })),
    );
    expect(new Set(replies.map((r) => r.body.order)).size).toBe(1);
    expect(replies.every((r) => r.status === 201)).toBe(true);
    expect(replies.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await credits(burster)).toBe(98);
  });

  it('business outcomes are remembered like successes; validation failures are not', async () => {
    const poor = await t.createAccount('poor', '1');
    const refused = await t.api('POST', '/api/v1/order', poor, order(t.services.main, 5), { 'idempotency-key': 'b-1' });
    expect(refused.status).toBe(402);
    await t.admin('POST', `/admin/v1/accounts/${poor.id}/credits`, { amount: 100, reason: 'top-up' });
    const retried = await t.api('POST', '/api/v1/order', poor, order(t.services.main, 5), { 'idempotency-key': 'b-1' });
    expect(retried.status).toBe(402);
    expect(retried.text).toBe(refused.text);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');

    const invalid = await t.api('POST', '/api/v1/order', poor, { ...order(t.services.main, 5), price: 1 }, { 'idempotency-key': 'v-1' });
    expect(invalid.status).toBe(400);
    const fixed = await t.api('POST', '/api/v1/order', poor, order(t.services.main, 5), { 'idempotency-key': 'v-1' });
    expect(fixed.status).toBe(201);
  });

  it('replays survive a restart', async () => {
    const first = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 3), { 'idempotency-key': 'durable-key' });
    await t.restart();
    const again = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 3), { 'idempotency-key': 'durable-key' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const different = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 4), { 'idempotency-key': 'durable-key' });
    expect(different.status).toBe(422);
  });

  it('a key is forgotten after the retention period', async () => {
    const first = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 1), { 'idempotency-key': 'old-key' });
    t.clock.advance(24 * 3_600_000 + 1);
    const later = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 1), { 'idempotency-key': 'old-key' });
    expect(later.status).toBe(201);
    expect(later.body.order).not.toBe(first.body.order);
  });
});

describe('Idempotency-Key retention sweep', () => {
  it('a key is kept for exactly its 24 h: replayed and not swept at 24 h, forgotten and swept 1 ms later', async () => {
    await withServer({ services: { main: { rate: '1', min: 1, max: 10 } }, accounts: { edge: '100' } }, async (t) => {
      const { edge } = t.accounts;
      // A new store's first sweep marks the expiry index complete, so later sweeps go straight to removing.
      await t.server.sweeper.runOnce();
      const first = await t.api('POST', '/api/v1/order', edge, order(t.services.main, 1), { 'idempotency-key': 'edge' });
      expect(first.status).toBe(201);
      t.clock.advance(RETENTION_MS);
      const atRetention = await t.api('POST', '/api/v1/order', edge, order(t.services.main, 1), { 'idempotency-key': 'edge' });
      expect({ status: atRetention.status, replayed: atRetention.headers.get('idempotent-replayed'), body: atRetention.text }).toEqual({ status: 201, replayed: 'true', body: first.text });
      expect((await t.server.sweeper.runOnce()).removed).toBe(0);
      expect([...t.server.context.store.tables.idempotency.getKeys()]).toEqual([`${edge.id}:edge`]);
      t.clock.advance(1);
      expect((await t.server.sweeper.runOnce()).removed).toBe(1);
      const after = await t.api('POST', '/api/v1/order', edge, order(t.services.main, 1), { 'idempotency-key': 'edge' });
      expect(after.status).toBe(201);
      expect(after.headers.get('idempotent-replayed')).toBeNull();
      expect(after.body.order).not.toBe(first.body.order);
    });
  });

  it('deletes records past retention and keeps fresh ones and keys used again', async () => {
    await withServer({}, async (t) => {
      const clock = t.clock;
      const service = await t.createService({ rate: '1', min: 1, max: 10 });
      const creds = await t.createAccount('sweep', '100');
      await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'old' });
      await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'reused' });
      clock.advance(24 * 3_600_000 + 1);
      await t.api('POST', '/api/v1/order', creds, order(service, 2), { 'idempotency-key': 'reused' });
      await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'fresh' });
      const table = t.server.context.store.tables.idempotency;
      expect([...table.getKeys()].sort()).toEqual([`${creds.id}:fresh`, `${creds.id}:old`, `${creds.id}:reused`]);
      // Two expiry-index entries were past the cutoff: 'old' and the first 'reused'.
      expect((await t.server.sweeper.runOnce()).removed).toBe(2);
      expect([...table.getKeys()].sort()).toEqual([`${creds.id}:fresh`, `${creds.id}:reused`]);
      // The expiry index keeps the entries of the live records only.
      const index = [...t.server.context.store.tables.idempotencyExpiry.getKeys()].map((k) => (k as [number, string])[1]);
      expect(index.sort()).toEqual([`${creds.id}:fresh`, `${creds.id}:reused`]);
      // The re-used key now answers with its second order.
      const replay = await t.api('POST', '/api/v1/order', creds, order(service, 2), { 'idempotency-key': 'reused' });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
    });
  });

  it('keeps a key used again whose new record is still on its way to the disk when the sweep reads it', async () => {
    let held!: HeldWal;
    await withServer({ server: { wal: (store, onFatal) => (held = new HeldWal(new LmdbGroupCommit(store, { onFatal }))) } }, async (t) => {
      const clock = t.clock;
      const service = await t.createService({ rate: '1', min: 1, max: 10 });
      const creds = await t.createAccount('inflight', '100');
      // A new store's first sweep marks the expiry index complete, so the sweep below goes straight to removing.
      await t.server.sweeper.runOnce();
      const first = await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': 'again' });
      clock.advance(24 * 3_600_000 + 1);
      // The key's record has expired: its next use places a new order, whose
      // commit (with the new record) has not landed when the sweep reads the old one.
      held.deferring = true;
      const second = t.api('POST', '/api/v1/order', creds, order(service, 2), { 'idempotency-key': 'again' });
      for (let i = 0; held.deferredCount < 1; i++) {
        if (i === 100) throw new Error('the order never reached the WAL');
        await roundTrips(t);
      }
      const swept = t.server.sweeper.runOnce();
      for (let i = 0; held.deferredCount < 2; i++) {
        if (i === 100) throw new Error("the sweep's step never reached the WAL");
        await roundTrips(t);
      }
      // Both commits land, the order's first and the sweep's step after it.
      held.release();
      expect((await swept).removed).toBe(1);
      const placed = await second;
      expect(placed.status).toBe(201);
      expect(placed.body.order).not.toBe(first.body.order);
      expect([...t.server.context.store.tables.idempotency.getKeys()]).toEqual([`${creds.id}:again`]);
      // A retry of the second order is recognised, not placed a third time.
      const retry = await t.api('POST', '/api/v1/order', creds, order(service, 2), { 'idempotency-key': 'again' });
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.order).toBe(placed.body.order);
      expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(100 - 3);
    });
  });

  // The exact interleaving of batches that once stopped the server is
  // pinned in test/wal/group-commit.test.ts. This is a sweep end to end,
  // with real requests around it.
  it('runs while orders are being placed: every order is acknowledged and the server keeps going', async () => {
    const fatals: unknown[] = [];
    await withServer({ server: { onFatal: (e: unknown) => void fatals.push(e) } }, async (t) => {
      const clock = t.clock;
      const service = await t.createService({ rate: '1', min: 1, max: 10 });
      const creds = await t.createAccount('busy', '1000');
      for (let i = 0; i < 20; i++) await t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': `old-${i}` });
      clock.advance(24 * 3_600_000 + 1);
      const placing = Array.from({ length: 60 }, (_, i) => t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': `new-${i}` }));
      const swept = t.server.sweeper.runOnce();
      const more = Array.from({ length: 60 }, (_, i) => t.api('POST', '/api/v1/order', creds, order(service, 1), { 'idempotency-key': `later-${i}` }));
      const answers = await Promise.all([...placing, ...more]);
      expect((await swept).removed).toBe(20);
      expect(fatals).toEqual([]);
      expect(answers.map((a) => a.status)).toEqual(Array(120).fill(201));
      expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(1000 - 140);
      expect((await t.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
    });
  });
});

describe('Idempotency-Key sweep, whatever the key order', () => {
  /** `count` keyed orders of one account, over raw keep-alive connections. */
  async function placeKeyed(t: TestServer, creds: Creds, service: number, prefix: string, count: number): Promise<void> {
    const body = JSON.stringify(order(service, 1));
    const requests = Array.from(
      { length: count },
      (_, i) =>
        `POST /api/v1/order HTTP/1.1\r\nHost: x\r\nX-API-Key: ${creds.key}\r\nX-API-Secret: ${creds.secret}\r\n` +
        `Content-Type: application/json\r\nIdempotency-Key: ${prefix}-${i}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const statuses = await keepAlive(t.server.port, requests);
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
  }
  const gauge = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)![1]);

  it('2,000 expired keys of one account behind 50,000 fresh keys of another are all removed, and /metrics shows the table', async () => {
    await withServer({}, async (t) => {
      const clock = t.clock;
      const service = await t.createService({ rate: '0.001', min: 1, max: 10 });
      // Table keys are `account:key`: the fresh account's keys sort first.
      const fresh = await t.createAccount('fresh', '1000');
      const stale = await t.createAccount('stale', '1000');
      expect(`${fresh.id}:` < `${stale.id}:`).toBe(true);
      await placeKeyed(t, stale, service, 'old', 2_000);
      clock.advance(24 * 3_600_000 + 1);
      await placeKeyed(t, fresh, service, 'new', 50_000);
      const table = t.server.context.store.tables.idempotency;
      const before = (await t.admin('GET', '/metrics')).text;
      expect(gauge(before, 'coa_idempotency_records')).toBe(52_000);
      expect(gauge(before, 'coa_idempotency_oldest_age_seconds')).toBeGreaterThan(24 * 3600);

      const swept = await t.server.sweeper.runOnce();
      expect(swept.removed).toBe(2_000);
      expect(table.getCount({ start: `${stale.id}:`, end: `${stale.id};` })).toBe(0);
      expect(table.getCount({ start: `${fresh.id}:`, end: `${fresh.id};` })).toBe(50_000);
      const after = (await t.admin('GET', '/metrics')).text;
      expect(gauge(after, 'coa_idempotency_records')).toBe(50_000);
      expect(gauge(after, 'coa_idempotency_oldest_age_seconds')).toBeLessThan(24 * 3600);
      // Nothing more to do: a second sweep removes nothing and the fresh keys still replay.
      expect((await t.server.sweeper.runOnce()).removed).toBe(0);
      const replay = await t.api('POST', '/api/v1/order', fresh, order(service, 1), { 'idempotency-key': 'new-49999' });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect((await t.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
    });
  }, 300_000);
});


describe('Idempotency-Key after the operator changes the catalogue', () => {
  // The key's payload is what the client sent, not how the catalogue reads
  // it: a retry replays its first answer whatever the operator changed since.

  const t = useServer();

  const credits = async (c: Creds) => (await t.api('GET', '/api/v1/balance', c)).body.credits;
  const post = (c: Creds, body: object, key: string) => t.api('POST', '/api/v1/order', c, body, { 'idempotency-key': key });
  const stored = (c: Creds, key: string) => t.server.context.store.tables.idempotency.get(`${c.id}:${key}`);
  const patch = async (id: number, fields: object) => expect((await t.admin('PATCH', `/admin/v1/services/${id}`, fields)).status).toBe(200);

  async function expectReplay(c: Creds, body: object, key: string, first: string): Promise<void> {
    const again = await post(c, body, key);
    expect(again.status, again.text).toBe(201);
    expect(again.text).toBe(first);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  }

  it('drip-feed turned off: the retry replays, before and after a restart; a new key is VALIDATION and stores nothing; a different payload is 422', async () => {
    const c = await t.createAccount('drip-off', '100');
    const drip = await t.createService({ rate: '0.1', min: 10, max: 1000, dripfeed: true });
    const body = { service: drip, target: 'https://t.me/x', quantity: 100, runs: 3, interval: 10 };
    const first = await post(c, body, 'drip-1');
    expect(first.status, first.text).toBe(201);
    const charged = await credits(c);
    expect(charged).toBe(70);

    await patch(drip, { dripfeed: false });
    await expectReplay(c, body, 'drip-1', first.text);

    const fresh = await post(c, body, 'drip-2');
    expect(fresh.status, fresh.text).toBe(400);
    expect(fresh.body.error).toBe('VALIDATION');
    expect(stored(c, 'drip-2')).toBeUndefined();

    // Valid under the new catalogue, but not the payload the key was used with.
    const other = await post(c, { service: drip, target: 'https://t.me/x', quantity: 100 }, 'drip-1');
    expect(other.status, other.text).toBe(422);
    expect(other.body.error).toBe('IDEMPOTENCY');
    expect(await credits(c)).toBe(charged);

    await t.restart();
    await expectReplay(c, body, 'drip-1', first.text);
    expect(await credits(c)).toBe(charged);
  });

  it('type changed: a retry that the new type refuses replays, and so does one it reads differently', async () => {
    const c = await t.createAccount('retyped', '100');
    const drip = await t.createService({ rate: '0.1', min: 10, max: 1000, dripfeed: true });
    const comments = await t.createService({ rate: '0.5', min: 1, max: 10, type: 'Custom Comments' });
    const dripBody = { service: drip, target: 'https://t.me/x', quantity: 100, runs: 3, interval: 10 };
    // Two comments: quantity 2 as Custom Comments, 1 as a Custom Comments Package.
    const commentsBody = { service: comments, target: 'https://t.me/x', comments: 'nice\ngreat' };
    const firstDrip = await post(c, dripBody, 'typed-1');
    const firstComments = await post(c, commentsBody, 'typed-2');
    expect([firstDrip.status, firstComments.status]).toEqual([201, 201]);
    const charged = await credits(c);

    await patch(drip, { type: 'Package' });
    await patch(comments, { type: 'Custom Comments Package' });
    // Still valid, but read as another quantity (it was 422 IDEMPOTENCY).
    await expectReplay(c, commentsBody, 'typed-2', firstComments.text);
    // Refused by the new type (it was 400 VALIDATION).
    await expectReplay(c, dripBody, 'typed-1', firstDrip.text);
    // A new key gets the new type's verdict.
    const fresh = await post(c, dripBody, 'typed-3');
    expect(fresh.body.error).toBe('VALIDATION');
    expect(stored(c, 'typed-3')).toBeUndefined();
    expect(await credits(c)).toBe(charged);

    await t.restart();
    await expectReplay(c, dripBody, 'typed-1', firstDrip.text);
    await expectReplay(c, commentsBody, 'typed-2', firstComments.text);
  });
});
