import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli as runCliAgainst } from '../helpers/cli.js';
import { tempDir, useServer } from '../helpers/server.js';

/*
 * The CLI against the REAL server (uWebSockets.js, LMDB in a temporary
 * directory), in-process: the commands of an operator's session, from
 * creating an account to reading the stats. Every test gets a fresh server
 * and makes the accounts, services and orders it reads through the CLI
 * itself, so each passes alone and the store-wide counts it asserts are
 * exactly what it made.
 */

const t = useServer({ perTest: true });

function cli(...args: string[]) {
  return runCliAgainst(t, ...args);
}

/** `--json` output, parsed; the run must have succeeded. */
async function cliJson(...args: string[]): Promise<any> {
  const r = await cli(...args, '--json');
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out);
}

interface Reseller {
  account: number;
  apiKey: string;
}

/** A new account; `credits` tops its wallet up when given. */
async function reseller(name = 'e2e reseller', credits?: string): Promise<Reseller> {
  const body = await cliJson('account', 'create', '--name', name);
  const made = { account: body.account.id as number, apiKey: body.api_key as string };
  if (credits !== undefined) await cliJson('account', 'credits', String(made.account), '--amount', credits, '--reason', 'bank transfer #1');
  return made;
}

/** The Instagram followers service at 0.25 a unit, 10 to 1000 per order. */
async function followers(): Promise<number> {
  const body = await cliJson('service', 'add', '--platform', 'instagram', '--name', 'Followers', '--rate', '0.25', '--min', '10', '--max', '1000', '--reason', 'launch');
  return body.service.id;
}

async function place(account: number, service: number, target: string, quantity: number): Promise<any> {
  return cliJson('orders', 'place', '--account', String(account), '--service', String(service), '--target', target, '--quantity', String(quantity));
}

interface FirstOrder extends Reseller {
  service: number;
  orderId: string;
}

/** A reseller with 10.3 credits and a pending order of 20 followers (charge 5, balance 5.3). */
async function firstOrder(): Promise<FirstOrder> {
  const made = await reseller('e2e reseller', '10.3');
  const service = await followers();
  const placed = await place(made.account, service, 'https://instagram.com/p/e2e', 20);
  return { ...made, service, orderId: placed.order };
}

/** The first order and a second of 10 followers (charge 2.5, balance 2.8). */
async function twoOrders(): Promise<FirstOrder & { secondId: string }> {
  const made = await firstOrder();
  const second = await place(made.account, made.service, 'https://instagram.com/p/two', 10);
  return { ...made, secondId: second.order };
}

/**
 * A whole session on two accounts: the reseller's two orders, the first
 * canceled (credits 7.8), the plan granted, the Telegram user linked, the
 * account banned, unbanned and given 600 requests a minute.
 */
async function session(): Promise<Reseller> {
  await reseller('second');
  const made = await twoOrders();
  const id = String(made.account);
  await cliJson('orders', 'set-status', made.orderId, '--status', 'canceled', '--reason', 'target private');
  await cliJson('account', 'plan', id, '--months', '1', '--reason', 'invoice 77');
  await cliJson('account', 'forcejoin', id, '--telegram-user-id', '424242', '--exempt', '--reason', 'partner');
  await cliJson('account', 'ban', id, '--reason', 'chargeback');
  await cliJson('account', 'unban', id, '--reason', 'resolved');
  await cliJson('account', 'rate-limit', id, '--per-minute', '600', '--reason', 'bulk');
  return made;
}

describe('operator session against the real server', () => {
  it('account create returns the key and secret once', async () => {
    const body = await cliJson('account', 'create', '--name', 'e2e reseller');
    expect(body.ok).toBe(true);
    expect(typeof body.account.id).toBe('number');
    expect(body.api_key).toMatch(/\S/);
    expect(body.api_secret).toMatch(/\S/);

    // The text form of the same command shows both and the shown-once warning.
    const text = await cli('account', 'create', '--name', 'second');
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^api_secret\s+\S+$/m);
    expect(text.out).toContain('shown only once');
  });

  it('account credits tops the wallet up to an exact decimal', async () => {
    const { account } = await reseller();
    const r = await cli('account', 'credits', String(account), '--amount', '10.3', '--reason', 'bank transfer #1');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^credits\s+10\.3$/m);
  });

  it('service add creates an orderable service', async () => {
    const body = await cliJson('service', 'add', '--platform', 'instagram', '--name', 'Followers', '--rate', '0.25', '--min', '10', '--max', '1000', '--reason', 'launch');
    expect(body.service).toMatchObject({ platform: 'instagram', name: 'Followers', rate: 0.25, min: 10, max: 1000, enabled: true });
  });

  it('orders place charges the account through the panel', async () => {
    const { account } = await reseller('e2e reseller', '10.3');
    const service = await followers();
    const r = await cli('orders', 'place', '--account', String(account), '--service', String(service), '--target', 'https://instagram.com/p/e2e', '--quantity', '20');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^Order \d+ placed for account \d+\.$/m);
    expect(r.out).toMatch(/^charge\s+5$/m);
    expect(r.out).toMatch(/^balance\s+5\.3$/m);
    expect(r.out).toMatch(/^status\s+pending$/m);
    const orderId = /^order\s+(\S+)$/m.exec(r.out)![1]!;
    expect(orderId).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('orders list shows the pending order, and pages with a cursor', async () => {
    const { account, service, orderId } = await firstOrder();
    // A second order, so that a page of one has a next page.
    const second = await place(account, service, 'https://instagram.com/p/two', 10);
    expect(second).toMatchObject({ ok: true, charge: 2.5, status: 'pending', balance: 2.8 });

    const table = await cli('orders', 'list');
    expect(table).toMatchObject({ code: 0, err: '' });
    const lines = table.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NUMBER\s+ACCOUNT\s+SERVICE\s+TYPE\s+QUANTITY\s+RUNS\s+CHARGE\s+DEBIT\s+STATUS/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(orderId);
    expect(lines[1]).toMatch(/\bpending\b.*\bpanel\b/);
    expect(table.out).not.toContain('Next page');

    const page = await cli('orders', 'list', '--limit', '1');
    expect(page.code).toBe(0);
    expect(page.out).toContain(orderId);
    const next = /Next page: `credit-order-api (order list [^`]+)`/.exec(page.out);
    expect(next).not.toBeNull();
    // The printed command works as printed and gives the other order.
    const rest = await cli(...next![1]!.split(' '));
    expect(rest.code).toBe(0);
    expect(rest.out).toContain(second.order);
    expect(rest.out).not.toContain(orderId);
    expect(rest.out).not.toContain('Next page');

    const all = await cliJson('orders', 'list', '--limit', '1', '--all');
    expect(all.next_cursor).toBeNull();
    expect(all.orders.map((o: { id: string }) => o.id)).toEqual([orderId, second.order]);
    expect(all.orders[0]).toMatchObject({ account, service, quantity: 20, charge: 5, debit: 5, status: 'pending', channel: 'panel' });
  });

  it('orders show prints one order', async () => {
    const { orderId } = await firstOrder();
    const r = await cli('orders', 'show', orderId);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^id\\s+${orderId}$`, 'm'));
    expect(r.out).toMatch(/^target\s+https:\/\/instagram\.com\/p\/e2e$/m);
    expect(r.out).toMatch(/^channel\s+panel$/m);
  });

  it('orders set-status canceled refunds the charge and shows the refund and credits', async () => {
    const { orderId } = await twoOrders();
    const r = await cli('orders', 'set-status', orderId, '--status', 'canceled', '--reason', 'target private');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(new RegExp(`^Order ${orderId} is now canceled\\.$`, 'm'));
    expect(r.out).toMatch(/^refund\s+5$/m);
    expect(r.out).toMatch(/^credits\s+7\.8$/m);

    // A final order cannot move again: 409 CONFLICT as one sentence, exit 1.
    const again = await cli('orders', 'set-status', orderId, '--status', 'completed');
    expect(again.code).toBe(1);
    expect(again.out).toBe('');
    expect(again.err).toMatch(/^error: CONFLICT: .*canceled.*\n$/);
  });

  it('account plan grants the unlimited plan and shows its expiry and price', async () => {
    const { account } = await reseller('e2e reseller', '10.3');
    const r = await cli('account', 'plan', String(account), '--months', '1', '--reason', 'invoice 77');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^expires\s+\d{4}-\d\d-\d\dT[\d:.]+Z$/m);
    expect(r.out).toMatch(/^price\s+\d+ INR$/m);
  });

  it('account forcejoin links a Telegram user', async () => {
    const { account } = await reseller();
    const body = await cliJson('account', 'forcejoin', String(account), '--telegram-user-id', '424242', '--exempt', '--reason', 'partner');
    expect(body.account).toMatchObject({ telegram_user_id: 424242, forcejoin_exempt: true });
  });

  it('account ban / unban / rate-limit accept a reason', async () => {
    const { account } = await reseller();
    expect((await cli('account', 'ban', String(account), '--reason', 'chargeback')).out).toMatch(/^banned\s+yes$/m);
    expect((await cli('account', 'unban', String(account), '--reason', 'resolved')).out).toMatch(/^banned\s+no$/m);
    expect((await cli('account', 'rate-limit', String(account), '--per-minute', '600', '--reason', 'bulk')).out).toMatch(/^rate_limit_per_minute\s+600$/m);
  });

  it('account show reflects the session', async () => {
    const { account, apiKey } = await session();
    const r = await cli('account', 'show', String(account));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^credits\s+7\.8$/m);
    expect(r.out).toMatch(/^unlimited\s+yes$/m);
    expect(r.out).toMatch(/^telegram_user_id\s+424242$/m);
    expect(r.out).toMatch(/^forcejoin_exempt\s+yes$/m);
    expect(r.out).toMatch(/^rate_limit_per_minute\s+600$/m);
    expect(r.out).not.toContain(apiKey);
  });

  it('stats counts what the session made', async () => {
    await session();
    const body = await cliJson('stats');
    expect(body).toMatchObject({ ok: true, accounts: 2, services: 1, orders: { pending: 1, canceled: 1 } });
    const r = await cli('stats');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^accounts\s+2$/m);
    expect(r.out).toMatch(/^orders\.pending\s+1$/m);
    expect(r.out).toMatch(/^orders\.canceled\s+1$/m);
    expect(r.out).toMatch(/^wal\.batches\s+\d+$/m);
  });

  it('a refused command exits 1 with one sentence', async () => {
    const service = await followers();
    const r = await cli('account', 'show', '999999');
    expect(r).toEqual({ code: 1, out: '', err: 'error: NOT_FOUND: No account with id 999999.\n' });
    const order = await cli('orders', 'place', '--account', '999999', '--service', String(service), '--target', 'https://x.test/a', '--quantity', '10');
    expect(order).toEqual({ code: 1, out: '', err: 'error: NOT_FOUND: No account with id 999999.\n' });
  });

  it('a word that cannot be an id exits 2 with the usage line; an order number finds its order', async () => {
    const { orderId } = await firstOrder();
    const r = await cli('account', 'show', 'abc');
    expect(r.code).toBe(2);
    expect(r.err).toBe('error: account show: ID must be an account id, a whole number from 1 (like 42), not "abc".\nUsage: credit-order-api account show ID [options]\nRun `credit-order-api account show --help` for details.\n');
    expect((await cli('order', 'set-status', 'abc', '--status', 'canceled')).code).toBe(2);
    const byId = await cliJson('order', 'show', orderId);
    expect((await cliJson('order', 'show', String(byId.order.number))).order.id).toBe(orderId);
  });

  it('verify reports a consistent ledger', async () => {
    await session();
    const r = await cli('verify');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(/^Ledger verified/);
    expect(r.out).toMatch(/^accounts\s+2$/m);
  });

  it('snapshot writes a verified copy', async () => {
    await session();
    const parent = tempDir();
    try {
      const out = join(parent, 'snap');
      const r = await cli('snapshot', '--out', out);
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(r.out).toMatch(new RegExp(`^path\\s+${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
      expect(r.out).toMatch(/^verified\s+yes$/m);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
