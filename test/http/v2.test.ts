import { describe, expect, it } from 'vitest';
import { order, useServer, type Creds } from '../helpers/server.js';

/** What a reseller tool gets back: the status and the parsed JSON. */
interface V2Reply {
  status: number;
  body: any;
  text: string;
}

type Fields = Record<string, string | number>;

const asText = (fields: Fields): Record<string, string> => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)]));

describe('API v2', () => {
  let creds: Creds;
  let key: string;
  let service: number;

  async function reply(res: Response): Promise<V2Reply> {
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, body, text };
  }

  /** POST form-encoded, as PHP's curl sends a string of fields. */
  const form = (fields: Fields, headers: Record<string, string> = {}): Promise<V2Reply> => t.v2(fields, headers);

  async function json(fields: Record<string, unknown>): Promise<V2Reply> {
    return reply(await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) }));
  }

  async function query(fields: Fields): Promise<V2Reply> {
    return reply(await fetch(`${t.url}/api/v2?${new URLSearchParams(asText(fields))}`));
  }

  async function multipart(fields: Fields): Promise<V2Reply> {
    const data = new FormData();
    for (const [k, v] of Object.entries(fields)) data.append(k, String(v));
    return reply(await fetch(`${t.url}/api/v2`, { method: 'POST', body: data }));
  }

  async function issueKey(id: number): Promise<string> {
    const issued = await t.admin('POST', `/admin/v1/accounts/${id}/v2-key`);
    expect(issued.status).toBe(200);
    expect(issued.body.v2_key).toMatch(/^[0-9a-f]{32}$/);
    return issued.body.v2_key;
  }

  async function credits(): Promise<string> {
    return (await form({ key, action: 'balance' })).body.balance;
  }

  const t = useServer({ perTest: true, config: { currency: 'INR' } }, async (t) => {
    service = await t.createService({ name: 'Followers', rate: '0.0125', min: 10, max: 5000, category: 'Instagram Followers', cancel: true, refill: true });
    creds = await t.createAccount('reseller', '100');
    key = await issueKey(creds.id);
  });

  it('balance and services in the dialect, through every body form', async () => {
    for (const send of [form, query, multipart]) {
      const b = await send({ key, action: 'balance' });
      expect(b).toMatchObject({ status: 200, body: { balance: '100', currency: 'INR' } });
    }
    expect((await json({ key, action: 'balance' })).body).toEqual({ balance: '100', currency: 'INR' });
    const s = await form({ key, action: 'services' });
    expect(s.body).toEqual([
      { service, name: 'Followers', type: 'Default', category: 'Instagram Followers', rate: '12.5', min: '10', max: '5000', refill: true, cancel: true, dripfeed: false, average_time: 'Not enough data' },
    ]);
  });

  it('add answers the order number, charges as v1 does, and the order is the same order on both APIs', async () => {
    const added = await form({ key, action: 'add', service, link: 'https://instagram.com/p/v2', quantity: 1000 });
    expect(added.status).toBe(200);
    expect(Object.keys(added.body)).toEqual(['order']);
    const number = added.body.order as number;
    expect(Number.isSafeInteger(number)).toBe(true);
    expect(await credits()).toBe('87.5');

    // v2 → v1: the admin finds it by number, v1 status by its id.
    const admin = await t.admin('GET', `/admin/v1/orders/${number}`);
    const v1 = await t.api('GET', `/api/v1/status?order=${admin.body.order.id}`, creds);
    expect(v1.body).toMatchObject({ number, status: 'pending', quantity: 1000, charge: 12.5 });

    // v1 → v2.
    const placed = await t.api('POST', '/api/v1/order', creds, order(service, 200));
    expect(placed.body.number).toBe(number + 1);
    const status = await form({ key, action: 'status', order: placed.body.number });
    expect(status.body).toEqual({ charge: '2.5', start_count: '0', status: 'Pending', remains: '200', currency: 'INR' });

    // Operator moves show in the dialect's spelling.
    await t.admin('POST', `/admin/v1/orders/${admin.body.order.id}/status`, { status: 'in_progress' });
    await t.admin('POST', `/admin/v1/orders/${admin.body.order.id}/progress`, { start_count: 4200, remains: 300 });
    expect((await query({ key, action: 'status', order: number })).body).toEqual({ charge: '12.5', start_count: '4200', status: 'In progress', remains: '300', currency: 'INR' });
    await t.admin('POST', `/admin/v1/orders/${admin.body.order.id}/status`, { status: 'partial', remains: 100 });
    expect((await json({ key, action: 'status', order: number })).body).toMatchObject({ status: 'Partial', remains: '100' });
  });

  it('multi-status keyed by the numbers asked, with Incorrect order ID for foreign and malformed ones', async () => {
    const mine = (await form({ key, action: 'add', service, link: 'https://x.test/a', quantity: 10 })).body.order;
    const other = await t.createAccount('other', '10');
    const otherKey = await issueKey(other.id);
    const theirs = (await form({ key: otherKey, action: 'add', service, link: 'https://x.test/b', quantity: 10 })).body.order;
    const r = await form({ key, action: 'status', orders: `${mine},${theirs},abc,99999` });
    expect(r.body).toEqual({
      [mine]: { charge: '0.125', start_count: '0', status: 'Pending', remains: '10', currency: 'INR' },
      [theirs]: { error: 'Incorrect order ID' },
      abc: { error: 'Incorrect order ID' },
      '99999': { error: 'Incorrect order ID' },
    });
    const many = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
    expect((await form({ key, action: 'status', orders: many })).body.error).toMatch(/101 ids; the limit is 100/);
    expect((await form({ key, action: 'status', order: theirs })).body).toEqual({ error: 'Incorrect order ID' });
  });

  it('every error sentence, as HTTP 200 {error}, and none of them changes anything', async () => {
    const before = await credits();
    const pricey = await t.createService({ name: 'Pricey', rate: '1', min: 1, max: 5000 });
    const cases: [Fields, string][] = [
      [{ key: 'nope', action: 'balance' }, 'Invalid API key'],
      [{ action: 'balance' }, 'Invalid API key'],
      [{ key, action: 'launch' }, 'Incorrect request'],
      [{ key }, 'Incorrect request'],
      [{ key, action: 'add', service: 999, link: 'https://x.test', quantity: 100 }, 'Incorrect service ID'],
      [{ key, action: 'add', service: 'x', link: 'https://x.test', quantity: 100 }, 'Incorrect service ID'],
      [{ key, action: 'add', service, link: 'https://x.test', quantity: 5 }, 'Quantity less than minimal 10'],
      [{ key, action: 'add', service, link: 'https://x.test', quantity: 6000 }, 'Quantity more than maximal 5000'],
      [{ key, action: 'add', service: pricey, link: 'https://x.test', quantity: 101 }, 'Not enough funds on balance'],
      [{ key, action: 'add', service, link: 'not a url', quantity: 100 }, 'Incorrect link: send an http or https URL of at most 2048 characters, without spaces or control characters.'],
      [{ key, action: 'add', service, quantity: 100 }, 'Send the link to promote in the link field.'],
      [{ key, action: 'add', service, link: 'https://x.test', quantity: '1e3' }, "Field 'quantity' must be a whole number."],
      [{ key, action: 'status', order: 12345 }, 'Incorrect order ID'],
      [{ key, action: 'status' }, 'Send order (one ID) or orders (IDs separated by commas, at most 100).'],
      [{ key, action: 'refill_status', refill: 777 }, 'Incorrect refill ID'],
    ];
    for (const [fields, sentence] of cases) {
      const r = await form(fields);
      expect({ fields, status: r.status, body: r.body }).toEqual({ fields, status: 200, body: { error: sentence } });
    }
    // Malformed requests: a bad escape, a body that is not UTF-8, an unknown content type, a wrong method.
    const bad = await reply(await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `key=${key}&action=%ZZ` }));
    expect(bad.body).toEqual({ error: 'The form-encoded body is malformed.' });
    const latin = await reply(await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from([0x6b, 0x65, 0x79, 0x3d, 0xff]) }));
    expect(latin.body).toEqual({ error: 'The request body is not valid UTF-8.' });
    const xml = await reply(await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body: '<key/>' }));
    expect(xml.body.error).toMatch(/form-encoded/);
    // A JSON number the server would round to another value (here the quantity 100) is refused, not rounded.
    const rounded = await reply(
      await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"key":"${key}","action":"add","service":${service},"link":"https://x.test","quantity":100.0000000000000001}` }),
    );
    expect(rounded.body.error).toMatch(/^The number 100\.0000000000000001 cannot be read exactly/);
    const put = await reply(await fetch(`${t.url}/api/v2`, { method: 'PUT', body: 'x' }));
    expect(put).toMatchObject({ status: 200, body: { error: '/api/v2 accepts POST (form fields) or GET (query string).' } });
    expect(await credits()).toBe(before);
    const listed = await t.admin('GET', `/admin/v1/orders?account=${creds.id}`);
    expect(listed.body.orders ?? []).toEqual([]);
  });

  it('a revoked or rotated key stops working; the ban and the rate limit apply as on v1, one bucket for both APIs', async () => {
    const rotated = await issueKey(creds.id);
    expect((await form({ key, action: 'balance' })).body).toEqual({ error: 'Invalid API key' });
    key = rotated;
    expect((await form({ key, action: 'balance' })).body.balance).toBe('100');
    await t.admin('PATCH', `/admin/v1/accounts/${creds.id}`, { rate_limit_per_minute: 3 });
    // One token on v1, one on v2, one more on v2: the fourth request, on either API, is refused.
    expect((await t.api('GET', '/api/v1/balance', creds)).status).toBe(200);
    expect((await form({ key, action: 'balance' })).body.balance).toBe('100');
    const third = await form({ key, action: 'services' });
    expect(third.status).toBe(200);
    const limited = await form({ key, action: 'balance' });
    expect(limited.body.error).toMatch(/Rate limit of 3 requests per minute exceeded/);
    expect((await t.api('GET', '/api/v1/balance', creds)).status).toBe(429);
    await t.admin('PATCH', `/admin/v1/accounts/${creds.id}`, { rate_limit_per_minute: 1000, banned: true });
    expect((await form({ key, action: 'add', service, link: 'https://x.test', quantity: 10 })).body.error).toMatch(/API access is disabled/);
    await t.admin('PATCH', `/admin/v1/accounts/${creds.id}`, { banned: false });
    const revoked = await t.admin('DELETE', `/admin/v1/accounts/${creds.id}/v2-key`);
    expect(revoked.status).toBe(200);
    expect((await form({ key, action: 'balance' })).body).toEqual({ error: 'Invalid API key' });
    // The key survives a restart hashed, and so does its revocation.
    key = await issueKey(creds.id);
    await t.restart();
    expect((await form({ key, action: 'balance' })).body.balance).toBe('100');
  });

  it('the Unlimited plan: add costs nothing while the window is active', async () => {
    await t.admin('POST', `/admin/v1/accounts/${creds.id}/plan`, { months: 1 });
    const added = await form({ key, action: 'add', service, link: 'https://x.test/u', quantity: 5000 });
    expect(added.body.order).toBeGreaterThan(0);
    expect(await credits()).toBe('100');
  });

  /** A body exactly as PHP's provider classes build it: name=urlencode(value) joined by &, in the order given. */
  async function phpForm(pairs: [string, string | number][]): Promise<V2Reply> {
    const phpUrlencode = (v: string): string => encodeURIComponent(v).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replaceAll('%20', '+');
    const body = pairs.map(([k, v]) => `${k}=${phpUrlencode(String(v))}`).join('&');
    return reply(await fetch(`${t.url}/api/v2`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }));
  }

  it("the requests panels' provider code sends are placed as sent: SmartPanel's per-type fields, and quantity with every add from clients that always send it", async () => {
    const comments = await t.createService({ name: 'Comments', rate: '0.01', min: 1, max: 100, type: 'Custom Comments' });
    const pkg = await t.createService({ name: 'Package', rate: '2', min: 1, max: 1, type: 'Package' });
    const likes = await t.createService({ name: 'Comment Likes', rate: '0.01', min: 10, max: 1000, type: 'Comment Likes' });
    const hashtags = await t.createService({ name: 'Mentions with Hashtags', rate: '0.01', min: 10, max: 1000, type: 'Mentions with Hashtags' });
    // SmartPanel's cron builds [action, service, then the type's fields] and its provider class puts key first.
    const smart = await phpForm([['key', key], ['action', 'add'], ['service', comments], ['link', 'https://instagram.com/p/x'], ['comments', 'nice post\ngreat shot']]);
    const smartLikes = await phpForm([['key', key], ['action', 'add'], ['service', likes], ['link', 'https://instagram.com/p/x'], ['quantity', 100], ['username', 'owner.name']]);
    const smartHashtags = await phpForm([['key', key], ['action', 'add'], ['service', hashtags], ['link', 'https://instagram.com/p/x'], ['quantity', 100], ['usernames', 'ann\nbob'], ['hashtags', '#a\n#b']]);
    for (const r of [smart, smartLikes, smartHashtags]) expect(r.body).toEqual({ order: expect.any(Number) });
    expect((await t.admin('GET', `/admin/v1/orders/${smartLikes.body.order}`)).body.order).toMatchObject({ type: 'Comment Likes', quantity: 100, username: 'owner.name' });
    // Clients that send quantity with every add, and empty drip-feed fields.
    const agreeing = await form({ key, action: 'add', service: comments, link: 'https://instagram.com/p/x', quantity: 2, comments: 'a\nb', runs: '', interval: '' });
    expect(agreeing.body).toEqual({ order: expect.any(Number) });
    const packageOne = await form({ key, action: 'add', service: pkg, link: 'https://instagram.com/p/x', quantity: 1 });
    const packageEmpty = await form({ key, action: 'add', service: pkg, link: 'https://instagram.com/p/x', quantity: '' });
    expect([packageOne.body, packageEmpty.body]).toEqual([{ order: expect.any(Number) }, { order: expect.any(Number) }]);
    // 100 − 0.02 (smart) − 1 − 1 (likes, hashtags) − 0.02 (agreeing) − 2 − 2 (packages).
    expect(await credits()).toBe('93.96');
    const before = await credits();
    const disagreeing = await form({ key, action: 'add', service: comments, link: 'https://instagram.com/p/x', quantity: 3, comments: 'a\nb' });
    expect(disagreeing.body).toEqual({ error: "Field 'quantity' is 3 but 'comments' holds 2 lines; send 2 or leave quantity out." });
    const packageMany = await form({ key, action: 'add', service: pkg, link: 'https://instagram.com/p/x', quantity: 5 });
    expect(packageMany.body).toEqual({ error: "A Package order is one unit: send 'quantity' 1 or leave it out (it was 5)." });
    expect(await credits()).toBe(before);
  });

  it('nothing sent is dropped: a field of another type, or of no type, is refused by name, before the missing link is', async () => {
    const before = await credits();
    const likes = await t.createService({ name: 'Comment Likes', rate: '0.01', min: 10, max: 1000, type: 'Comment Likes' });
    // A Comment Likes order sent to a plain service.
    const plain = await form({ key, action: 'add', service, link: 'https://instagram.com/p/x', quantity: 100, username: 'owner' });
    expect(plain.body).toEqual({ error: "Field 'username' is not taken by Default orders; they take 'link', 'quantity', 'runs', 'interval'." });
    // A Subscriptions order (no link) to services that do not take its fields.
    const sub = { key, action: 'add', username: 'natgeo', min: 100, max: 200, posts: 5, old_posts: 0, delay: 30, expiry: '31/12/2026' };
    expect((await form({ ...sub, service })).body).toEqual({ error: "Field 'min' is not taken by Default orders; they take 'link', 'quantity', 'runs', 'interval'." });
    expect((await form({ ...sub, service: likes })).body).toEqual({ error: "Field 'min' is not taken by Comment Likes orders; they take 'link', 'quantity', 'username'." });
    expect((await form({ key, action: 'add', service, username: 'natgeo' })).body).toEqual({ error: "Field 'username' is not taken by Default orders; they take 'link', 'quantity', 'runs', 'interval'." });
    expect((await form({ key, action: 'add', service, link: 'https://x.test', quantity: 100, colour: 'red' })).body).toEqual({
      error: "Field 'colour' is not taken by Default orders; they take 'link', 'quantity', 'runs', 'interval'.",
    });
    expect((await form({ key, action: 'add', service: 999, link: 'https://x.test', quantity: 100, colour: 'red' })).body).toEqual({ error: "Field 'colour' is not a field of add." });
    expect(await credits()).toBe(before);
    expect((await t.admin('GET', `/admin/v1/orders?account=${creds.id}`)).body.orders ?? []).toEqual([]);
  });

  it('JSON arrays only where the dialect has lists: lines of a list, ids of orders and refills; anywhere else refused by name', async () => {
    const comments = await t.createService({ name: 'Comments', rate: '0.01', min: 1, max: 100, type: 'Custom Comments' });
    const three = await json({ key, action: 'add', service: comments, link: 'https://x.test/c', comments: ['a', 'b', 'c'] });
    expect(three.body).toEqual({ order: expect.any(Number) });
    expect((await t.admin('GET', `/admin/v1/orders/${three.body.order}`)).body.order).toMatchObject({ quantity: 3, comments: 'a\nb\nc', charge: 0.03 });
    const before = await credits();
    const refusals: [Record<string, unknown>, string][] = [
      [{ link: ['https://x.test/1', 'https://x.test/2'], service, quantity: 100 }, "Field 'link' must be a string or a number; only orders, refills, comments, usernames, hashtags, keywords, groups take a list."],
      [{ link: 'https://x.test', service, quantity: [100, 200] }, "Field 'quantity' must be a string or a number; only orders, refills, comments, usernames, hashtags, keywords, groups take a list."],
      [{ link: 'https://x.test', service: comments, comments: ['a', 'b\nc'] }, "Item 2 of 'comments' holds a line break; send one line per item."],
      [{ link: 'https://x.test', service: comments, comments: ['a', { b: 1 }] }, "Field 'comments' must be a list of strings or numbers."],
      [{ link: { href: 'https://x.test' }, service, quantity: 100 }, "Field 'link' must be a string or a number."],
    ];
    for (const [fields, sentence] of refusals) expect({ fields, body: (await json({ key, action: 'add', ...fields })).body }).toEqual({ fields, body: { error: sentence } });
    expect(await credits()).toBe(before);
    const statuses = await json({ key, action: 'status', orders: [three.body.order, 999999] });
    expect(Object.keys(statuses.body)).toEqual([String(three.body.order), '999999']);
  });

  it("status shows the charge net of a partial or cancel refund, as panels do; v1's status keeps the charge placed", async () => {
    const partial = (await form({ key, action: 'add', service, link: 'https://x.test/p', quantity: 1000 })).body.order;
    const canceled = (await form({ key, action: 'add', service, link: 'https://x.test/c', quantity: 400 })).body.order;
    const idOf = async (n: number): Promise<string> => (await t.admin('GET', `/admin/v1/orders/${n}`)).body.order.id;
    await t.admin('POST', `/admin/v1/orders/${await idOf(partial)}/status`, { status: 'partial', remains: 400 });
    await t.admin('POST', `/admin/v1/orders/${await idOf(canceled)}/status`, { status: 'canceled' });
    // 1000 × 0.0125 = 12.5, of which 400 × 0.0125 = 5 came back; 400 × 0.0125 = 5, all of which came back.
    expect((await form({ key, action: 'status', order: partial })).body).toEqual({ charge: '7.5', start_count: '0', status: 'Partial', remains: '400', currency: 'INR' });
    expect((await form({ key, action: 'status', orders: `${partial},${canceled}` })).body[canceled]).toEqual({ charge: '0', start_count: '0', status: 'Canceled', remains: '400', currency: 'INR' });
    expect(await credits()).toBe('92.5');
    expect((await t.api('GET', `/api/v1/status?order=${await idOf(partial)}`, creds)).body.charge).toBe(12.5);
  });

  it('Idempotency-Key on add: a retry answers the same number and places nothing', async () => {
    const fields = { key, action: 'add', service, link: 'https://x.test/k', quantity: 100 };
    const first = await form(fields, { 'idempotency-key': 'v2-retry-1' });
    const again = await form(fields, { 'idempotency-key': 'v2-retry-1' });
    expect(again.body).toEqual(first.body);
    expect(await credits()).toBe('98.75');
    // A remembered refusal is told again in the dialect.
    const pricey = await t.createService({ name: 'Pricey', rate: '1', min: 1, max: 5000 });
    const poor = { ...fields, service: pricey, quantity: 5000 };
    expect((await form(poor, { 'idempotency-key': 'v2-retry-2' })).body).toEqual({ error: 'Not enough funds on balance' });
    expect((await form(poor, { 'idempotency-key': 'v2-retry-2' })).body).toEqual({ error: 'Not enough funds on balance' });
  });

  it('Idempotency-Key on add: a retry replays after the operator turned drip-feed off; a new key gets the new verdict', async () => {
    const drip = await t.createService({ name: 'Drip', rate: '0.001', min: 10, max: 1000, dripfeed: true });
    const fields = { key, action: 'add', service: drip, link: 'https://x.test/d', quantity: 100, runs: 5, interval: 30 };
    const first = await form(fields, { 'idempotency-key': 'v2-drip-1' });
    expect(first.body.order).toBeGreaterThan(0);
    const charged = await credits();
    expect((await t.admin('PATCH', `/admin/v1/services/${drip}`, { dripfeed: false })).status).toBe(200);
    expect((await form(fields, { 'idempotency-key': 'v2-drip-1' })).body).toEqual(first.body);
    expect((await form(fields, { 'idempotency-key': 'v2-drip-2' })).body).toEqual({ error: 'This service does not offer drip-feed; send no runs or interval.' });
    expect(await credits()).toBe(charged);
  });

  it('drip-feed and list order types with the dialect field names', async () => {
    const drip = await t.createService({ name: 'Drip', rate: '0.001', min: 10, max: 1000, dripfeed: true });
    const comments = await t.createService({ name: 'Comments', rate: '0.01', min: 1, max: 100, type: 'Custom Comments' });
    const d = await form({ key, action: 'add', service: drip, link: 'https://x.test/d', quantity: 100, runs: 5, interval: 30 });
    expect(d.body.order).toBeGreaterThan(0);
    const c = await multipart({ key, action: 'add', service: comments, link: 'https://x.test/c', comments: 'nice\ngreat\nwow' });
    expect(c.body.order).toBe(d.body.order + 1);
    const shown = await t.admin('GET', `/admin/v1/orders/${c.body.order}`);
    expect(shown.body.order).toMatchObject({ quantity: 3, comments: 'nice\ngreat\nwow' });
    expect(await credits()).toBe(String(100 - 0.5 - 0.03));
  });

  it('cancel, refill and refill_status, single and multi, with foreign and malformed numbers', async () => {
    const a = (await form({ key, action: 'add', service, link: 'https://x.test/1', quantity: 100 })).body.order;
    const b = (await form({ key, action: 'add', service, link: 'https://x.test/2', quantity: 100 })).body.order;
    const other = await t.createAccount('other', '10');
    const theirs = (await t.api('POST', '/api/v1/order', other, order(service, 10))).body.number;

    const canceled = await form({ key, action: 'cancel', orders: `${a},${theirs},zz` });
    expect(canceled.body).toEqual([
      { order: a, cancel: 1 },
      { order: theirs, cancel: { error: 'Incorrect order ID' } },
      { order: 'zz', cancel: { error: 'Incorrect order ID' } },
    ]);
    expect((await form({ key, action: 'status', order: a })).body.status).toBe('Canceled');
    expect((await form({ key, action: 'cancel', orders: `${a}` })).body[0].cancel.error).toMatch(/already canceled|final/);

    // Refill needs a completed order.
    const idB = (await t.admin('GET', `/admin/v1/orders/${b}`)).body.order.id;
    expect((await form({ key, action: 'refill', order: b })).body.error).toBeDefined();
    await t.admin('POST', `/admin/v1/orders/${idB}/status`, { status: 'completed' });
    const single = await form({ key, action: 'refill', order: b });
    expect(single.body).toEqual({ refill: expect.stringMatching(/^[1-9][0-9]*$/) });
    const refillId = Number(single.body.refill);
    const multi = await form({ key, action: 'refill', orders: `${b},${theirs}` });
    expect(multi.body).toEqual([
      { order: b, refill: { error: expect.stringMatching(/refill/i) } },
      { order: theirs, refill: { error: 'Incorrect order ID' } },
    ]);
    expect((await form({ key, action: 'refill_status', refill: refillId })).body).toEqual({ status: 'Pending' });
    await t.admin('POST', `/admin/v1/refills/${refillId}/status`, { status: 'completed' });
    expect((await query({ key, action: 'refill_status', refills: `${refillId},5555,x` })).body).toEqual([
      { refill: refillId, status: 'Completed' },
      { refill: 5555, status: { error: 'Incorrect refill ID' } },
      { refill: 'x', status: { error: 'Incorrect refill ID' } },
    ]);
  });

  it('concurrent refill requests for one order through v2 and v1: exactly one refill opens', async () => {
    const n = (await form({ key, action: 'add', service, link: 'https://x.test/refill-race', quantity: 100 })).body.order;
    const id = (await t.admin('GET', `/admin/v1/orders/${n}`)).body.order.id;
    await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'completed' });
    const [a, b, c] = await Promise.all([
      form({ key, action: 'refill', order: n }),
      form({ key, action: 'refill', orders: `${n}` }),
      t.api('POST', '/api/v1/refill', creds, { orders: [id] }),
    ]);
    const opened = [typeof a.body.refill === 'string', typeof b.body[0].refill === 'number', typeof c.body.orders[id].refill === 'number'];
    expect(opened.filter(Boolean)).toHaveLength(1);
    const refills = await t.admin('GET', '/admin/v1/refills?status=pending');
    expect(refills.body.refills.filter((r: { order: string }) => r.order === id)).toHaveLength(1);
  });

  it('concurrent cancels of one order through v2 and v1: one refund', async () => {
    const n = (await form({ key, action: 'add', service, link: 'https://x.test/race', quantity: 800 })).body.order;
    const id = (await t.admin('GET', `/admin/v1/orders/${n}`)).body.order.id;
    const results = await Promise.all([
      form({ key, action: 'cancel', orders: `${n}` }),
      form({ key, action: 'cancel', order: n }),
      t.api('POST', '/api/v1/cancel', creds, { orders: [id] }),
      t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'processing' }),
    ]);
    for (const r of results.slice(0, 3)) expect(r.status).toBe(200);
    // The operator's move is refused (409) when a cancel came first.
    expect([200, 409]).toContain(results[3]!.status);
    // Refunded exactly once (the cancel came first: 100), or not at all (the operator's move came
    // first, and every cancel became a request the operator resolves: 90). Twice would show 110.
    const balance = Number(await credits());
    expect([90, 100]).toContain(balance);
    const final = (await t.admin('GET', `/admin/v1/orders/${n}`)).body.order;
    expect(final.status === 'canceled').toBe(balance === 100);
    expect((await t.admin('GET', '/admin/v1/verify')).body.ok).toBe(true);
  });
});
