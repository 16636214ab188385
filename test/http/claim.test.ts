import { describe, expect, it } from 'vitest';
import { order, useServer, type Creds } from '../helpers/server.js';
import { cli } from '../helpers/cli.js';

/** The shared processing queue: oldest pending first, each order claimed exactly once. */
describe('claimable processing queue', () => {
  let creds: Creds[];
  let service: number;
  let comments: number;
  const t = useServer({}, async (t) => {
    service = await t.createService({ rate: '0.01', min: 1, max: 1000, cancel: true });
    comments = await t.createService({ rate: '0.01', min: 1, max: 1000, type: 'Custom Comments' });
    creds = [await t.createAccount('a', '1000'), await t.createAccount('b', '1000'), await t.createAccount('c', '1000')];
  });

  it('returns the oldest pending orders with their inputs and moves them to processing', async () => {
    const first = await t.api('POST', '/api/v1/order', creds[0]!, { service: comments, target: 'https://x.test/p', comments: 'one\ntwo' });
    const second = await t.api('POST', '/api/v1/order', creds[1]!, order(service, 3));
    const r = await t.admin('POST', '/admin/v1/orders/claim', { limit: 1, worker: 'w1' });
    expect(r.status).toBe(200);
    expect(r.body.orders).toHaveLength(1);
    expect(r.body.orders[0]).toMatchObject({ id: first.body.order, status: 'processing', worker: 'w1', type: 'Custom Comments', comments: 'one\ntwo' });
    const next = await cli(t, 'order', 'claim', '--limit', '5', '--worker', 'w2', '--json');
    expect(JSON.parse(next.out).orders.map((o: { id: string }) => o.id)).toEqual([second.body.order]);
    expect((await t.api('GET', `/api/v1/status?order=${second.body.order}`, creds[1]!)).body.status).toBe('processing');
    const empty = await t.admin('POST', '/admin/v1/orders/claim', { limit: 5, worker: 'w1' });
    expect(empty.body.orders).toEqual([]);
    const bad = await t.admin('POST', '/admin/v1/orders/claim', { limit: 0, worker: 'w1' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/limit must be an integer from 1 to 500/);
  });

  it('concurrent workers, a customer cancel and operator moves: every order claimed at most once, none lost', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const r = await t.api('POST', '/api/v1/order', creds[i % 3]!, order(service, 1 + (i % 5)));
      ids.push(r.body.order);
    }
    const [c0, c1] = [ids[0]!, ids[1]!];
    const claims = Array.from({ length: 8 }, (_, w) => t.admin('POST', '/admin/v1/orders/claim', { limit: 9, worker: `w${w}` }));
    const others = [
      t.api('POST', '/api/v1/cancel', creds[0]!, { orders: [c0] }),
      t.admin('POST', `/admin/v1/orders/${c1}/status`, { status: 'in_progress' }),
    ];
    const replies = await Promise.all([...claims, ...others]);
    const claimed = replies.slice(0, 8).flatMap((r) => r.body.orders.map((o: { id: string }) => o.id));
    expect(new Set(claimed).size).toBe(claimed.length);
    // 8 × 9 claim slots for 60 orders: every order the customer and operator
    // did not move first is claimed, by exactly one worker, and recorded so.
    for (const id of ids) {
      const o = (await t.admin('GET', `/admin/v1/orders/${id}`)).body.order;
      if (id === c0 && !claimed.includes(id)) expect(o.status).toBe('canceled');
      else if (id === c1 && !claimed.includes(id)) expect(o.status).toBe('in_progress');
      else {
        expect(claimed).toContain(id);
        expect(o.worker).toMatch(/^w\d$/);
        expect([id === c1 ? 'in_progress' : 'processing']).toContain(o.status);
      }
    }
    expect((await t.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
  });
});
