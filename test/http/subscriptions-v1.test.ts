import { describe, expect, it } from 'vitest';
import { useServer, type Creds, type TestServer } from '../helpers/server.js';
import { plainCharge } from '../helpers/plain-money.js';
import { DAY_MS, ddmmyyyy, subscriptionCustomer, verified } from '../helpers/subscription-setup.js';

/**
 * Subscriptions through API v1 (docs/DECISIONS.md, "Subscriptions"):
 * `POST /api/v1/subscription` places one (201, charging nothing; an
 * Idempotency-Key works as on /order), `GET /api/v1/subscription_status`
 * shows it with its orders' v1 ids and charges, `POST
 * /api/v1/subscription_cancel` cancels it. Its id is its number, the one
 * API v2 shows. Every answer is held to the OpenAPI document by `t.api`.
 */
/** 0.25 credits a unit, in micro-credits: the service's rate at placement. */
const RATE_MICRO = 250_000;

const micro = (credits: number): number => Math.round(credits * 1_000_000);

async function credits(t: TestServer, creds: Creds): Promise<number> {
  return micro((await t.api('GET', '/api/v1/balance', creds)).body.credits);
}

async function subscriptionCount(t: TestServer): Promise<number> {
  return (await t.admin('GET', '/admin/v1/subscriptions')).body.subscriptions.length;
}

describe('Subscriptions through API v1', () => {
  let creds: Creds;
  let key: string;
  let service: number;
  const t = useServer({}, async (t) => {
    ({ creds, key, service } = await subscriptionCustomer(t));
  });
  const place = (body: Record<string, unknown>, headers: Record<string, string> = {}, who: Creds = creds) => t.api('POST', '/api/v1/subscription', who, { service, ...body }, headers);
  const status = (id: number | string, who: Creds = creds) => t.api('GET', `/api/v1/subscription_status?subscription=${id}`, who);
  const cancel = (body: unknown, who: Creds = creds) => t.api('POST', '/api/v1/subscription_cancel', who, body);
  const post = (id: number, body: Record<string, unknown>) => t.admin('POST', `/admin/v1/subscriptions/${id}/posts`, body);

  it('places one charging nothing; each post is an order at the fixed rate, shown with its v1 id; v2 sees the same; cancel stops it; verify holds after a restart', async () => {
    const before = await credits(t, creds);
    const expiry = ddmmyyyy(t.clock.wallMs() + 10 * DAY_MS);
    const placed = await place({ username: 'natgeo', min: 20, max: 40, posts: 3, old_posts: 0, delay: 30, expiry });
    expect(placed.status, placed.text).toBe(201);
    const id = placed.body.subscription as number;
    expect(placed.body).toMatchObject({ ok: true, service, status: 'Active', username: 'natgeo', min: 20, max: 40, posts: 3, old_posts: 0, delay: 30, expiry, rate: 0.25, posts_done: 0, orders: [] });
    expect(await credits(t, creds)).toBe(before);
    // An operator's price change leaves the rate the subscription holds.
    expect((await t.admin('PATCH', `/admin/v1/services/${service}`, { rate: '9' })).status).toBe(200);
    const reports = [
      { post: 'p1', link: 'https://instagram.com/p/p1', quantity: 30 },
      { post: 'p2', link: 'https://instagram.com/p/p2', quantity: 37 },
    ];
    for (const report of reports) expect((await post(id, report)).status).toBe(201);
    const charged = reports.map((r) => plainCharge(r.quantity, RATE_MICRO));
    expect(await credits(t, creds)).toBe(before - charged[0]! - charged[1]!);
    const shown = await status(id);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ subscription: id, status: 'Active', posts_done: 2 });
    expect(shown.body.orders.map((o: { charge: number }) => micro(o.charge))).toEqual(charged);
    // Each order is an ordinary v1 order: its id is what /api/v1/status takes.
    for (const [i, o] of (shown.body.orders as { order: string; number: number }[]).entries()) {
      const order = await t.api('GET', `/api/v1/status?order=${o.order}`, creds);
      expect(order.body).toMatchObject({ order: o.order, number: o.number, status: 'pending', quantity: reports[i]!.quantity });
      expect(micro(order.body.charge)).toBe(charged[i]);
    }
    // API v2 names it by the same id and shows the same subscription.
    const numbers = shown.body.orders.map((o: { number: number }) => o.number);
    expect((await t.v2({ key, action: 'status', order: id })).body).toEqual({ status: 'Active', expiry, posts: '2', orders: numbers });
    const canceled = await cancel({ subscription: id });
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body).toMatchObject({ subscription: id, status: 'Canceled', posts_done: 2 });
    expect((await t.v2({ key, action: 'status', order: id })).body).toMatchObject({ status: 'Canceled' });
    expect((await post(id, { post: 'p3', link: 'https://instagram.com/p/p3', quantity: 20 })).status).toBe(409);
    const again = await cancel({ subscription: id });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe(`Subscription ${id} is already Canceled, a final state; it cannot move again.`);
    expect(await credits(t, creds)).toBe(before - charged[0]! - charged[1]!);
    await verified(t);
    await t.restart();
    await verified(t);
    expect((await status(id)).body).toEqual(canceled.body);
  });

  it('one placed through v2 is read and canceled through v1, and one placed through v1 is canceled through v2', async () => {
    const fromV2 = (await t.v2({ key, action: 'add', service, username: 'nasa', min: 10, max: 20 })).body.order as number;
    expect((await status(fromV2)).body).toMatchObject({ subscription: fromV2, status: 'Active', username: 'nasa', posts: 0, expiry: null, expires_at: null });
    expect((await cancel({ subscription: fromV2 })).body.status).toBe('Canceled');
    const fromV1 = (await place({ username: 'nasa', min: 10, max: 20 })).body.subscription as number;
    expect((await t.v2({ key, action: 'cancel', orders: String(fromV1) })).body).toEqual([{ order: fromV1, cancel: 1 }]);
    expect((await status(fromV1)).body.status).toBe('Canceled');
  });

  it('a retried place with the same Idempotency-Key answers the first answer and places one subscription, after a restart and through v2 too; other terms under the key are refused', async () => {
    const count = await subscriptionCount(t);
    const body = { username: 'natgeo', min: 10, max: 20, posts: 5 };
    const first = await place(body, { 'Idempotency-Key': 'sub-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBe(null);
    const retried = await place(body, { 'Idempotency-Key': 'sub-1' });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.text).toBe(first.text);
    // Sent at once: one of them places it, the others replay it.
    const together = await Promise.all([1, 2, 3].map(() => place(body, { 'Idempotency-Key': 'sub-2' })));
    expect(new Set(together.map((r) => r.body.subscription)).size).toBe(1);
    expect(await subscriptionCount(t)).toBe(count + 2);
    await t.restart();
    const afterRestart = await place(body, { 'Idempotency-Key': 'sub-1' });
    expect(afterRestart.headers.get('idempotent-replayed')).toBe('true');
    expect(afterRestart.text).toBe(first.text);
    const other = await place({ ...body, max: 30 }, { 'Idempotency-Key': 'sub-1' });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ error: 'IDEMPOTENCY', message: 'This Idempotency-Key was already used with a different payload; use a new key for a new subscription.' });
    // A key is one payload: an order under a subscription's key is another payload, and the other way round.
    const order = await t.api('POST', '/api/v1/order', creds, { service: await t.createService(), target: 'https://x.test/a', quantity: 10 }, { 'Idempotency-Key': 'sub-1' });
    expect(order.body.error).toBe('IDEMPOTENCY');
    // A business refusal is remembered like a success.
    const qty = await place({ username: 'natgeo', min: 5, max: 20 }, { 'Idempotency-Key': 'sub-3' });
    expect(qty.status).toBe(422);
    const qtyAgain = await place({ username: 'natgeo', min: 5, max: 20 }, { 'Idempotency-Key': 'sub-3' });
    expect(qtyAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(qtyAgain.text).toBe(qty.text);
    expect(await subscriptionCount(t)).toBe(count + 2);
    // The key works across the two APIs: v2's add under it answers what v1's place did, in v2's shapes.
    const viaV2 = await t.v2({ key, action: 'add', service, username: 'natgeo', min: 10, max: 20, posts: 5 }, { 'Idempotency-Key': 'sub-1' });
    expect([viaV2.body, viaV2.headers.get('idempotent-replayed')]).toEqual([{ order: first.body.subscription }, 'true']);
    expect((await t.v2({ key, action: 'add', service, username: 'natgeo', min: 5, max: 20 }, { 'Idempotency-Key': 'sub-3' })).body).toEqual({ error: qty.body.message });
    // A v2 add under a key of its own, retried, places one subscription too.
    const v2Body = { key, action: 'add', service, username: 'nasa', min: 10, max: 20 };
    const v2First = await t.v2(v2Body, { 'Idempotency-Key': 'sub-4' });
    const v2Again = await t.v2(v2Body, { 'Idempotency-Key': 'sub-4' });
    expect([v2Again.text, v2Again.headers.get('idempotent-replayed')]).toEqual([v2First.text, 'true']);
    expect(await subscriptionCount(t)).toBe(count + 3);
    await verified(t);
  });

  it('bad input is refused with a plain sentence and changes nothing', async () => {
    const before = await credits(t, creds);
    const count = await subscriptionCount(t);
    const plain = await t.createService({ name: 'Followers', rate: '0.1', min: 1, max: 1000 });
    const past = ddmmyyyy(t.clock.wallMs() - 2 * DAY_MS);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ username: 'natgeo', min: 10, max: 20, colour: 'red' }, 400, "Field 'colour' is not allowed; the server computes prices and accepts only service, username, min, max, posts, old_posts, delay, expiry."],
      [{ username: 'natgeo', min: '10', max: 20 }, 400, "Field 'min' is invalid: expected integer."],
      [{ min: 10, max: 20 }, 400, "Field 'username' is required."],
      [{ username: 'a b', min: 10, max: 20 }, 400, "Field 'username' is required: the account whose new posts are delivered to, one word of at most 64 characters."],
      [{ username: 'natgeo', min: 30, max: 20 }, 400, "Field 'min' (30) must not be above 'max' (20)."],
      [{ username: 'natgeo', min: 5, max: 20 }, 422, `Fields 'min' and 'max' must lie between 10 and 1000 for service ${service}.`],
      [{ username: 'natgeo', min: 10, max: 20, delay: 7 }, 400, "Field 'delay' must be one of 0, 5, 10, 15, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 360, 420, 480, 540, 600 (minutes)."],
      [{ username: 'natgeo', min: 10, max: 20, posts: -1 }, 400, "Field 'posts' must be a whole number from 0 to 10000 (0: no limit)."],
      [{ username: 'natgeo', min: 10, max: 20, expiry: '31/02/2030' }, 400, "Field 'expiry' must be a date as DD/MM/YYYY, or left out for no end."],
      [{ username: 'natgeo', min: 10, max: 20, expiry: '0' }, 400, "Field 'expiry' must be a date as DD/MM/YYYY, or null (or left out) for no end."],
      [{ username: 'natgeo', min: 10, max: 20, expiry: past }, 400, "Field 'expiry' is a day already past; send a later date, or none."],
      [{ service: 999, username: 'natgeo', min: 10, max: 20 }, 422, 'Service 999 does not exist or is disabled.'],
      [{ service: plain, username: 'natgeo', min: 10, max: 20 }, 400, `Service ${plain} is a Default service, not a Subscriptions one.`],
    ];
    for (const [body, code, message] of cases) {
      const r = await place(body);
      expect([r.status, r.body.message], JSON.stringify(body)).toEqual([code, message]);
    }
    expect((await place({ username: 'natgeo', min: 10, max: 20 }, { 'Idempotency-Key': '' })).body.message).toBe('Idempotency-Key must be 1 to 255 printable ASCII characters.');
    const form = await t.api('POST', '/api/v1/subscription', creds, 'service=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    // The order route refuses a Subscriptions service and names the route that places one.
    const asOrder = await t.api('POST', '/api/v1/order', creds, { service, target: 'https://instagram.com/natgeo', quantity: 10 });
    expect(asOrder.status).toBe(400);
    expect(asOrder.body.message).toBe(
      `Service ${service} takes subscriptions, not orders: place one with POST /api/v1/subscription {service, username, min, max, posts, old_posts, delay, expiry} (API v2: action=add with the same fields); each post's delivery becomes an order of its own.`,
    );
    const other = await t.createAccount('mallory', '10');
    const mine = (await place({ username: 'natgeo', min: 10, max: 20 })).body.subscription as number;
    const reads: [string, number, string][] = [
      ['', 400, 'Pass the subscription id once: /api/v1/subscription_status?subscription=ID.'],
      [`?subscription=${mine}&subscription=${mine}`, 400, 'Pass the subscription id once: /api/v1/subscription_status?subscription=ID.'],
      ['?subscription=abc', 400, 'That is not a subscription id; subscription ids are the numbers POST /api/v1/subscription returns.'],
      ['?subscription=987654', 404, 'No subscription with this id exists on this account.'],
    ];
    for (const [query, code, message] of reads) {
      const r = await t.api('GET', `/api/v1/subscription_status${query}`, creds);
      expect([r.status, r.body.message], query).toEqual([code, message]);
    }
    // Other query parameters are ignored, as on every v1 GET (cache-busters).
    expect((await t.api('GET', `/api/v1/subscription_status?subscription=${mine}&_=1712345678`, creds)).status).toBe(200);
    // Another account's subscription is not found, as an unknown one.
    expect((await status(mine, other)).status).toBe(404);
    expect((await cancel({ subscription: mine }, other)).status).toBe(404);
    expect((await cancel({ subscription: String(mine) })).body.message).toBe("Field 'subscription' is invalid: expected integer.");
    expect((await cancel({ subscription: mine, reason: 'x' })).body.message).toMatch(/^Field 'reason' is not allowed/);
    expect((await status(mine)).body.status).toBe('Active');
    expect(await subscriptionCount(t)).toBe(count + 1);
    expect(await credits(t, creds)).toBe(before);
    await verified(t);
  });

  it('the ban and the rate limit come first, as for /order', async () => {
    const limited = await t.createAccount('burst', '10');
    const id = (await place({ username: 'natgeo', min: 10, max: 20 }, {}, limited)).body.subscription as number;
    await t.admin('PATCH', `/admin/v1/accounts/${limited.id}`, { rate_limit_per_minute: 2 });
    expect((await status(id, limited)).status).toBe(200);
    expect((await status(id, limited)).status).toBe(200);
    const refused = await place({ username: 'natgeo', min: 10, max: 20 }, {}, limited);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect((await cancel({ subscription: id }, limited)).status).toBe(429);
    await t.admin('PATCH', `/admin/v1/accounts/${limited.id}`, { rate_limit_per_minute: 1000, banned: true });
    // Banned before its input is read: even a malformed one is BANNED.
    for (const r of [await place({ username: 'natgeo', min: 10, max: 20 }, {}, limited), await place({ colour: 'red' }, {}, limited), await status(id, limited), await cancel({ subscription: id }, limited)]) {
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('BANNED');
    }
    expect((await t.admin('GET', `/admin/v1/subscriptions?account=${limited.id}`)).body.subscriptions.map((s: { status: string }) => s.status)).toEqual(['Active']);
  });
});
