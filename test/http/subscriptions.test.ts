import { describe, expect, it } from 'vitest';
import { useServer, type Creds, type TestServer } from '../helpers/server.js';
import { plainCharge } from '../helpers/plain-money.js';
import { DAY_MS, ddmmyyyy, subscriptionCustomer, verified } from '../helpers/subscription-setup.js';

/**
 * Subscriptions (docs/DECISIONS.md, "Subscriptions"): placed through API v2
 * with the dialect's fields, they charge nothing; each post the processing
 * system reports is an order charged quantity × the rate fixed at
 * placement, refused without funds (which pauses the subscription, until a
 * post finds the funds); the last post completes it, the clock expires it,
 * the customer or the operator cancels it; a post reported twice is charged
 * once; verify replays every rule, also after a restart.
 */
/** 0.25 credits a unit, in micro-credits; the service's rate at placement. */
const RATE_MICRO = 250_000;

async function credits(t: TestServer, creds: Creds): Promise<number> {
  const text = (await t.api('GET', '/api/v1/balance', creds)).text;
  return Math.round(Number(text.match(/"credits":([0-9.]+)/)![1]) * 1_000_000);
}

describe('Subscriptions', () => {
  let creds: Creds;
  let key: string;
  let service: number;
  const t = useServer({}, async (t) => {
    ({ creds, key, service } = await subscriptionCustomer(t));
  });
  const add = (fields: Record<string, string | number>) => t.v2({ key, action: 'add', service, ...fields });
  const post = (id: number, body: Record<string, unknown>) => t.admin('POST', `/admin/v1/subscriptions/${id}/posts`, body);

  it('placing one charges nothing; posts are orders at the fixed rate; a repeated post is charged once; the last post completes it', async () => {
    const before = await credits(t, creds);
    const own = await t.createService({ name: 'Auto likes', rate: '0.25', min: 10, max: 1000, type: 'Subscriptions' });
    const placed = await t.v2({ key, action: 'add', service: own, username: 'natgeo', min: 20, max: 40, posts: 2, old_posts: 0, delay: 30, expiry: ddmmyyyy(t.clock.wallMs() + 10 * DAY_MS), link: '', quantity: '' });
    expect(placed.body).toEqual({ order: expect.any(Number) });
    const id = placed.body.order as number;
    expect(await credits(t, creds)).toBe(before);
    // The service's rate changes; the subscription keeps the one it fixed.
    expect((await t.admin('PATCH', `/admin/v1/services/${own}`, { rate: '9' })).status).toBe(200);
    const first = await post(id, { post: 'C1abc', link: 'https://instagram.com/p/C1abc', quantity: 30 });
    expect(first.status, first.text).toBe(201);
    expect(first.body.order).toMatchObject({ type: 'Subscriptions', username: 'natgeo', quantity: 30, status: 'pending', target: 'https://instagram.com/p/C1abc' });
    expect(await credits(t, creds)).toBe(before - plainCharge(30, RATE_MICRO));
    const again = await post(id, { post: 'C1abc', link: 'https://instagram.com/p/C1abc', quantity: 30 });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ replayed: true, order: { id: first.body.order.id } });
    expect(await credits(t, creds)).toBe(before - plainCharge(30, RATE_MICRO));
    const status = await t.v2({ key, action: 'status', order: id });
    expect(status.body).toEqual({ status: 'Active', expiry: ddmmyyyy(t.clock.wallMs() + 10 * DAY_MS), posts: '1', orders: [first.body.order.number] });
    const second = await post(id, { post: 'C2def', link: 'https://instagram.com/p/C2def', quantity: 40 });
    expect(second.status).toBe(201);
    expect(await credits(t, creds)).toBe(before - plainCharge(30, RATE_MICRO) - plainCharge(40, RATE_MICRO));
    expect((await t.v2({ key, action: 'status', order: id })).body).toMatchObject({ status: 'Completed', posts: '2' });
    const third = await post(id, { post: 'C3ghi', link: 'https://instagram.com/p/C3ghi', quantity: 40 });
    expect(third.body).toMatchObject({ error: 'CONFLICT', message: `Subscription ${id} is Completed; it takes no more posts.` });
    // A post's order is an ordinary order: v2 status shows it.
    expect((await t.v2({ key, action: 'status', order: first.body.order.number })).body).toMatchObject({ status: 'Pending', charge: '7.5' });
    await verified(t);
    await t.restart();
    await verified(t);
    expect((await t.admin('GET', `/admin/v1/subscriptions/${id}`)).body.subscription).toMatchObject({ status: 'Completed', posts_done: 2, rate: 0.25 });
    // Numbers continue after the subscription's after a restart.
    const next = await add({ username: 'natgeo', min: 10, max: 10 });
    expect(next.body.order).toBeGreaterThan(second.body.order.number);
  });

  it('a post the wallet cannot pay for is refused and pauses it; after a top-up the next post resumes it', async () => {
    const poor = await t.createAccount('bob', '5');
    const poorKey = await t.issueV2Key(poor.id);
    const id = (await t.v2({ key: poorKey, action: 'add', service, username: 'nasa', min: 10, max: 100 })).body.order as number;
    expect((await post(id, { post: 'p1', link: 'https://instagram.com/p/p1', quantity: 10 })).status).toBe(201);
    const refused = await post(id, { post: 'p2', link: 'https://instagram.com/p/p2', quantity: 100 });
    expect(refused.status).toBe(402);
    expect(refused.body.message).toBe(`Post p2 of subscription ${id} costs 25 credits but the wallet holds 2.5; the subscription is paused until a post finds enough credits.`);
    expect((await t.v2({ key: poorKey, action: 'status', order: id })).body).toMatchObject({ status: 'Paused', posts: '1', expiry: null });
    expect(await credits(t, poor)).toBe(2_500_000);
    await t.admin('POST', `/admin/v1/accounts/${poor.id}/credits`, { amount: '30', reason: 'top-up' });
    expect((await post(id, { post: 'p2', link: 'https://instagram.com/p/p2', quantity: 100 })).status).toBe(201);
    expect((await t.v2({ key: poorKey, action: 'status', order: id })).body).toMatchObject({ status: 'Active', posts: '2' });
    expect(await credits(t, poor)).toBe(32_500_000 - plainCharge(100, RATE_MICRO));
    const listed = await t.admin('GET', `/admin/v1/subscriptions?account=${poor.id}&status=Active`);
    expect(listed.body.subscriptions.map((s: { id: number }) => s.id)).toEqual([id]);
    await verified(t);
  });

  it('two reports of one post at once place one order and charge it once', async () => {
    const before = await credits(t, creds);
    const id = (await add({ username: 'natgeo', min: 10, max: 20 })).body.order as number;
    const report = { post: 'same', link: 'https://instagram.com/p/same', quantity: 20 };
    const both = await Promise.all([post(id, report), post(id, report), post(id, report)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(both.map((r) => r.body.order.id)).size).toBe(1);
    expect(await credits(t, creds)).toBe(before - plainCharge(20, RATE_MICRO));
    expect((await t.v2({ key, action: 'status', order: id })).body).toMatchObject({ posts: '1' });
    await verified(t);
  });

  it('expires at the end of its expiry day on the injected clock: by the sweep, or on the next touch', async () => {
    const lastDay = t.clock.wallMs() + 2 * DAY_MS;
    const swept = (await add({ username: 'natgeo', min: 10, max: 20, expiry: ddmmyyyy(lastDay) })).body.order as number;
    const touched = (await add({ username: 'natgeo', min: 10, max: 20, expiry: ddmmyyyy(lastDay) })).body.order as number;
    t.clock.advance(3 * DAY_MS);
    expect(await t.server.subscriptionSweeper.step()).toBeGreaterThanOrEqual(1);
    expect((await t.v2({ key, action: 'status', order: swept })).body).toMatchObject({ status: 'Expired' });
    const late = await post(touched, { post: 'x1', link: 'https://instagram.com/p/x1', quantity: 10 });
    expect(late.body.error).toBe('CONFLICT');
    expect((await t.v2({ key, action: 'status', order: touched })).body).toMatchObject({ status: 'Expired', posts: '0' });
    await verified(t);
  });

  it('the customer cancels through v2 cancel, the operator through the admin API; a canceled one takes no posts', async () => {
    const mine = (await add({ username: 'natgeo', min: 10, max: 20 })).body.order as number;
    expect((await t.v2({ key, action: 'cancel', orders: String(mine) })).body).toEqual([{ order: mine, cancel: 1 }]);
    expect((await t.v2({ key, action: 'status', order: mine })).body).toMatchObject({ status: 'Canceled' });
    // posts 0 and expiry 0, as panels' forms send unset fields: no limit and no end.
    const other = (await add({ username: 'natgeo', min: 10, max: 20, posts: 0, expiry: 0 })).body.order as number;
    expect((await t.v2({ key, action: 'status', order: other })).body).toEqual({ status: 'Active', expiry: null, posts: '0', orders: [] });
    expect((await t.admin('POST', `/admin/v1/subscriptions/${other}/cancel`, { reason: 'customer asked' })).body.subscription).toMatchObject({ status: 'Canceled' });
    expect((await post(other, { post: 'y', link: 'https://instagram.com/p/y', quantity: 10 })).status).toBe(409);
    await verified(t);
  });

  it('bad input is refused with sentences naming v2 fields, and places nothing', async () => {
    const before = await credits(t, creds);
    const cases: [Record<string, string | number>, string][] = [
      [{ min: 10, max: 20 }, "Field 'username' is required: the account whose new posts are delivered to, one word of at most 64 characters."],
      [{ username: 'a b', min: 10, max: 20 }, "Field 'username' is required: the account whose new posts are delivered to, one word of at most 64 characters."],
      [{ username: 'natgeo', max: 20 }, "Field 'min' is required: the fewest units delivered to each post, a whole number."],
      [{ username: 'natgeo', min: 30, max: 20 }, "Field 'min' (30) must not be above 'max' (20)."],
      [{ username: 'natgeo', min: 5, max: 20 }, `Fields 'min' and 'max' must lie between 10 and 1000 for service ${service}.`],
      [{ username: 'natgeo', min: 10, max: 20, delay: 7 }, "Field 'delay' must be one of 0, 5, 10, 15, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 360, 420, 480, 540, 600 (minutes)."],
      [{ username: 'natgeo', min: 10, max: 20, expiry: '31/02/2030' }, "Field 'expiry' must be a date as DD/MM/YYYY, or left out for no end."],
      [{ username: 'natgeo', min: 10, max: 20, expiry: ddmmyyyy(t.clock.wallMs() - 2 * DAY_MS) }, "Field 'expiry' is a day already past; send a later date, or none."],
      [{ username: 'natgeo', min: 10, max: 20, posts: -1 }, "Field 'posts' must be a whole number from 0 to 10000 (0: no limit)."],
      [{ username: 'natgeo', min: 10, max: 20, link: 'https://x.test' }, "Field 'link' is not taken by Subscriptions orders; they take 'username', 'min', 'max', 'posts', 'old_posts', 'delay', 'expiry'."],
      [{ username: 'natgeo', min: 10, max: 20, quantity: 5 }, "Field 'quantity' is not taken by Subscriptions orders; they take 'username', 'min', 'max', 'posts', 'old_posts', 'delay', 'expiry'."],
    ];
    const listedBefore = (await t.admin('GET', '/admin/v1/subscriptions')).body.subscriptions.length;
    for (const [fields, error] of cases) expect((await add(fields)).body, JSON.stringify(fields)).toEqual({ error });
    expect((await t.admin('GET', '/admin/v1/subscriptions')).body.subscriptions.length).toBe(listedBefore);
    // v1's order route places no subscription, and names the route that does.
    const v1 = await t.api('POST', '/api/v1/order', creds, { service, target: 'https://instagram.com/natgeo', quantity: 10 });
    expect(v1.status).toBe(400);
    expect(v1.body.message).toMatch(/^Service \d+ takes subscriptions, not orders: place one with POST \/api\/v1\/subscription /);
    // The admin API refuses what it does not read.
    expect((await t.admin('GET', '/admin/v1/subscriptions?state=Active')).body.message).toBe("Query parameter 'state' is not allowed here; allowed: account, status, limit, cursor.");
    const id = (await add({ username: 'natgeo', min: 10, max: 20 })).body.order as number;
    expect((await post(id, { post: 'z', link: 'https://instagram.com/p/z', quantity: 21 })).body.message).toBe(`Quantity must be between 10 and 20 for subscription ${id}.`);
    expect((await post(id, { post: 'z', link: 'https://instagram.com/p/z', quantity: 10, colour: 'red' })).status).toBe(400);
    expect((await post(id, { link: 'https://instagram.com/p/z', quantity: 10 })).body.message).toMatch(/^Field 'post' is required/);
    expect(await credits(t, creds)).toBe(before);
    await verified(t);
  });
});
