import { describe, expect, it } from 'vitest';
import { MS_PER_DAY } from '../../src/platform/units.js';
import { order, useServer } from '../helpers/server.js';
import { cli } from '../helpers/cli.js';

describe('refills', () => {
  async function finished(service: number, status: 'completed' | 'partial' = 'completed'): Promise<string> {
    const r = await t.api('POST', '/api/v1/order', t.accounts.alice, order(service, 10));
    await t.admin('POST', `/admin/v1/orders/${r.body.order}/status`, status === 'partial' ? { status, remains: 3 } : { status });
    return r.body.order;
  }
  const credits = async (): Promise<number> => (await t.api('GET', '/api/v1/balance', t.accounts.alice)).body.credits;

  const t = useServer({
    services: { refillable: { rate: '1', min: 1, max: 100, refill: true, refill_days: 7 }, plain: { rate: '1', min: 1, max: 100 } },
    accounts: { alice: '1000', mallory: '10' },
  });

  it('opens a refill for completed and partial orders, one open at a time, with integer ids; no money moves', async () => {
    const done = await finished(t.services.refillable);
    const partial = await finished(t.services.refillable, 'partial');
    const pending = (await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.refillable, 5))).body.order;
    const notOffered = await finished(t.services.plain);
    const before = await credits();
    const r = await t.api('POST', '/api/v1/refill', t.accounts.alice, { orders: [done, partial, pending, notOffered] });
    expect(r.status).toBe(200);
    const a = r.body.orders[done].refill;
    const b = r.body.orders[partial].refill;
    expect(Number.isSafeInteger(a) && a > 0).toBe(true);
    expect(b).toBe(a + 1);
    expect(r.body.orders[pending]).toEqual({ error: 'CONFLICT', message: 'The order is pending; only completed or partial orders can be refilled.' });
    expect(r.body.orders[notOffered]).toEqual({ error: 'CONFLICT', message: "This order's service does not offer refills." });
    const again = await t.api('POST', '/api/v1/refill', t.accounts.alice, { orders: [done] });
    expect(again.body.orders[done]).toEqual({ error: 'CONFLICT', message: 'This order already has an open refill.' });
    expect(await credits()).toBe(before);

    const status = await t.api('GET', `/api/v1/refill_status?refills=${a},${b},999999`, t.accounts.alice);
    expect(status.body.refills[String(a)]).toMatchObject({ refill: a, order: done, status: 'pending' });
    expect(status.body.refills['999999']).toMatchObject({ error: 'NOT_FOUND' });
    // Another account's refill is not found either.
    expect((await t.api('GET', `/api/v1/refill_status?refills=${a}`, t.accounts.mallory)).body.refills[String(a)]).toMatchObject({ error: 'NOT_FOUND' });

    // The operator's queue and moves (admin API and CLI); forward only, final is final.
    const listed = await t.admin('GET', '/admin/v1/refills?status=pending');
    expect(listed.body.refills.map((x: { refill: number }) => x.refill)).toEqual(expect.arrayContaining([a, b]));
    expect((await t.admin('POST', `/admin/v1/refills/${a}/status`, { status: 'in_progress' })).body.refill).toMatchObject({ status: 'in_progress' });
    const moved = await cli(t, 'refill', 'set-status', String(a), '--status', 'completed', '--json');
    expect(JSON.parse(moved.out).refill).toMatchObject({ refill: a, status: 'completed' });
    const back = await t.admin('POST', `/admin/v1/refills/${a}/status`, { status: 'rejected' });
    expect(back.status).toBe(409);
    expect((await t.admin('POST', `/admin/v1/refills/${b}/status`, { status: 'rejected', reason: 'no drop found' })).status).toBe(200);
    await t.restart();
    const after = await t.api('GET', `/api/v1/refill_status?refills=${a},${b}`, t.accounts.alice);
    expect(after.body.refills[String(a)].status).toBe('completed');
    expect(after.body.refills[String(b)]).toMatchObject({ status: 'rejected', reason: 'no drop found' });
    // Once the refill is final, the order may ask again; ids keep growing across the restart.
    const next = await t.api('POST', '/api/v1/refill', t.accounts.alice, { orders: [done] });
    expect(next.body.orders[done].refill).toBeGreaterThan(b);
    expect(await credits()).toBe(before);
    expect((await t.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
  });

  it('is refused once refill_days have passed since completion (injected clock)', async () => {
    const clock = t.clock;
    const early = await finished(t.services.refillable);
    const late = await finished(t.services.refillable);
    clock.advance(7 * MS_PER_DAY - 1000);
    const inside = await t.api('POST', '/api/v1/refill', t.accounts.alice, { orders: [early] });
    expect(inside.body.orders[early].refill).toBeGreaterThan(0);
    clock.advance(2000);
    const outside = await t.api('POST', '/api/v1/refill', t.accounts.alice, { orders: [late] });
    expect(outside.body.orders[late]).toEqual({ error: 'CONFLICT', message: 'The refill window of 7 days after completion has closed.' });
  });

  it('concurrent operator moves of one refill: exactly one wins', async () => {
    const done = await finished(t.services.refillable);
    const id = (await t.api('POST', '/api/v1/refill', t.accounts.alice, { orders: [done] })).body.orders[done].refill;
    const replies = await Promise.all([
      t.admin('POST', `/admin/v1/refills/${id}/status`, { status: 'completed' }),
      t.admin('POST', `/admin/v1/refills/${id}/status`, { status: 'rejected' }),
      t.admin('POST', `/admin/v1/refills/${id}/status`, { status: 'completed' }),
    ]);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
  });
});
