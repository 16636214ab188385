import { describe, expect, it } from 'vitest';
import { useServer, type Creds } from '../helpers/server.js';
import { EXAMPLE_MAX, EXAMPLE_MIN, EXAMPLE_RATE, TYPE_EXAMPLES, type ExampleFields } from './order-type-examples.js';

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
    // A quantity of 1, what clients that send quantity with every order send, is the package itself.
    const one = await t.api('POST', '/api/v1/order', creds, { service: service['Package'], target, quantity: 1 });
    expect(one.status).toBe(201);
    expect(one.body.charge).toBe(0.5);
    const withQty = await t.api('POST', '/api/v1/order', creds, { service: service['Package'], target, quantity: 5 });
    expect(withQty.status).toBe(400);
    expect(withQty.body.message).toBe("A Package order is one unit: send 'quantity' 1 or leave it out (it was 5).");
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
    expect(wrong.body.message).toBe("Field 'comments' is not taken by Default orders; they take 'target', 'quantity', 'runs', 'interval'.");
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

/** The list fields as JSON arrays of lines, as a JSON client of API v2 may send them. */
function withArrays(fields: ExampleFields): Record<string, unknown> {
  const lists = ['comments', 'usernames', 'hashtags', 'keywords', 'groups'];
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, lists.includes(k) ? String(v).split('\n') : v]));
}

describe('every order type of the dialect, through v1 and API v2', () => {
  let creds: Creds;
  let key: string;
  const services: Record<string, number> = {};
  const target = 'https://instagram.com/p/abc';

  const t = useServer({}, async (t) => {
    creds = await t.createAccount('every-type', '1000');
    key = await t.issueV2Key(creds.id);
    for (const { type } of TYPE_EXAMPLES) {
      services[type] = await t.createService({ name: type, rate: EXAMPLE_RATE, min: EXAMPLE_MIN, max: EXAMPLE_MAX, type });
    }
  });

  const balance = async (): Promise<number> => (await t.api('GET', '/api/v1/balance', creds)).body.credits;
  const v2Json = async (fields: Record<string, unknown>): Promise<any> =>
    (await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) })).json();

  it('v2 lists every type in services', async () => {
    const listed = await t.v2({ key, action: 'services' });
    expect(listed.body.map((s: { type: string }) => s.type)).toEqual(TYPE_EXAMPLES.map((e) => e.type));
  });

  it.each(TYPE_EXAMPLES)('$type: the example is placed through v1, v2 form and v2 JSON alike, charged its units × rate, its inputs shown to the operator', async (example) => {
    const before = await balance();
    const service = services[example.type]!;
    const v1 = await t.api('POST', '/api/v1/order', creds, { service, target, ...example.fields });
    expect(v1.status).toBe(201);
    expect(v1.body.charge).toBe(example.quantity * 0.5);
    const form = await t.v2({ key, action: 'add', service, link: target, ...example.fields });
    expect(form.body).toEqual({ order: v1.body.number + 1 });
    const json = await v2Json({ key, action: 'add', service, link: target, ...withArrays(example.fields) });
    expect(json).toEqual({ order: v1.body.number + 2 });
    for (const number of [v1.body.number, form.body.order, json.order]) {
      const order = (await t.admin('GET', `/admin/v1/orders/${number}`)).body.order;
      expect(order).toMatchObject({ type: example.type, quantity: example.quantity, target, ...example.shown });
    }
    expect(await balance()).toBe(before - 3 * example.quantity * 0.5);
  });

  it.each(TYPE_EXAMPLES)('$type: every malformed variant is refused with a sentence naming the field, on v1 and v2, and nothing is charged', async (example) => {
    const before = await balance();
    const service = services[example.type]!;
    for (const [fields, sentence] of example.malformed) {
      const v1 = await t.api('POST', '/api/v1/order', creds, { service, target, ...fields });
      expect({ fields, status: v1.status, error: v1.body.error }).toEqual({ fields, status: 400, error: 'VALIDATION' });
      expect(v1.body.message).toMatch(sentence);
      const v2 = await t.v2({ key, action: 'add', service, link: target, ...fields });
      expect(Object.keys(v2.body)).toEqual(['error']);
      expect(v2.body.error).toMatch(sentence);
      expect(v2.body.error).not.toMatch(/'target'/);
    }
    expect(await balance()).toBe(before);
  });

  it('a field of another type is refused by name on v1 and v2, the v2 sentence naming its fields; nothing is charged', async () => {
    const before = await balance();
    const foreign: ExampleFields = { username: 'someone', usernames: 'a\nb', comments: 'hi', hashtags: '#a', hashtag: '#a', keywords: 'k', groups: 'g', answer_number: 1, media: 'https://x.test/m' };
    for (const [field, value] of Object.entries(foreign)) {
      const v1 = await t.api('POST', '/api/v1/order', creds, { service: services['Default'], target, quantity: 10, [field]: value });
      expect(v1.body.message).toBe(`Field '${field}' is not taken by Default orders; they take 'target', 'quantity', 'runs', 'interval'.`);
      const v2 = await t.v2({ key, action: 'add', service: services['Default']!, link: target, quantity: 10, [field]: value });
      expect(v2.body).toEqual({ error: `Field '${field}' is not taken by Default orders; they take 'link', 'quantity', 'runs', 'interval'.` });
    }
    const pkg = await t.v2({ key, action: 'add', service: services['Package']!, link: target, comments: 'a' });
    expect(pkg.body).toEqual({ error: "Field 'comments' is not taken by Package orders; they take 'link', 'quantity'." });
    expect(await balance()).toBe(before);
  });
});
