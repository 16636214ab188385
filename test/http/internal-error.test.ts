import { describe, expect, it } from 'vitest';
import { order, withServer } from '../helpers/server.js';

describe('a fault inside a handler answers 500 INTERNAL and the server keeps serving', () => {
  it('turns a thrown storage error into 500 INTERNAL, synchronously and after a durability wait', async () => {
    await withServer({ services: { main: { rate: '1', min: 1, max: 10 } }, accounts: { i: '10' } }, async (t) => {
      const placed = await t.api('POST', '/api/v1/order', t.accounts.i, order(t.services.main, 1));
      const ctx = t.server.context;
      const read = ctx.orders.read;
      ctx.orders.read = () => {
        throw new Error('injected storage fault');
      };
      const status = await t.api('GET', `/api/v1/status?order=${placed.body.order}`, t.accounts.i);
      expect(status.status).toBe(500);
      expect(status.body).toMatchObject({ ok: false, error: 'INTERNAL' });
      const show = await t.admin('GET', `/admin/v1/orders/${placed.body.order}`);
      expect(show.status).toBe(500);
      ctx.orders.read = read;
      expect((await t.api('GET', `/api/v1/status?order=${placed.body.order}`, t.accounts.i)).status).toBe(200);
      expect((await t.api('POST', '/api/v1/order', t.accounts.i, order(t.services.main, 1))).status).toBe(201);
    });
  });
});
