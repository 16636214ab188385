import { describe, expect, it } from 'vitest';
import { allPages } from '../helpers/admin-pages.js';
import { cli } from '../helpers/cli.js';
import { order, useServer, type Creds } from '../helpers/server.js';

/*
 * An account's statement answers "where did my credits go": every movement
 * of its money, read from the durable log, with the balance each left, a
 * page at a time. Real server, real LMDB, over HTTP and through the CLI.
 */

interface Movement {
  seq: number;
  at: string;
  kind: string;
  amount: number;
  balance: number | null;
  order: string | null;
  number: number | null;
  reason: string | null;
}

/** Exact decimal arithmetic for the test's own sums: micro-credits from a JSON number. */
function micro(credits: number): number {
  const [whole, frac = ''] = String(credits).replace('-', '').split('.');
  const value = Number(whole) * 1_000_000 + Number(frac.padEnd(6, '0'));
  return credits < 0 ? -value : value;
}

const BUDGET = 3;

describe('GET /admin/v1/accounts/{id}/statement', () => {
  let alice: Creds;
  let bob: Creds;
  let service: number;
  const placed: { id: string; number: number }[] = [];

  const t = useServer({ server: { adminScanEntriesMax: BUDGET } }, async (t) => {
    service = await t.createService({ rate: '0.25', min: 1, max: 1000, cancel: true });
    alice = await t.createAccount('alice', '100');
    bob = await t.createAccount('bob', '50');
    for (const [who, quantity] of [[alice, 40], [bob, 10], [alice, 8], [alice, 4]] as const) {
      const r = await t.api('POST', '/api/v1/order', who, order(service, quantity));
      expect(r.status).toBe(201);
      if (who === alice) placed.push({ id: r.body.order, number: r.body.number });
    }
    t.clock.advance(60_000);
    // A cancel (full refund), a partial (refund of the remains), a deduction, a plan grant and an order under the plan.
    expect((await t.admin('POST', `/admin/v1/orders/${placed[0]!.id}/status`, { status: 'canceled', reason: 'supplier down, "outage"' })).status).toBe(200);
    expect((await t.admin('POST', `/admin/v1/orders/${placed[1]!.id}/status`, { status: 'partial', remains: 3 })).status).toBe(200);
    expect((await t.admin('POST', `/admin/v1/accounts/${alice.id}/credits`, { amount: '-1.5', reason: 'chargeback' })).status).toBe(200);
    t.clock.advance(60_000);
    expect((await t.admin('POST', `/admin/v1/accounts/${alice.id}/plan`, { months: 1, reason: 'promo' })).status).toBe(200);
    const underPlan = await t.api('POST', '/api/v1/order', alice, order(service, 20));
    expect(underPlan.status).toBe(201);
    placed.push({ id: underPlan.body.order, number: underPlan.body.number });
  });

  it("lists every movement of the account's money, oldest first, and the running balance ends at the wallet's balance", async () => {
    // A budget of 3 events a request forces short pages: the walk skips bob's events and others that move no money.
    const pages = await allPages<Movement>(t, `/admin/v1/accounts/${alice.id}/statement?limit=2`, 'movements');
    expect(pages.length).toBeGreaterThan(3);
    const movements = pages.flatMap((p) => p.items);
    expect(movements.map((m) => m.kind)).toEqual(['account_opened', 'top_up', 'order', 'order', 'order', 'refund', 'partial_refund', 'deduction', 'plan_grant', 'order']);
    expect(movements.map((m) => m.amount)).toEqual([0, 100, -10, -2, -1, 10, 0.75, -1.5, 0, 0]);
    // Each balance is the one before it plus the amount; the last is the wallet's.
    let running = 0;
    for (const m of movements) {
      running += micro(m.amount);
      expect(micro(m.balance!)).toBe(running);
    }
    const wallet = await t.admin('GET', `/admin/v1/accounts/${alice.id}`);
    expect(micro(movements.at(-1)!.balance!)).toBe(micro(wallet.body.account.credits));
    expect(movements.at(-1)!.balance).toBe(96.25);
    // Orders carry their id and number, refunds too; reasons are the operator's or what the event records.
    expect(movements[5]).toMatchObject({ order: placed[0]!.id, number: placed[0]!.number, reason: 'supplier down, "outage"' });
    expect(movements[6]).toMatchObject({ order: placed[1]!.id, number: placed[1]!.number });
    expect(movements[7]).toMatchObject({ reason: 'chargeback', order: null, number: null });
    expect(movements[8]).toMatchObject({ reason: 'promo', balance: 96.25 });
    expect(movements[9]).toMatchObject({ order: placed[3]!.id, number: placed[3]!.number, reason: 'billed under the Unlimited plan' });
    expect(movements.every((m) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(m.at))).toBe(true);
  });

  it("another account's statement holds only its own movements", async () => {
    const movements = (await allPages<Movement>(t, `/admin/v1/accounts/${bob.id}/statement`, 'movements')).flatMap((p) => p.items);
    expect(movements.map((m) => [m.kind, m.amount, m.balance])).toEqual([
      ['account_opened', 0, 0],
      ['top_up', 50, 50],
      ['order', -2.5, 47.5],
    ]);
  });

  it('from and to keep the movements in [from, to); a plan grant after from shows the balance the cursor carried', async () => {
    const all = (await allPages<Movement>(t, `/admin/v1/accounts/${alice.id}/statement`, 'movements')).flatMap((p) => p.items);
    const refundAt = all.find((m) => m.kind === 'refund')!.at;
    const grantAt = all.find((m) => m.kind === 'plan_grant')!.at;
    const window = (await allPages<Movement>(t, `/admin/v1/accounts/${alice.id}/statement?from=${refundAt}&to=${grantAt}`, 'movements')).flatMap((p) => p.items);
    expect(window.map((m) => m.kind)).toEqual(['refund', 'partial_refund', 'deduction']);
    const tail = (await allPages<Movement>(t, `/admin/v1/accounts/${alice.id}/statement?from=${refundAt}&limit=1`, 'movements')).flatMap((p) => p.items);
    expect(tail.find((m) => m.kind === 'plan_grant')!.balance).toBe(96.25);
    // A date alone is midnight UTC; nothing of the test's 2026-01-01 clock is before it, nothing after the next day.
    const day = await allPages<Movement>(t, `/admin/v1/accounts/${alice.id}/statement?from=2026-01-02`, 'movements');
    expect(day.flatMap((p) => p.items)).toEqual([]);
  });

  it('refuses bad input with a sentence naming it', async () => {
    const cases: [string, RegExp][] = [
      ['from=yesterday', /from must be an ISO 8601 date/],
      ['to=2026-13-45', /to must be an ISO 8601 date/],
      ['from=2026-01-02&to=2026-01-01', /from must be earlier than to/],
      ['cursor=abc', /cursor is not one this server returned/],
      ['limit=0', /limit must be an integer from 1 to 500/],
      ['form=2026-01-01', /Query parameter 'form' is not allowed here; allowed: from, to, limit, cursor/],
    ];
    for (const [q, message] of cases) {
      const r = await t.admin('GET', `/admin/v1/accounts/${alice.id}/statement?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body, q).toMatchObject({ ok: false, error: 'VALIDATION', message: expect.stringMatching(message) });
    }
    // A cursor of alice's statement does not page bob's.
    const first = await t.admin('GET', `/admin/v1/accounts/${alice.id}/statement?limit=1`);
    const crossed = await t.admin('GET', `/admin/v1/accounts/${bob.id}/statement?cursor=${first.body.next_cursor}`);
    expect(crossed.status).toBe(400);
    expect((await t.admin('GET', '/admin/v1/accounts/999/statement')).status).toBe(404);
  });

  it('coa account statement prints the movements as a table, every page with --all, and as CSV with --csv', async () => {
    const table = await cli(t, 'account', 'statement', String(alice.id), '--all');
    expect(table.code).toBe(0);
    expect(table.out.split('\n')[0]).toMatch(/^TIME\s+KIND\s+AMOUNT\s+BALANCE\s+ORDER\s+NUMBER\s+REASON$/);
    expect(table.out).toContain('supplier down');
    expect(table.out.trim().split('\n')).toHaveLength(11);
    const csv = await cli(t, 'account', 'statement', String(alice.id), '--csv', '--from', '2026-01-01T00:01:00Z');
    expect(csv.code).toBe(0);
    const rows = csv.out.trim().split('\n');
    expect(rows[0]).toBe('time,kind,amount,balance,order,number,reason');
    expect(rows.slice(1).map((r) => r.split(',')[1])).toEqual(['refund', 'partial_refund', 'deduction', 'plan_grant', 'order']);
    // A field with a comma or a quote is quoted, its quotes doubled.
    expect(rows[1]).toMatch(/,refund,10,97,[^,]+,\d+,"supplier down, ""outage"""$/);
    expect(rows.at(-1)).toMatch(/,order,0,96\.25,[^,]+,\d+,billed under the Unlimited plan$/);
    const bad = await cli(t, 'account', 'statement', String(alice.id), '--from', 'soon');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/from must be an ISO 8601 date/);
  });
});
