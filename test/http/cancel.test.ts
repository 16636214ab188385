import { describe, expect, it } from 'vitest';
import { allPages } from '../helpers/admin-pages.js';
import { order, useServer } from '../helpers/server.js';

/** Customer cancel over HTTP, and its races with the operator: never a second refund. */
describe('customer cancel', () => {
  const t = useServer({
    services: { cancelable: { rate: '1', min: 1, max: 100, cancel: true }, fixed: { rate: '1', min: 1, max: 100 } },
    accounts: { alice: '10000' },
  });

  async function place(service = t.services.cancelable, quantity = 10): Promise<string> {
    const r = await t.api('POST', '/api/v1/order', t.accounts.alice, order(service, quantity));
    expect(r.status).toBe(201);
    return r.body.order;
  }
  const credits = async (): Promise<number> => (await t.api('GET', '/api/v1/balance', t.accounts.alice)).body.credits;

  it('cancels a pending order at once with its whole debit refunded, and answers per order', async () => {
    const pending = await place();
    const started = await place();
    await t.admin('POST', `/admin/v1/orders/${started}/status`, { status: 'in_progress' });
    const done = await place();
    await t.admin('POST', `/admin/v1/orders/${done}/status`, { status: 'completed' });
    const notAllowed = await place(t.services.fixed);
    const before = await credits();
    const r = await t.api('POST', '/api/v1/cancel', t.accounts.alice, { orders: [pending, started, done, notAllowed, 'x'.repeat(22), 'bad'] });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      orders: {
        [pending]: { status: 'canceled', refund: 10 },
        [started]: { status: 'in_progress', cancel_requested: true },
        [done]: { error: 'CONFLICT', message: 'The order is already completed; a final order cannot be canceled.' },
        [notAllowed]: { error: 'CONFLICT', message: "This order's service does not allow cancellation." },
        ['x'.repeat(22)]: { error: 'NOT_FOUND', message: expect.any(String) },
        bad: { error: 'VALIDATION', message: expect.stringMatching(/not an order id/) },
      },
    });
    expect(await credits()).toBe(before + 10);
    // Durable before the reply: a restart keeps the cancel and the refund.
    await t.restart();
    expect((await t.api('GET', `/api/v1/status?order=${pending}`, t.accounts.alice)).body.status).toBe('canceled');
    expect(await credits()).toBe(before + 10);
    const again = await t.api('POST', '/api/v1/cancel', t.accounts.alice, { orders: [started] });
    expect(again.body.orders[started].message).toMatch(/already open/);
  });

  it('the operator sees cancel requests and resolves them with partial; the refund is remains × rate, once', async () => {
    const id = await place();
    await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'processing' });
    await t.api('POST', '/api/v1/cancel', t.accounts.alice, { orders: [id] });
    const queue = await t.admin('GET', '/admin/v1/orders?cancel_requested=true');
    expect(queue.body.orders.map((o: { id: string }) => o.id)).toContain(id);
    expect(queue.body.orders.find((o: { id: string }) => o.id === id)).toMatchObject({ cancel_requested: true, status: 'processing' });
    const before = await credits();
    const resolved = await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'partial', remains: 4 });
    expect(resolved.body.refund).toBe(4);
    expect(await credits()).toBe(before + 4);
    const after = await t.admin('GET', '/admin/v1/orders?cancel_requested=true');
    expect(after.body.orders.map((o: { id: string }) => o.id)).not.toContain(id);
  });

  it('the cancel-request queue pages with a cursor: processing first, then in_progress, each oldest first', async () => {
    const ids: string[] = [];
    for (const status of ['in_progress', 'processing', 'processing', 'in_progress']) {
      const id = await place();
      await t.admin('POST', `/admin/v1/orders/${id}/status`, { status });
      await t.api('POST', '/api/v1/cancel', t.accounts.alice, { orders: [id] });
      ids.push(id);
    }
    const pages = await allPages<{ id: string }>(t, '/admin/v1/orders?cancel_requested=true&limit=1', 'orders');
    const seen = pages.flatMap((page) => page.items.map((o) => o.id));
    const mine = seen.filter((id) => ids.includes(id));
    expect(mine).toEqual([ids[1], ids[2], ids[0], ids[3]]);
    expect(new Set(seen).size).toBe(seen.length);
    const bad = await t.admin('GET', '/admin/v1/orders?cancel_requested=true&cursor=nonsense');
    expect(bad.status).toBe(400);
  });

  it('at most 100 orders per request, and the body must name them', async () => {
    const many = await t.api('POST', '/api/v1/cancel', t.accounts.alice, { orders: Array.from({ length: 101 }, (_, i) => `o${i}`) });
    expect(many.status).toBe(400);
    expect(many.body.message).toMatch(/the limit is 100 per request/);
    const wrong = await t.api('POST', '/api/v1/cancel', t.accounts.alice, { order: 'x' });
    expect(wrong.status).toBe(400);
  });

  it('races: customer cancels and operator moves of one order, in every interleaving, refund exactly once', async () => {
    const moves = [{ status: 'canceled' }, { status: 'partial', remains: 5 }, { status: 'completed' }, { status: 'processing' }];
    for (let round = 0; round < 12; round++) {
      const id = await place();
      const before = await credits();
      const move = moves[round % moves.length]!;
      const requests = [
        t.api('POST', '/api/v1/cancel', t.accounts.alice, { orders: [id] }),
        t.admin('POST', `/admin/v1/orders/${id}/status`, move),
        t.api('POST', '/api/v1/cancel', t.accounts.alice, { orders: [id] }),
        t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'canceled' }),
      ];
      if (round % 2 === 1) requests.reverse();
      await Promise.all(requests);
      const final = (await t.admin('GET', `/admin/v1/orders/${id}`)).body.order;
      const refunded = (await credits()) - before;
      const expected = final.status === 'canceled' ? 10 : final.status === 'partial' ? 5 : 0;
      expect(refunded).toBe(expected);
    }
    const verify = await t.admin('GET', '/admin/v1/verify');
    expect(verify.body.report.ok).toBe(true);
  });
});
