import { describe, expect, it } from 'vitest';
import { LmdbGroupCommit } from '../../src/wal/index.js';
import { HeldWal } from '../helpers/held-wal.js';
import { order, roundTrips, useServer, withServer, type Creds } from '../helpers/server.js';
import { waitFor } from '../helpers/wait-for.js';

describe('restart recovers exactly the durable state', () => {
  it('accounts, balances, services, orders and credentials are identical after a restart', async () => {
    await withServer({}, async (t) => {
      const service = await t.createService({ rate: '0.001', min: 1, max: 100000 });
      const a = await t.createAccount('a', '10');
      const b = await t.createAccount('b', '3.5');
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++) ids.push((await t.api('POST', '/api/v1/order', i % 2 ? a : b, order(service, i * 100))).body.order);
      const statusesBefore = await Promise.all(ids.map((id, i) => t.api('GET', `/api/v1/status?order=${id}`, i % 2 ? b : a).then((r) => r.body)));
      await t.admin('PATCH', `/admin/v1/accounts/${b.id}`, { banned: true, rate_limit_per_minute: 120 });
      const before = {
        accounts: (await t.admin('GET', '/admin/v1/accounts')).body,
        services: (await t.admin('GET', '/admin/v1/services')).body,
        statuses: statusesBefore,
      };
      await t.restart();
      const after = {
        accounts: (await t.admin('GET', '/admin/v1/accounts')).body,
        services: (await t.admin('GET', '/admin/v1/services')).body,
      };
      expect(after).toEqual({ accounts: before.accounts, services: before.services });
      expect(before.accounts.accounts[0].credits).toBe(9.1);
      await t.admin('PATCH', `/admin/v1/accounts/${b.id}`, { banned: false });
      const statuses = await Promise.all(ids.map((id, i) => t.api('GET', `/api/v1/status?order=${id}`, i % 2 ? b : a).then((r) => r.body)));
      expect(statuses).toEqual(before.statuses);
      expect((await t.api('GET', '/api/v1/balance', a)).body.credits).toBe(9.1);
      // The account count survives a restart without loading any account.
      expect((await t.admin('GET', '/admin/v1/stats')).body.accounts).toBe(2);
      // New ids do not collide with old ones after a restart.
      const c = await t.createAccount('c');
      expect(c.id).toBe(3);
      expect((await t.admin('POST', '/admin/v1/services', { platform: 'x', name: 'y', rate: 1, min: 1, max: 2 })).body.service.id).toBe(service + 1);
    });
  });
});

describe('no reply before its sync (held WAL)', () => {
  let held: HeldWal;
  let creds: Creds;
  let service: number;

  const t = useServer(
    {
      config: { mailboxMax: 4 },
      server: {
        wal: (store, onFatal) => {
          held = new HeldWal(new LmdbGroupCommit(store, { onFatal }));
          return held;
        },
      },
    },
    async (t) => {
      service = await t.createService({ rate: '1', min: 1, max: 10 });
      creds = await t.createAccount('alice', '100');
    },
  );

  it('an order reply waits for its sync, and a balance read waits for the pending debit', async () => {
    const before = (await t.api('GET', '/api/v1/balance', creds)).body.credits as number;
    held.holding = true;
    let answered = false;
    const placing = t.api('POST', '/api/v1/order', creds, order(service, 1)).then((r) => {
      answered = true;
      return r;
    });
    // The order is applied in memory and its batch committed, but its sync is held.
    await waitFor('the order to be committed with its sync held', () => held.heldCount > 0);
    let read = false;
    const reading = t.api('GET', '/api/v1/balance', creds).then((r) => {
      read = true;
      return r;
    });
    await roundTrips(t);
    expect(answered).toBe(false);
    expect(read).toBe(false);
    held.release();
    expect((await placing).status).toBe(201);
    expect((await reading).body.credits).toBe(before - 1);
  });

  it("an admin listing that sees a committed order whose sync is held (as under overlapping sync) answers only once it is durable", async () => {
    held.holding = true;
    const placing = t.api('POST', '/api/v1/order', creds, order(service, 1));
    await waitFor('the order to be committed with its sync held', () => held.heldCount > 0);
    const id = [...t.server.context.store.tables.orderIndex.getKeys({ start: ['pending'], end: ['pending', Infinity] })].map((k) => (k as string[])[3]).at(-1)!;
    expect(id, 'the order is committed and visible in LMDB').toBeDefined();
    let released = false;
    const listing = t.admin('GET', '/admin/v1/orders?status=pending&limit=500').then((r) => ({ r, released }));
    const shown = t.admin('GET', `/admin/v1/orders/${id}`).then((r) => ({ r, released }));
    await roundTrips(t);
    released = true;
    held.release();
    const [list, one] = await Promise.all([listing, shown]);
    // Both replies show the order, and neither left before its sync.
    expect(list.released).toBe(true);
    expect(list.r.body.orders.map((o: { id: string }) => o.id)).toContain(id);
    expect(one.released).toBe(true);
    expect(one.r.body.order.id).toBe(id);
    expect((await placing).status).toBe(201);
  });

  it('a full mailbox answers 503 UNAVAILABLE with Retry-After and changes nothing', async () => {
    const before = (await t.api('GET', '/api/v1/balance', creds)).body.credits as number;
    held.holding = true;
    // A request that ends before the mailbox is full (answered, or its connection failed) ends the wait with its outcome.
    let early: string | null = null;
    const pending = Array.from({ length: 4 }, () =>
      t.api('POST', '/api/v1/order', creds, order(service, 1)).then(
        (r) => ((early ??= `answered ${r.status} ${r.text}`), r),
        (error: unknown) => {
          early ??= `failed: ${String(error)}`;
          throw error;
        },
      ),
    );
    const depth = (): number => t.server.context.registry.get(creds.id)?.actor.depth ?? 0;
    await waitFor(
      'four orders in the mailbox with a sync held',
      () => {
        if (early !== null) throw new Error(`an order ended before the mailbox was full: ${early}`);
        return held.heldCount >= 1 && depth() >= 4;
      },
      undefined,
      () => `${held.heldCount} syncs held, mailbox depth ${depth()}`,
    );
    const refused = await t.api('POST', '/api/v1/order', creds, order(service, 1));
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('UNAVAILABLE');
    expect(refused.headers.get('retry-after')).toBe('1');
    held.release();
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([201, 201, 201, 201]);
    // The four accepted orders cost 1 credit each; the refused one nothing.
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(before - 4);
  });
});
