import { describe, expect, it } from 'vitest';
import { order, useServer } from '../helpers/server.js';
import { cli } from '../helpers/cli.js';

/** Requests left, from the RateLimit header's `r`. */
function remaining(headers: Headers): number {
  const r = /^"default";r=(\d+);t=\d+$/.exec(headers.get('ratelimit') ?? '');
  expect(r, 'a RateLimit header').not.toBeNull();
  return Number(r![1]);
}

describe('progress and batch status', () => {

  async function place(quantity = 100, who = t.accounts.alice): Promise<string> {
    const r = await t.api('POST', '/api/v1/order', who, order(t.services.main, quantity));
    expect(r.status).toBe(201);
    return r.body.order;
  }

  const t = useServer({ services: { main: { rate: '0.01', min: 1, max: 1000 } }, accounts: { alice: '100', mallory: '100' } });

  it('GET /status shows start_count (null until known) and remains for every order; progress sets them while in_progress', async () => {
    const id = await place(100);
    const fresh = await t.api('GET', `/api/v1/status?order=${id}`, t.accounts.alice);
    expect(fresh.body).toEqual({ ok: true, order: id, number: expect.any(Number), status: 'pending', quantity: 100, charge: 1, start_count: null, remains: 100 });
    // The operator's view carries what the customer sees as remains_shown.
    expect((await t.admin('GET', `/admin/v1/orders/${id}`)).body.order).toMatchObject({ remains: null, progress_remains: null, remains_shown: 100 });
    const early = await t.admin('POST', `/admin/v1/orders/${id}/progress`, { start_count: 5 });
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/progress is recorded only while it is in_progress/);
    await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'in_progress' });
    const set = await t.admin('POST', `/admin/v1/orders/${id}/progress`, { start_count: 1234, remains: 60 });
    expect(set.status).toBe(200);
    expect(set.body.order).toMatchObject({ start_count: 1234, progress_remains: 60 });
    // An absent field stays as it was.
    await t.admin('POST', `/admin/v1/orders/${id}/progress`, { remains: 40 });
    await t.restart();
    const during = await t.api('GET', `/api/v1/status?order=${id}`, t.accounts.alice);
    expect(during.body).toMatchObject({ status: 'in_progress', start_count: 1234, remains: 40 });
    expect((await t.admin('GET', `/admin/v1/orders/${id}`)).body.order).toMatchObject({ remains: null, progress_remains: 40, remains_shown: 40 });
    const bad = await t.admin('POST', `/admin/v1/orders/${id}/progress`, { remains: 101 });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/remains must be an integer from 0 to 100/);
    await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'partial', remains: 40 });
    expect((await t.api('GET', `/api/v1/status?order=${id}`, t.accounts.alice)).body).toMatchObject({ status: 'partial', start_count: 1234, remains: 40 });
    expect((await t.admin('GET', `/admin/v1/orders/${id}`)).body.order).toMatchObject({ remains: 40, remains_shown: 40 });
    expect((await t.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
  });

  it('the CLI records progress', async () => {
    const id = await place(10);
    await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'in_progress' });
    const r = await cli(t, 'order', 'progress', id, '--start-count', '77', '--remains', '3', '--json');
    expect(r.err).toBe('');
    expect(JSON.parse(r.out).order).toMatchObject({ start_count: 77, progress_remains: 3 });
  });

  it('GET /status?orders=a,b,c answers per order in one request and one rate-limit token', async () => {
    const a = await place(5);
    const b = await place(7);
    const foreign = await place(3, t.accounts.mallory);
    await t.admin('POST', `/admin/v1/orders/${b}/status`, { status: 'completed' });
    const before = await t.api('GET', '/api/v1/balance', t.accounts.alice);
    const remainingBefore = remaining(before.headers);
    const r = await t.api('GET', `/api/v1/status?orders=${a},${b},${foreign},nonsense`, t.accounts.alice);
    expect(r.status).toBe(200);
    expect(remaining(r.headers)).toBe(remainingBefore - 1);
    expect(r.body).toEqual({
      ok: true,
      orders: {
        [a]: { order: a, number: expect.any(Number), status: 'pending', quantity: 5, charge: 0.05, start_count: null, remains: 5 },
        [b]: { order: b, number: expect.any(Number), status: 'completed', quantity: 7, charge: 0.07, start_count: null, remains: 0 },
        [foreign]: { error: 'NOT_FOUND', message: 'No order with this id exists on this account.' },
        nonsense: { error: 'VALIDATION', message: expect.stringMatching(/not an order id/) },
      },
    });
  });

  it('batch status refuses more than 100 ids and mixing order= with orders=, naming the limit', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `id${i}`).join(',');
    const many = await t.api('GET', `/api/v1/status?orders=${ids}`, t.accounts.alice);
    expect(many.status).toBe(400);
    expect(many.body.message).toMatch(/101 ids; the limit is 100/);
    const a = await place(5);
    const both = await t.api('GET', `/api/v1/status?order=${a}&orders=${a}`, t.accounts.alice);
    expect(both.status).toBe(400);
    // The single form is unchanged.
    const single = await t.api('GET', `/api/v1/status?order=${a}`, t.accounts.alice);
    expect(single.body).toMatchObject({ ok: true, order: a, status: 'pending' });
  });
});
