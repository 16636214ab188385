import { describe, expect, it } from 'vitest';
import { useServer, type Creds } from '../helpers/server.js';

/** Order types and drip-feed over HTTP: each type's inputs, checks, charge, and what the order keeps. */
describe('order types', () => {
  let creds: Creds;
  const service: Record<string, number> = {};

  async function serviceOf(type: string, extra: Record<string, unknown> = {}): Promise<number> {
    const r = await t.admin('POST', '/admin/v1/services', { platform: 'instagram', name: type, rate: '0.5', min: 2, max: 100, type, ...extra });
    expect(r.status).toBe(201);
    return r.body.service.id;
  }

  async function adminOrder(id: string): Promise<any> {
    return (await t.admin('GET', `/admin/v1/orders/${id}`)).body.order;
  }

  const target = 'https://instagram.com/p/abc';

  const t = useServer({}, async (t) => {
    creds = await t.createAccount('alice', '1000');
    for (const type of ['Default', 'Package', 'Custom Comments', 'Custom Comments Package', 'Mentions Custom List', 'Poll']) service[type] = await serviceOf(type);
    service['drip'] = await serviceOf('Default', { dripfeed: true });
  });

  it('Package: no quantity, one unit at the service price, whatever its min', async () => {
    const r = await t.api('POST', '/api/v1/order', creds, { service: service['Package'], target });
    expect(r.status).toBe(201);
    expect(r.body.charge).toBe(0.5);
    expect(await adminOrder(r.body.order)).toMatchObject({ type: 'Package', quantity: 1, charge: 0.5 });
    const withQty = await t.api('POST', '/api/v1/order', creds, { service: service['Package'], target, quantity: 5 });
    expect(withQty.status).toBe(400);
    expect(withQty.body.message).toMatch(/'quantity' is not taken by Package orders/);
  });

  it('Custom Comments: quantity is the number of non-empty lines; the order keeps them and the queue shows them', async () => {
    const r = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments'], target, comments: 'great!\r\nlove it\n\nwow\n' });
    expect(r.status).toBe(201);
    expect(r.body.charge).toBe(1.5);
    const status = await t.api('GET', `/api/v1/status?order=${r.body.order}`, creds);
    expect(status.body.quantity).toBe(3);
    const queue = await t.admin('GET', '/admin/v1/orders?status=pending&limit=500');
    expect(queue.body.orders.find((o: { id: string }) => o.id === r.body.order)).toMatchObject({
      type: 'Custom Comments',
      quantity: 3,
      comments: 'great!\nlove it\nwow',
      usernames: null,
    });
    // One line is below the service's min of 2: QTY, like any quantity.
    const one = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments'], target, comments: 'alone' });
    expect(one.body.error).toBe('QTY');
  });

  it('Custom Comments Package: comments at the price of one unit', async () => {
    const r = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments Package'], target, comments: 'a\nb\nc\nd' });
    expect(r.status).toBe(201);
    expect(r.body.charge).toBe(0.5);
    expect(await adminOrder(r.body.order)).toMatchObject({ type: 'Custom Comments Package', quantity: 1, comments: 'a\nb\nc\nd' });
  });

  it('Mentions Custom List: usernames, one per line', async () => {
    const r = await t.api('POST', '/api/v1/order', creds, { service: service['Mentions Custom List'], target, usernames: 'ann\nbob' });
    expect(r.status).toBe(201);
    expect(r.body.charge).toBe(1);
    expect(await adminOrder(r.body.order)).toMatchObject({ type: 'Mentions Custom List', quantity: 2, usernames: 'ann\nbob' });
  });

  it('Poll: quantity and answer_number', async () => {
    const r = await t.api('POST', '/api/v1/order', creds, { service: service['Poll'], target, quantity: 10, answer_number: 2 });
    expect(r.status).toBe(201);
    expect(await adminOrder(r.body.order)).toMatchObject({ type: 'Poll', quantity: 10, answer_number: 2 });
    const missing = await t.api('POST', '/api/v1/order', creds, { service: service['Poll'], target, quantity: 10 });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/'answer_number' is required: an integer from 1 to 100/);
  });

  it('every list has limits, and VALIDATION names the one exceeded', async () => {
    const before = (await t.api('GET', '/api/v1/balance', creds)).body.credits;
    const many = Array.from({ length: 1001 }, (_, i) => `c${i}`).join('\n');
    const lines = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments'], target, comments: many });
    expect(lines.status).toBe(400);
    expect(lines.body).toMatchObject({ error: 'VALIDATION' });
    expect(lines.body.message).toMatch(/1001 lines; the limit is 1000 lines/);
    const long = await t.api('POST', '/api/v1/order', creds, { service: service['Mentions Custom List'], target, usernames: `ok\n${'u'.repeat(65)}` });
    expect(long.body.message).toMatch(/Line 2 of 'usernames' is longer than the limit of 64 characters/);
    const empty = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments'], target, comments: '\n \n' });
    expect(empty.body.message).toMatch(/at least one non-empty line/);
    const wrong = await t.api('POST', '/api/v1/order', creds, { service: service['Default'], target, quantity: 5, comments: 'x' });
    expect(wrong.body.message).toMatch(/'comments' is not taken by Default orders/);
    // Nothing was charged for any refused order.
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(before);
  });

  it('the same Idempotency-Key with different comments is IDEMPOTENCY, with the same comments a replay', async () => {
    const headers = { 'idempotency-key': 'comments-1' };
    const first = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments'], target, comments: 'a\nb' }, headers);
    expect(first.status).toBe(201);
    const again = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments'], target, comments: 'a\nb' }, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.order).toBe(first.body.order);
    const other = await t.api('POST', '/api/v1/order', creds, { service: service['Custom Comments'], target, comments: 'a\nc' }, headers);
    expect(other.status).toBe(422);
  });
});

describe('drip-feed', () => {
  let creds: Creds;
  let drip: number;
  let plain: number;
  const target = 'https://instagram.com/p/abc';

  const t = useServer({}, async (t) => {
    creds = await t.createAccount('bob', '100');
    drip = await t.createService({ rate: '0.1', min: 10, max: 1000, dripfeed: true });
    plain = await t.createService({ rate: '0.1', min: 10, max: 1000 });
  });

  it('charges quantity × runs × rate once at placement, and the order shows runs and interval; verify agrees', async () => {
    const r = await t.api('POST', '/api/v1/order', creds, { service: drip, target, quantity: 100, runs: 5, interval: 30 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ charge: 50, balance: 50 });
    const status = await t.api('GET', `/api/v1/status?order=${r.body.order}`, creds);
    expect(status.body).toMatchObject({ quantity: 100, charge: 50, runs: 5, interval: 30 });
    const admin = await t.admin('GET', `/admin/v1/orders/${r.body.order}`);
    expect(admin.body.order).toMatchObject({ runs: 5, interval: 30, charge: 50 });
    // Canceling refunds the whole debit: all runs.
    const canceled = await t.admin('POST', `/admin/v1/orders/${r.body.order}/status`, { status: 'canceled' });
    expect(canceled.body.refund).toBe(50);
    expect((await t.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
  });

  it('counts remains over every run: status shows quantity × runs, progress records up to it, and a partial refund prices the undelivered units of all runs; verify agrees', async () => {
    const r = await t.api('POST', '/api/v1/order', creds, { service: drip, target, quantity: 100, runs: 5, interval: 30 });
    expect(r.body).toMatchObject({ charge: 50 });
    const id = r.body.order as string;
    const remains = async (): Promise<unknown> => (await t.api('GET', `/api/v1/status?order=${id}`, creds)).body.remains;
    expect(await remains()).toBe(500);
    for (const status of ['processing', 'in_progress']) expect((await t.admin('POST', `/admin/v1/orders/${id}/status`, { status })).status).toBe(200);
    expect(await remains()).toBe(500);
    const over = await t.admin('POST', `/admin/v1/orders/${id}/progress`, { remains: 501 });
    expect(over.status).toBe(400);
    expect(over.body.message).toBe('remains must be an integer from 0 to 500 (units not delivered) or null.');
    expect((await t.admin('POST', `/admin/v1/orders/${id}/progress`, { remains: 300 })).status).toBe(200);
    expect(await remains()).toBe(300);
    const all = await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'partial', remains: 500 });
    expect(all.status).toBe(400);
    expect(all.body.message).toBe('A partial order needs remains, an integer from 1 to 499 (units not delivered, of the 500 ordered over its runs).');
    const before = (await t.api('GET', '/api/v1/balance', creds)).body.credits;
    // 200 of the 500 units delivered: 300 × 0.1 back (under the old per-run count at most 99 × 0.1).
    const partial = await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'partial', remains: 300 });
    expect(partial.status, partial.text).toBe(200);
    expect(partial.body.refund).toBe(30);
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(before + 30);
    expect(await remains()).toBe(300);
    expect((await t.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
  });

  it('refuses runs below 2, a missing interval, drip-feed on a service without it, and a charge beyond the balance', async () => {
    const one = await t.api('POST', '/api/v1/order', creds, { service: drip, target, quantity: 100, runs: 1, interval: 30 });
    expect(one.body.message).toMatch(/'runs' must be an integer from 2 to 1000/);
    const noInterval = await t.api('POST', '/api/v1/order', creds, { service: drip, target, quantity: 100, runs: 3 });
    expect(noInterval.body.message).toMatch(/'interval' must be an integer from 1 to 43200/);
    const notOffered = await t.api('POST', '/api/v1/order', creds, { service: plain, target, quantity: 100, runs: 3, interval: 5 });
    expect(notOffered.status).toBe(400);
    expect(notOffered.body.message).toMatch(/does not offer drip-feed/);
    const tooMuch = await t.api('POST', '/api/v1/order', creds, { service: drip, target, quantity: 1000, runs: 20, interval: 5 });
    expect(tooMuch.status).toBe(402);
    expect(tooMuch.body.message).toMatch(/costs 2000 credits/);
  });
});
