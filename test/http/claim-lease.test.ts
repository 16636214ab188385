import { describe, expect, it } from 'vitest';
import { order, useServer, type CustomerServer } from '../helpers/server.js';
import { cli } from '../helpers/cli.js';
import { LeaseSweeper } from '../../src/actors/index.js';

const SECOND_MS = 1000;

type T = CustomerServer<'main', 'alice'>;

/** Places one order of 10 units at 0.01 (0.1 credits) for alice and returns its id. */
async function placed(t: T): Promise<string> {
  const r = await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 10));
  expect(r.status).toBe(201);
  return r.body.order;
}

async function claimed(t: T, worker: string, extra: Record<string, unknown> = {}): Promise<string[]> {
  const r = await t.admin('POST', '/admin/v1/orders/claim', { limit: 10, worker, ...extra });
  expect(r.status, r.text).toBe(200);
  return r.body.orders.map((o: { id: string }) => o.id);
}

async function shown(t: T, id: string): Promise<Record<string, unknown>> {
  return (await t.admin('GET', `/admin/v1/orders/${id}`)).body.order;
}

async function credits(t: T): Promise<string> {
  return (await t.api('GET', '/api/v1/balance', t.accounts.alice)).text.match(/"credits":([0-9.]+)/)![1]!;
}

async function verified(t: T): Promise<void> {
  const r = await t.admin('GET', '/admin/v1/verify');
  expect(r.body.report?.firstBroken ?? null, r.text).toBe(null);
  expect(r.body.report.ok).toBe(true);
}

/** A claim holds its orders for a lease; the holder extends or releases it; an ended lease puts the order back in the queue. */
describe('claim leases', () => {
  const t = useServer({ perTest: true, services: { main: { rate: '0.01', min: 1, max: 1000 } }, accounts: { alice: '10' } });

  it('a claim holds its orders for lease_seconds (five minutes by default), shown in listings', async () => {
    const a = await placed(t);
    const b = await placed(t);
    const start = t.clock.wallMs();
    expect(await claimed(t, 'w1', { lease_seconds: 60 })).toEqual([a, b]);
    const listing = (await t.admin('GET', '/admin/v1/orders?status=processing')).body.orders;
    expect(listing.map((o: Record<string, unknown>) => [o.id, o.worker, o.lease_expires_at])).toEqual([
      [a, 'w1', new Date(start + 60 * SECOND_MS).toISOString()],
      [b, 'w1', new Date(start + 60 * SECOND_MS).toISOString()],
    ]);
    const c = await placed(t);
    const r = await t.admin('POST', '/admin/v1/orders/claim', { limit: 1, worker: 'w2' });
    expect(r.body).toMatchObject({ worker: 'w2', lease_seconds: 300 });
    expect(r.body.orders[0]).toMatchObject({ id: c, lease_expires_at: new Date(start + 300 * SECOND_MS).toISOString() });
  });

  it('refuses a lease outside its bounds and unknown fields, and claims nothing then', async () => {
    await placed(t);
    for (const lease of [9, 86_401, 1.5, '60']) {
      const r = await t.admin('POST', '/admin/v1/orders/claim', { limit: 1, worker: 'w1', lease_seconds: lease });
      expect(r.status).toBe(400);
      expect(r.body.message).toBe('lease_seconds must be an integer from 10 to 86400.');
    }
    const typo = await t.admin('POST', '/admin/v1/orders/claim', { limit: 1, worker: 'w1', lease: 60 });
    expect(typo.status).toBe(400);
    expect(typo.body.message).toMatch(/Field 'lease' is not allowed here/);
    expect((await t.admin('GET', '/admin/v1/orders?status=pending')).body.orders).toHaveLength(1);
  });

  it('the holder extends its lease; another worker cannot, nor act on the order', async () => {
    const a = await placed(t);
    await claimed(t, 'w1', { lease_seconds: 30 });
    t.clock.advance(20 * SECOND_MS);
    const extended = await cli(t, 'order', 'extend', a, '--worker', 'w1', '--lease-seconds', '120');
    const endsAt = new Date(t.clock.wallMs() + 120 * SECOND_MS).toISOString();
    expect(extended.out).toBe(`w1 holds order ${a} until ${endsAt}.\n`);
    expect((await shown(t, a)).lease_expires_at).toBe(endsAt);
    const other = await t.admin('POST', `/admin/v1/orders/${a}/extend`, { worker: 'w2' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ error: 'CONFLICT', message: `Order ${a} is held by w1, not by w2.` });
    const move = await t.admin('POST', `/admin/v1/orders/${a}/status`, { status: 'in_progress', worker: 'w2' });
    expect(move.status).toBe(409);
    // 30 s after the first lease would have ended, the extended one still holds.
    t.clock.advance(40 * SECOND_MS);
    expect(await t.server.leases.step()).toBe(0);
    const started = await t.admin('POST', `/admin/v1/orders/${a}/status`, { status: 'in_progress', worker: 'w1' });
    expect(started.body.order).toMatchObject({ status: 'in_progress', worker: 'w1', lease_expires_at: null });
    // Moving on ends the lease: the order is the worker's until it is final, and there is no lease to extend.
    const late = await t.admin('POST', `/admin/v1/orders/${a}/extend`, { worker: 'w1' });
    expect(late.body.message).toBe(`Order ${a} is in_progress; only a processing order has a lease to extend or release.`);
    t.clock.advance(3600 * SECOND_MS);
    expect(await t.server.leases.step()).toBe(0);
    expect((await t.admin('POST', `/admin/v1/orders/${a}/progress`, { remains: 4, worker: 'w1' })).status).toBe(200);
    await verified(t);
  });

  it('a released order is pending again, held by nobody, and the next claim takes it; no money moves', async () => {
    const a = await placed(t);
    const before = await credits(t);
    await claimed(t, 'w1');
    const released = await cli(t, 'order', 'release', a, '--worker', 'w1');
    expect(released.out).toBe(`Order ${a} is pending again, back in the claim queue (released by w1).\n`);
    expect(await shown(t, a)).toMatchObject({ status: 'pending', worker: null, lease_expires_at: null });
    expect((await t.api('GET', `/api/v1/status?order=${a}`, t.accounts.alice)).body.status).toBe('pending');
    const again = await t.admin('POST', `/admin/v1/orders/${a}/release`, { worker: 'w1' });
    expect(again.body).toMatchObject({ error: 'CONFLICT', message: `Order ${a} is pending, back in the claim queue: w1 no longer holds it; claim it again.` });
    expect(await claimed(t, 'w2')).toEqual([a]);
    expect(await credits(t)).toBe(before);
    await verified(t);
  });

  it('an ended lease puts the order back in the queue (the sweep, on the injected clock); the old worker gets CONFLICT', async () => {
    const a = await placed(t);
    const before = await credits(t);
    await claimed(t, 'w1', { lease_seconds: 30 });
    t.clock.advance(30 * SECOND_MS - 1);
    expect(await t.server.leases.step()).toBe(0);
    expect(await shown(t, a)).toMatchObject({ status: 'processing', worker: 'w1' });
    t.clock.advance(1);
    // Ended, not yet swept: the worker holds it no longer.
    const ended = await t.admin('POST', `/admin/v1/orders/${a}/status`, { status: 'in_progress', worker: 'w1' });
    expect(ended.body.message).toBe(`The lease of w1 on order ${a} ended at ${new Date(t.clock.wallMs()).toISOString()}; the order goes back to the claim queue.`);
    expect(await t.server.leases.step()).toBe(1);
    expect(await shown(t, a)).toMatchObject({ status: 'pending', worker: null, lease_expires_at: null });
    const stats = (await t.admin('GET', '/admin/v1/stats')).body;
    expect(JSON.stringify(stats)).toMatch(/"pending":1,"processing":0/);
    expect(await claimed(t, 'w2')).toEqual([a]);
    const progress = await t.admin('POST', `/admin/v1/orders/${a}/progress`, { remains: 1, worker: 'w1' });
    expect(progress.body).toMatchObject({ error: 'CONFLICT', message: `Order ${a} is held by w2, not by w1.` });
    expect((await t.admin('POST', `/admin/v1/orders/${a}/status`, { status: 'completed', worker: 'w2' })).body.order.status).toBe('completed');
    expect(await credits(t)).toBe(before);
    await verified(t);
  });

  it('a claim takes orders whose lease has ended at once, without waiting for the sweep, oldest first', async () => {
    const a = await placed(t);
    await claimed(t, 'w1', { lease_seconds: 10 });
    const b = await placed(t);
    t.clock.advance(10 * SECOND_MS);
    expect(await claimed(t, 'w2')).toEqual([a, b]);
    await verified(t);
  });

  it('the sweep puts back at most its step of ended leases per tick, and only on the leader', async () => {
    const ids = [await placed(t), await placed(t), await placed(t), await placed(t), await placed(t)];
    await claimed(t, 'w1', { lease_seconds: 10 });
    t.clock.advance(10 * SECOND_MS);
    const { store, registry } = t.server.context;
    const follower = new LeaseSweeper(store, registry, t.clock, () => false, 2);
    expect(await follower.step()).toBe(0);
    expect((await t.admin('GET', '/admin/v1/orders?status=processing')).body.orders).toHaveLength(5);
    const leader = new LeaseSweeper(store, registry, t.clock, () => true, 2);
    expect([await leader.step(), await leader.step(), await leader.step(), await leader.step()]).toEqual([2, 2, 1, 0]);
    const pending = (await t.admin('GET', '/admin/v1/orders?status=pending')).body.orders;
    expect(pending.map((o: { id: string }) => o.id)).toEqual(ids);
    await verified(t);
  });

  it('a lease survives a restart and ends on time after it', async () => {
    const a = await placed(t);
    const start = t.clock.wallMs();
    await claimed(t, 'w1', { lease_seconds: 60 });
    await t.restart();
    expect(await shown(t, a)).toMatchObject({ status: 'processing', worker: 'w1', lease_expires_at: new Date(start + 60 * SECOND_MS).toISOString() });
    t.clock.advance(60 * SECOND_MS);
    expect(await t.server.leases.step()).toBe(1);
    expect((await shown(t, a)).status).toBe('pending');
    await verified(t);
  });

  it('a move without a worker is the operator’s, whoever holds the order', async () => {
    const a = await placed(t);
    await claimed(t, 'w1');
    const moved = await t.admin('POST', `/admin/v1/orders/${a}/status`, { status: 'canceled', reason: 'by hand' });
    expect(moved.body).toMatchObject({ refund: 0.1, order: { status: 'canceled', lease_expires_at: null } });
    expect(await t.server.leases.step()).toBe(0);
    await verified(t);
  });
});
