/**
 * verifyLedger over a real server's store: whatever the HTTP API does, the
 * log replays to the wallets, with exact totals.
 */
import { describe, expect, it } from 'vitest';
import { verifyLedger, verifyLedgerAsync } from '../../src/ops/index.js';
import { seedIfEmpty } from '../../src/app/seed.js';
import { order, useServer, withServer } from '../helpers/server.js';

const FUNDED = { services: { main: { rate: '0.1', min: 1, max: 1000 } }, accounts: { alice: '100', bob: '2.5' } };

describe('verifyLedger on a fresh server', () => {
  it('a fresh server with accounts and top-ups verifies', async () => {
    await withServer(FUNDED, async (t) => {
      const report = verifyLedger(t.server.context.store);
      expect(report.firstBroken).toBeNull();
      expect(report).toMatchObject({ ok: true, counts: { accounts: 2, orders: 0, idempotencyKeys: 0 } });
      expect(report.totals).toEqual({ credited: 102_500_000n, debited: 0n, refunded: 0n });
    });
  });
});

describe('verifyLedger on a live server', () => {
  const t = useServer(FUNDED);


  it('orders, rejections, idempotent replays and adjustments keep the ledger consistent', async () => {
    expect((await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 3))).status).toBe(201); // 0.3
    expect((await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 7), { 'idempotency-key': 'a-1' })).status).toBe(201); // 0.7
    expect((await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 7), { 'idempotency-key': 'a-1' })).headers.get('idempotent-replayed')).toBe('true');
    expect((await t.api('POST', '/api/v1/order', t.accounts.bob, order(t.services.main, 20))).status).toBe(201); // 2
    // BALANCE, remembered under the key with no order.
    const poor = await t.api('POST', '/api/v1/order', t.accounts.bob, order(t.services.main, 10), { 'idempotency-key': 'b-1' });
    expect(poor.body.error).toBe('BALANCE');
    expect((await t.api('POST', '/api/v1/order', t.accounts.bob, order(t.services.main, 5000))).body.error).toBe('QTY');
    expect((await t.admin('POST', `/admin/v1/accounts/${t.accounts.alice.id}/credits`, { amount: '-10.25', reason: 'chargeback' })).status).toBe(200);
    await Promise.all(Array.from({ length: 50 }, (_, i) => t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 1 + (i % 9)))));

    const report = verifyLedger(t.server.context.store);
    expect(report.firstBroken).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.counts.orders).toBe(53);
    expect(report.counts.idempotencyKeys).toBe(2);
    // 50 orders of 1..9 units, cycling: 5 full cycles of 45 units + 1..5 = 240 units = 24 credits.
    const debited = 300_000n + 700_000n + 2_000_000n + 24_000_000n;
    expect(report.totals).toEqual({ credited: 102_500_000n - 10_250_000n, debited, refunded: 0n });

    const wallets = (await t.admin('GET', '/admin/v1/accounts')).body.accounts as { credits: number }[];
    const sum = wallets.reduce((s, w) => s + BigInt(Math.round(w.credits * 1_000_000)), 0n);
    expect(sum).toBe(report.totals.credited - report.totals.debited + report.totals.refunded);
    expect(await verifyLedgerAsync(t.server.context.store)).toEqual(report);
  });

});

describe('verifyLedger after a restart', () => {
  it('still verifies, with every order and total it had', async () => {
    await withServer(FUNDED, async (t) => {
      expect((await t.api('POST', '/api/v1/order', t.accounts.alice, order(t.services.main, 4))).status).toBe(201);
      expect((await t.api('POST', '/api/v1/order', t.accounts.bob, order(t.services.main, 5), { 'idempotency-key': 'b-2' })).status).toBe(201);
      const before = verifyLedger(t.server.context.store);
      expect(before).toMatchObject({ ok: true, counts: { accounts: 2, orders: 2, idempotencyKeys: 1 } });
      await t.restart();
      const report = verifyLedger(t.server.context.store);
      expect(report).toMatchObject({ ok: true, counts: before.counts, totals: before.totals });
    });
  });
});

describe('verifyLedger on a seeded server', () => {
  it('the demo account seeded on an empty data directory verifies', async () => {
    await withServer({}, async (t) => {
      const seed = await seedIfEmpty(t.server.context);
      expect(seed).not.toBeNull();
      // The printed v2 key works: a reseller tool can use it at once.
      const balance = await fetch(`${t.url}/api/v2`, { method: 'POST', body: new URLSearchParams({ key: seed!.v2Key, action: 'balance' }) });
      expect(await balance.json()).toMatchObject({ balance: '1000' });
      const report = verifyLedger(t.server.context.store);
      expect(report.firstBroken).toBeNull();
      expect(report.counts.accounts).toBe(1);
      expect(report.totals).toEqual({ credited: 1_000_000_000n, debited: 0n, refunded: 0n });
    });
  });
});
