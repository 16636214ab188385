import { describe, expect, it } from 'vitest';
import { SCAN_ENTRIES_MAX } from '../../src/http/limits.js';
import { allPages } from '../helpers/admin-pages.js';
import { cli } from '../helpers/cli.js';
import { order, useServer, type Creds } from '../helpers/server.js';

/*
 * Admin listings do bounded work per request: accounts and webhook
 * endpoints come a page at a time, and the filtered listings (cancel
 * requests, refills of one status, failing webhook endpoints) examine at
 * most the scan budget of entries, answering a short page with a cursor
 * when the budget runs out. Real server, real LMDB, over HTTP.
 */

function decodeIndexCursor(cursor: string): [string, number, number, string] {
  return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
}

describe('GET /admin/v1/accounts pages', () => {
  const ids: number[] = [];

  const t = useServer({}, async (t) => {
    for (let i = 0; i < 7; i++) ids.push((await t.createAccount(`reseller ${i}`)).id);
  });

  it('returns every account exactly once across pages, in id order, with next_cursor null on the last page', async () => {
    const pages = await allPages<{ id: number; name: string }>(t, '/admin/v1/accounts?limit=3', 'accounts');
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 1]);
    expect(pages.map((p) => p.next)).toEqual([String(ids[2]), String(ids[5]), null]);
    expect(pages.flatMap((p) => p.items.map((a) => a.id))).toEqual(ids);
    // Each item keeps its shape.
    expect(pages[0]!.items[0]).toEqual({
      id: ids[0],
      name: 'reseller 0',
      credits: 0,
      banned: false,
      rate_limit_per_minute: 1_000_000,
      unlimited: false,
      unlimited_expires: null,
      telegram_user_id: null,
      forcejoin_verified: false,
      forcejoin_exempt: false,
      created_at: expect.any(String),
    });
  });

  it('defaults to a page of 100 and ends with next_cursor null; a cursor past the last account gives an empty last page', async () => {
    const first = await t.admin('GET', '/admin/v1/accounts');
    expect(first.body).toMatchObject({ ok: true, next_cursor: null });
    expect(first.body.accounts.map((a: { id: number }) => a.id)).toEqual(ids);
    const exact = await t.admin('GET', '/admin/v1/accounts?limit=7');
    expect(exact.body.next_cursor).toBeNull();
    const past = await t.admin('GET', `/admin/v1/accounts?cursor=${ids[6]! + 100}`);
    expect(past.body).toEqual({ ok: true, accounts: [], next_cursor: null });
  });

  it('a loaded account and one that was evicted are listed alike, from where the cursor points', async () => {
    await t.admin('POST', `/admin/v1/accounts/${ids[4]}/credits`, { amount: '2.5', reason: 'top-up' });
    t.server.context.registry.evictIdle(0);
    const r = await t.admin('GET', `/admin/v1/accounts?limit=2&cursor=${ids[3]}`);
    expect(r.body.accounts.map((a: { id: number; credits: number }) => [a.id, a.credits])).toEqual([
      [ids[4], 2.5],
      [ids[5], 0],
    ]);
    expect(r.body.next_cursor).toBe(String(ids[5]));
  });

  it('refuses a bad limit or cursor with 400 VALIDATION and a plain sentence', async () => {
    for (const limit of ['0', '501', 'ten', '1.5', '-1', '']) {
      const r = await t.admin('GET', `/admin/v1/accounts?limit=${limit}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: 'VALIDATION', message: 'limit must be an integer from 1 to 500.' });
    }
    for (const cursor of ['abc', '0', '-1', '1.5', '99999999999999999', '']) {
      const r = await t.admin('GET', `/admin/v1/accounts?cursor=${cursor}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: 'VALIDATION', message: 'cursor must be the next_cursor of an earlier page.' });
    }
  });

  it('the CLI lists every account with --all, and prints the next-page command for one page', async () => {
    const all = await cli(t, 'account', 'list', '--all', '--limit', '2', '--json');
    expect(all.code).toBe(0);
    const body = JSON.parse(all.out);
    expect(body.next_cursor).toBeNull();
    expect(body.accounts.map((a: { id: number }) => a.id)).toEqual(ids);
    const page = await cli(t, 'account', 'list', '--limit', '3');
    expect(page.out).toContain(
      `More accounts follow. Next page: \`credit-order-api account list --limit 3 --cursor ${ids[2]}\` (or add --all for every page).`,
    );
  });
});

describe('filtered admin listings examine a bounded number of entries per request', () => {
  /** Small, so a handful of orders is "more non-matching entries than the budget". */
  const BUDGET = 4;
  let creds: Creds;
  let cancelable: number;
  let refillable: number;

  async function place(service: number): Promise<string> {
    const r = await t.api('POST', '/api/v1/order', creds, order(service, 10));
    expect(r.status).toBe(201);
    return r.body.order;
  }

  const t = useServer({ server: { adminScanEntriesMax: BUDGET } }, async (t) => {
    cancelable = await t.createService({ rate: '1', min: 1, max: 100, cancel: true });
    refillable = await t.createService({ rate: '1', min: 1, max: 100, refill: true, refill_days: 7 });
    creds = await t.createAccount('alice', '100000');
  });

  it('the default budget is a named constant of 5,000 entries', () => {
    expect(SCAN_ENTRIES_MAX).toBe(5_000);
  });

  it('cancel_requested=true: short and empty pages with a cursor, and following cursors yields every request exactly once', async () => {
    // processing: one request among three; in_progress: ten without a request, then two with one.
    const plan: [string, boolean][] = [
      ['processing', false],
      ['processing', true],
      ['processing', false],
      ...Array.from({ length: 10 }, (): [string, boolean] => ['in_progress', false]),
      ['in_progress', true],
      ['in_progress', true],
    ];
    const wanted: string[] = [];
    const ignored = new Set<string>();
    for (const [status, cancel] of plan) {
      const id = await place(cancelable);
      expect((await t.admin('POST', `/admin/v1/orders/${id}/status`, { status })).status).toBe(200);
      if (cancel) {
        expect((await t.api('POST', '/api/v1/cancel', creds, { orders: [id] })).body.orders[id]).toMatchObject({ cancel_requested: true });
        wanted.push(id);
      } else {
        ignored.add(id);
      }
    }
    const pages = await allPages<{ id: string }>(t, '/admin/v1/orders?cancel_requested=true&limit=100', 'orders');
    // 15 entries at 4 a request: four requests, the last one reaching the end.
    expect(pages).toHaveLength(4);
    expect(pages.slice(0, -1).every((p) => p.items.length < 100 && p.next !== null)).toBe(true);
    expect(pages.some((p) => p.items.length === 0 && p.next !== null)).toBe(true);
    expect(pages.flatMap((p) => p.items.map((o) => o.id))).toEqual(wanted);
    // A cursor names the last entry examined, which need not be a match, and resumes right after it.
    const cursors = pages.map((p) => p.next).filter((c): c is string => c !== null);
    expect(cursors.some((c) => ignored.has(decodeIndexCursor(c)[3]))).toBe(true);
    // A full page before the budget runs out still says where the next one starts.
    const small = await allPages<{ id: string }>(t, '/admin/v1/orders?cancel_requested=true&limit=1', 'orders');
    expect(small.flatMap((p) => p.items.map((o) => o.id))).toEqual(wanted);

    // The CLI follows the cursors through short and empty pages, and says an empty page is not the end.
    const all = await cli(t, 'order', 'cancel-requests', '--all', '--json');
    expect(JSON.parse(all.out).orders.map((o: { id: string }) => o.id)).toEqual(wanted);
    const emptyPage = pages.findIndex((p) => p.items.length === 0 && p.next !== null);
    const text = await cli(t, 'order', 'cancel-requests', '--cursor', pages[emptyPage - 1]!.next!);
    expect(text.out).toMatch(/^No open cancel requests on this page\.\n/);
    expect(text.out).toContain('The server stopped at its scan limit before the page was full; more open cancel requests may follow. Next page: `credit-order-api order cancel-requests --cursor ');
  });

  it('refills of one status: short pages with a cursor, and following cursors yields every match exactly once', async () => {
    const refills: number[] = [];
    for (let i = 0; i < 12; i++) {
      const id = await place(refillable);
      await t.admin('POST', `/admin/v1/orders/${id}/status`, { status: 'completed' });
      const r = await t.api('POST', '/api/v1/refill', creds, { orders: [id] });
      refills.push(r.body.orders[id].refill);
    }
    // Pending: the 2nd and the 12th; in_progress: the 7th; the rest completed.
    const pending = [refills[1]!, refills[11]!];
    for (const [i, refill] of refills.entries()) {
      if (pending.includes(refill)) continue;
      expect((await t.admin('POST', `/admin/v1/refills/${refill}/status`, { status: 'in_progress' })).status).toBe(200);
      if (i !== 6) expect((await t.admin('POST', `/admin/v1/refills/${refill}/status`, { status: 'completed' })).status).toBe(200);
    }
    const pages = await allPages<{ refill: number }>(t, '/admin/v1/refills?status=pending', 'refills');
    expect(pages).toHaveLength(3);
    expect(pages.map((p) => p.next)).toEqual([String(refills[3]), String(refills[7]), null]);
    expect(pages.map((p) => p.items.length)).toEqual([1, 0, 1]);
    expect(pages.flatMap((p) => p.items.map((r) => r.refill))).toEqual(pending);
    const inProgress = await allPages<{ refill: number }>(t, '/admin/v1/refills?status=in_progress&limit=500', 'refills');
    expect(inProgress.flatMap((p) => p.items.map((r) => r.refill))).toEqual([refills[6]]);
    // A cursor at a refill that did not match resumes right after it.
    const resumed = await t.admin('GET', `/admin/v1/refills?status=pending&cursor=${refills[10]}`);
    expect(resumed.body).toMatchObject({ refills: [{ refill: refills[11] }], next_cursor: null });

    const all = await cli(t, 'refill', 'list', '--all', '--json');
    expect(JSON.parse(all.out).refills.map((r: { refill: number }) => r.refill)).toEqual(pending);
    const text = await cli(t, 'refill', 'list', '--cursor', String(refills[3]));
    expect(text.out).toBe(
      'No pending refills on this page.\n\nThe server stopped at its scan limit before the page was full; more pending refills may follow. ' +
        `Next page: \`credit-order-api refill list --status pending --cursor ${refills[7]}\` (or add --all for every page).\n`,
    );
  });
});

describe('GET /admin/v1/webhooks pages', () => {
  /** Small, so that a few endpoints are more than one request may examine. */
  const BUDGET = 4;
  const accounts: number[] = [];
  /** Endpoint ids in id order, registered for the accounts in turn: ids[i] belongs to accounts[i % 3]. */
  const ids: number[] = [];
  let live: number[];

  const t = useServer({ server: { adminScanEntriesMax: BUDGET } }, async (t) => {
    for (let a = 0; a < 3; a++) accounts.push((await t.createAccount(`reseller ${a}`)).id);
    for (let i = 0; i < 9; i++) {
      const r = await t.admin('POST', `/admin/v1/accounts/${accounts[i % 3]}/webhooks`, { url: `https://hooks.example.com/${i}` });
      expect(r.status, r.text).toBe(201);
      ids.push(r.body.webhook.id);
    }
    expect((await t.admin('DELETE', `/admin/v1/webhooks/${ids[4]}`)).status).toBe(200);
    live = ids.filter((id) => id !== ids[4]);
    // Two failing endpoints, both of the second account, as the dispatcher marks them.
    const directory = t.server.webhooks.directory;
    for (const id of [ids[1]!, ids[7]!]) await directory.markFailing(directory.get(id)!, 'a message failed for 24 hours');
  });

  it('returns every endpoint exactly once across pages, in id order, with its account and backlog, and next_cursor null on the last page', async () => {
    const pages = await allPages<{ id: number; account: number; held: number; oldest_held_at: string | null }>(t, '/admin/v1/webhooks?limit=3', 'webhooks');
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 2]);
    expect(pages.map((p) => p.next)).toEqual([String(live[2]), String(live[5]), null]);
    expect(pages.flatMap((p) => p.items.map((w) => w.id))).toEqual(live);
    expect(pages[0]!.items[1]).toMatchObject({ id: ids[1], account: accounts[1], failing: true, held: 0, oldest_held_at: null });
  });

  it("account=ID reads that account's endpoints only (its own index, not a walk of every endpoint under the scan budget)", async () => {
    const third = await allPages<{ id: number }>(t, `/admin/v1/webhooks?account=${accounts[2]}`, 'webhooks');
    // Its three endpoints are spread over nine ids: a walk of every endpoint would need three requests here.
    expect(third).toHaveLength(1);
    expect(third[0]!.items.map((w) => w.id)).toEqual([ids[2], ids[5], ids[8]]);
    const paged = await allPages<{ id: number }>(t, `/admin/v1/webhooks?account=${accounts[2]}&limit=2`, 'webhooks');
    expect(paged.map((p) => p.items.map((w) => w.id))).toEqual([[ids[2], ids[5]], [ids[8]]]);
    expect((await t.admin('GET', `/admin/v1/webhooks?account=${accounts[2]}&cursor=${ids[5]}`)).body).toMatchObject({ webhooks: [{ id: ids[8] }], next_cursor: null });
    expect((await t.admin('GET', '/admin/v1/webhooks?account=999999')).body).toEqual({ ok: true, webhooks: [], next_cursor: null });
  });

  it('failing=true examines at most the scan budget per request: short pages with a cursor, each failing endpoint once', async () => {
    const pages = await allPages<{ id: number }>(t, '/admin/v1/webhooks?failing=true', 'webhooks');
    // Eight endpoints at four a request.
    expect(pages.map((p) => p.items.map((w) => w.id))).toEqual([[ids[1]], [ids[7]]]);
    expect(pages.map((p) => p.next)).toEqual([String(live[3]), null]);
    const healthy = await allPages<{ id: number }>(t, '/admin/v1/webhooks?failing=false', 'webhooks');
    expect(healthy.flatMap((p) => p.items.map((w) => w.id))).toEqual(live.filter((id) => id !== ids[1] && id !== ids[7]));
  });

  it('refuses a bad limit, cursor, account or failing with 400 VALIDATION and the listings\u2019 sentences', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit must be an integer from 1 to 500.'],
      ['limit=501', 'limit must be an integer from 1 to 500.'],
      ['limit=ten', 'limit must be an integer from 1 to 500.'],
      ['cursor=abc', 'cursor must be the next_cursor of an earlier page.'],
      ['cursor=0', 'cursor must be the next_cursor of an earlier page.'],
      ['cursor=99999999999999999', 'cursor must be the next_cursor of an earlier page.'],
      ['account=x', 'account must be an account id.'],
      ['failing=yes', 'failing must be true or false.'],
    ];
    for (const [query, message] of cases) {
      const r = await t.admin('GET', `/admin/v1/webhooks?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: 'VALIDATION', message });
    }
  });

  it('the CLI lists every endpoint with --all, and its next-page command keeps --account and --failing', async () => {
    const all = await cli(t, 'webhook', 'list', '--all', '--limit', '2', '--json');
    expect(all.code, all.err).toBe(0);
    expect(JSON.parse(all.out)).toMatchObject({ next_cursor: null });
    expect(JSON.parse(all.out).webhooks.map((w: { id: number }) => w.id)).toEqual(live);
    const page = await cli(t, 'webhook', 'list', '--limit', '3');
    expect(page.out).toContain(`More webhook endpoints follow. Next page: \`credit-order-api webhook list --limit 3 --cursor ${live[2]}\` (or add --all for every page).`);
    const failing = await cli(t, 'webhook', 'list', '--account', String(accounts[1]), '--failing', '--limit', '1');
    expect(failing.out).toContain(
      `More failing webhook endpoints follow. Next page: \`credit-order-api webhook list --account ${accounts[1]} --failing --limit 1 --cursor ${ids[1]}\` (or add --all for every page).`,
    );
    const rest = await cli(t, 'webhook', 'list', '--account', String(accounts[1]), '--failing', '--all', '--json');
    expect(JSON.parse(rest.out).webhooks.map((w: { id: number }) => w.id)).toEqual([ids[1], ids[7]]);
  });
});
