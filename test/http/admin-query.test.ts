import { describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../src/http/admin/index.js';
import { allPages } from '../helpers/admin-pages.js';
import { order, useServer, type Creds } from '../helpers/server.js';

/*
 * The admin API's query parameters: the order listing narrows by account,
 * worker and number, and every route refuses a parameter it does not read,
 * so a typo never answers a wider listing than the one asked for. Real
 * server, real LMDB, over HTTP.
 */

interface ListedOrder {
  id: string;
  number: number;
  account: number;
  status: string;
  worker: string | null;
}

describe('GET /admin/v1/orders filters', () => {
  let alice: Creds;
  let bob: Creds;
  const numbers: Record<string, number> = {};

  const t = useServer({ server: { adminScanEntriesMax: 2 } }, async (t) => {
    const service = await t.createService({ rate: '1', min: 1, max: 100 });
    alice = await t.createAccount('alice', '1000');
    bob = await t.createAccount('bob', '1000');
    // Pending, oldest first: a1 b1 a2 b2 a3 b3 a4 b4; then workers claim the oldest four.
    for (let i = 1; i <= 4; i++) {
      for (const [name, who] of [['a', alice], ['b', bob]] as const) {
        const r = await t.api('POST', '/api/v1/order', who, order(service, i));
        numbers[`${name}${i}`] = r.body.number;
      }
    }
    expect((await t.admin('POST', '/admin/v1/orders/claim', { limit: 3, worker: 'w-one' })).body.orders).toHaveLength(3);
    expect((await t.admin('POST', '/admin/v1/orders/claim', { limit: 1, worker: 'w-two' })).body.orders).toHaveLength(1);
  });

  const listed = async (query: string): Promise<ListedOrder[]> => (await allPages<ListedOrder>(t, `/admin/v1/orders?${query}`, 'orders')).flatMap((p) => p.items);

  it("account lists one account's orders of the status, oldest first, across short pages", async () => {
    const pending = await listed(`status=pending&account=${alice.id}&limit=10`);
    expect(pending.map((o) => o.number)).toEqual([numbers.a3, numbers.a4]);
    expect((await listed(`status=processing&account=${bob.id}`)).map((o) => o.number)).toEqual([numbers.b1, numbers.b2]);
    expect(await listed('status=pending&account=999')).toEqual([]);
  });

  it('worker lists the orders one worker claimed, and combines with account', async () => {
    expect((await listed('status=processing&worker=w-one')).map((o) => o.number)).toEqual([numbers.a1, numbers.b1, numbers.a2]);
    expect((await listed('status=processing&worker=w-two')).map((o) => o.number)).toEqual([numbers.b2]);
    expect((await listed(`status=processing&worker=w-one&account=${bob.id}`)).map((o) => o.number)).toEqual([numbers.b1]);
  });

  it('number answers the one order with that number, whatever its status unless status is given', async () => {
    const one = await t.admin('GET', `/admin/v1/orders?number=${numbers.b2}`);
    expect(one.body).toMatchObject({ ok: true, next_cursor: null, orders: [{ number: numbers.b2, status: 'processing', worker: 'w-two' }] });
    expect((await t.admin('GET', `/admin/v1/orders?number=${numbers.b2}&status=pending`)).body.orders).toEqual([]);
    expect((await t.admin('GET', `/admin/v1/orders?number=${numbers.b2}&account=${alice.id}`)).body.orders).toEqual([]);
    expect((await t.admin('GET', '/admin/v1/orders?number=424242')).body.orders).toEqual([]);
  });

  it('refuses a malformed filter with a sentence', async () => {
    const cases: [string, RegExp][] = [
      ['account=abc', /account must be an account id/],
      ['number=0', /number must be an order number/],
      ['worker=', /worker must be a worker's name/],
      ['cancel_requested=true&status=pending', /leave out status/],
    ];
    for (const [q, message] of cases) {
      const r = await t.admin('GET', `/admin/v1/orders?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.message, q).toMatch(message);
    }
  });
});

describe('unknown query parameters on admin routes', () => {
  const t = useServer({ accounts: { alice: '10' } });

  /** A request to every GET route, with a path that reaches its handler. */
  function paths(account: number): string[] {
    return ADMIN_ROUTES.filter((r) => r.method === 'get').map((r) => r.path.replace(':id', String(account)).replace(':order', '1'));
  }

  it('a typo such as statuss= on any listing is 400 VALIDATION naming it, and lists nothing', async () => {
    const listings = ['/admin/v1/orders', '/admin/v1/accounts', '/admin/v1/refills', '/admin/v1/webhooks', `/admin/v1/accounts/${t.accounts.alice.id}/statement`, '/admin/v1/webhooks/1/deliveries'];
    for (const path of listings) {
      const r = await t.admin('GET', `${path}?statuss=canceled`);
      expect(r.status, path).toBe(400);
      expect(r.body, path).toMatchObject({ ok: false, error: 'VALIDATION', message: expect.stringMatching(/^Query parameter 'statuss' is not allowed here; allowed: .*\.$/) });
    }
    // The order listing names what it takes.
    const orders = await t.admin('GET', '/admin/v1/orders?statuss=canceled');
    expect(orders.body.message).toBe("Query parameter 'statuss' is not allowed here; allowed: status, account, number, worker, cancel_requested, limit, cursor.");
  });

  it('every route refuses a parameter it does not read, and one given twice, before doing anything', async () => {
    for (const path of paths(t.accounts.alice.id)) {
      const r = await t.admin('GET', `${path}?bogus=1`);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toMatch(/^Query parameter 'bogus' is not allowed here/);
    }
    const twice = await t.admin('GET', '/admin/v1/orders?status=pending&status=canceled');
    expect(twice.body.message).toBe("Query parameter 'status' is given more than once; give it once.");
    // A write with a stray parameter changes nothing.
    const credit = await t.admin('POST', `/admin/v1/accounts/${t.accounts.alice.id}/credits?dry_run=true`, { amount: '5', reason: 'test' });
    expect(credit.status).toBe(400);
    expect(credit.body.message).toBe("Query parameter 'dry_run' is not allowed here; this endpoint takes no query parameters.");
    expect((await t.admin('GET', `/admin/v1/accounts/${t.accounts.alice.id}`)).body.account.credits).toBe(10);
  });
});
