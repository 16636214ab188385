import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { allPages } from '../helpers/admin-pages.js';
import { order, useServer } from '../helpers/server.js';

describe('processing system: status moves and refunds', () => {
  const t = useServer({ services: { main: { rate: '0.013', min: 1, max: 10_000 } }, accounts: { alice: '100' } });

  const credits = async () => (await t.api('GET', '/api/v1/balance', t.accounts.alice)).body.credits;
  const place = async (q: number) => (await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, q))).body.order as string;
  const move = (id: string, body: object) => t.admin('POST', `/admin/v1/orders/${id}/status`, body);

  it('moves forward through the states and completes without a refund', async () => {
    const id = await place(100);
    expect(await credits()).toBe(98.7);
    expect((await move(id, { status: 'processing' })).body.order.status).toBe('processing');
    expect((await move(id, { status: 'in_progress' })).status).toBe(200);
    const done = await move(id, { status: 'completed' });
    expect(done.body).toMatchObject({ ok: true, refund: 0, order: { status: 'completed' } });
    expect(await credits()).toBe(98.7);
    expect((await t.api('GET', `/api/v1/status?order=${id}`, t.accounts.alice)).body.status).toBe('completed');
  });

  it('canceled refunds the whole debit, exactly once', async () => {
    const before = await credits();
    const id = await place(77);
    const canceled = await move(id, { status: 'canceled' });
    expect(canceled.body.refund).toBe(1.001);
    expect(await credits()).toBe(before);
    const again = await move(id, { status: 'canceled' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('CONFLICT');
    expect(await credits()).toBe(before);
  });

  it('partial refunds remains × rate and the customer sees remains', async () => {
    const before = await credits();
    const id = await place(1000);
    const partial = await move(id, { status: 'partial', remains: 333 });
    expect(partial.body.refund).toBe(4.329);
    expect(await credits()).toBe(Math.round((before - 13 + 4.329) * 1e6) / 1e6);
    const status = await t.api('GET', `/api/v1/status?order=${id}`, t.accounts.alice);
    expect(status.body).toEqual({ ok: true, order: id, number: expect.any(Number), status: 'partial', quantity: 1000, charge: 13, start_count: null, remains: 333 });
  });

  it('refuses illegal moves with clear errors and changes nothing', async () => {
    const id = await place(10);
    await move(id, { status: 'in_progress' });
    const backwards = await move(id, { status: 'processing' });
    expect(backwards.status).toBe(409);
    expect(backwards.body.message).toContain('forward');
    expect((await move(id, { status: 'partial' })).status).toBe(400);
    expect((await move(id, { status: 'partial', remains: 10 })).status).toBe(400);
    expect((await move(id, { status: 'completed', remains: 1 })).status).toBe(400);
    expect((await move(id, { status: 'shipped' })).status).toBe(400);
    expect((await move('A'.repeat(22), { status: 'canceled' })).status).toBe(404);
    expect((await t.admin('GET', `/admin/v1/orders/${id}`)).body.order.status).toBe('in_progress');
  });

  it('two concurrent cancels refund once', async () => {
    const before = await credits();
    const id = await place(50);
    const replies = await Promise.all([move(id, { status: 'canceled' }), move(id, { status: 'canceled' })]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await credits()).toBe(before);
  });

  it('lists orders by status, oldest first, with a cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await place(1));
    const pages = await allPages<{ id: string }>(t, '/admin/v1/orders?status=pending&limit=2', 'orders');
    for (const page of pages) expect(page.items.length).toBeLessThanOrEqual(2);
    const seen = pages.flatMap((page) => page.items.map((o) => o.id));
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids.filter((id) => seen.includes(id)));
    for (const id of ids) expect(seen).toContain(id);
    expect((await t.admin('GET', '/admin/v1/orders?status=nope')).status).toBe(400);
    expect((await t.admin('GET', '/admin/v1/orders?cursor=zzz')).status).toBe(400);
  });

  it('panel orders go through the same checks and ledger, and record their channel', async () => {
    const before = await credits();
    const placed = await t.admin('POST', `/admin/v1/accounts/${t.accounts.alice.id}/orders`, order(t.services.main, 10));
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ ok: true, charge: 0.13, status: 'pending' });
    expect((await t.admin('GET', `/admin/v1/orders/${placed.body.order}`)).body.order.channel).toBe('panel');
    expect(await credits()).toBe(Math.round((before - 0.13) * 1e6) / 1e6);
    expect((await t.admin('POST', `/admin/v1/accounts/${t.accounts.alice.id}/orders`, order(t.services.main, 0))).body.error).toBe('QTY');
    expect((await t.admin('POST', `/admin/v1/accounts/${t.accounts.alice.id}/orders`, order(t.services.main, 10_000))).body.error).toBe('BALANCE');
    expect((await t.admin('POST', `/admin/v1/accounts/${t.accounts.alice.id}/orders`, { ...order(t.services.main, 1), price: 1 })).status).toBe(400);
    // The customer's status endpoint sees panel orders too.
    expect((await t.api('GET', `/api/v1/status?order=${placed.body.order}`, t.accounts.alice)).body.status).toBe('pending');
  });
});

describe('API Unlimited plan (simulated clock across the expiry instant)', () => {
  const clock = new ManualClock(1_000_000, Date.UTC(2026, 0, 15, 12, 0, 0));
  const t = useServer({ clock, services: { main: { rate: '2', min: 1, max: 1000 } }, accounts: { unlimited: '10' } });

  it('grants a window, priced 9,999 INR a month, and extends from the later of now and expiry', async () => {
    const grant = await t.admin('POST', `/admin/v1/accounts/${t.accounts.unlimited.id}/plan`, { months: 1 });
    expect(grant.status).toBe(200);
    expect(grant.body.price_inr).toBe(9999);
    expect(grant.body.account.unlimited_expires).toBe('2026-02-15T12:00:00.000Z');
    const extend = await t.admin('POST', `/admin/v1/accounts/${t.accounts.unlimited.id}/plan`, { months: 2 });
    expect(extend.body.price_inr).toBe(19998);
    expect(extend.body.account.unlimited_expires).toBe('2026-04-15T12:00:00.000Z');
    const balance = await t.api('GET', '/api/v1/balance', t.accounts.unlimited);
    expect(balance.body).toEqual({ ok: true, credits: 10, unlimited: true, unlimited_expires: '2026-04-15T12:00:00.000Z' });
    expect((await t.admin('POST', `/admin/v1/accounts/${t.accounts.unlimited.id}/plan`, { months: 0 })).status).toBe(400);
  });

  it('orders under the plan show their charge, debit nothing, and refund nothing when canceled', async () => {
    const planned = await t.createAccount('planned', '10');
    expect((await t.admin('POST', `/admin/v1/accounts/${planned.id}/plan`, { months: 1 })).status).toBe(200);
    const placed = await t.api('POST', '/api/v1/order', planned, order(t.services.main, 500));
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ charge: 1000, balance: 10 });
    const shown = await t.admin('GET', `/admin/v1/orders/${placed.body.order}`);
    expect(shown.body.order).toMatchObject({ unlimited: true, debit: 0, charge: 1000 });
    const canceled = await t.admin('POST', `/admin/v1/orders/${placed.body.order}/status`, { status: 'canceled' });
    expect(canceled.body.refund).toBe(0);
    expect((await t.api('GET', '/api/v1/balance', planned)).body.credits).toBe(10);
  });

  it('the wallet is used again from the expiry instant, without any background job', async () => {
    const expiring = await t.createAccount('expiring', '10');
    const grant = await t.admin('POST', `/admin/v1/accounts/${expiring.id}/plan`, { months: 3 });
    expect(grant.body.account.unlimited_expires).toBe('2026-04-15T12:00:00.000Z');
    clock.setWall(Date.UTC(2026, 3, 15, 11, 59, 59, 999));
    const before = await t.api('POST', '/api/v1/order', expiring, order(t.services.main, 100));
    expect(before.status).toBe(201);
    expect(before.body.balance).toBe(10);
    clock.setWall(Date.UTC(2026, 3, 15, 12, 0, 0));
    const after = await t.api('POST', '/api/v1/order', expiring, order(t.services.main, 100));
    expect(after.status).toBe(402);
    const small = await t.api('POST', '/api/v1/order', expiring, order(t.services.main, 5));
    expect(small.body.balance).toBe(0);
    expect((await t.api('GET', '/api/v1/balance', expiring)).body).toEqual({ ok: true, credits: 0, unlimited: false, unlimited_expires: null });
  });
});
