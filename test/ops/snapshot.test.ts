/**
 * takeSnapshot: an LMDB backup of a live server taken while orders are being
 * written is one consistent commit that verifies on its own, opens read-only,
 * and restores into a working server.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { takeSnapshot, verifyLedger } from '../../src/ops/index.js';
import type { LogEvent, WalletRecord } from '../../src/ledger/index.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { STORE_FORMAT, STORE_FORMAT_KEY } from '../../src/wal/index.js';
import { order, startTestServer, tempDir, useScratchDirs, useServer, withServer, type Creds } from '../helpers/server.js';
import { CREDIT, Ledger } from '../helpers/ledger.js';
import { waitFor } from '../helpers/wait-for.js';

/** Σ wallets and Σ of the log's money events, computed independently of verifyLedger. */
function sums(store: Store): { wallets: bigint; log: bigint; lastBalance: Map<number, number>; credits: Map<number, number> } {
  let log = 0n;
  const lastBalance = new Map<number, number>();
  for (const { value } of store.log.getRange()) {
    const e = value as LogEvent;
    if (e.type === 'credits.adjusted') log += BigInt(e.amount);
    if (e.type === 'order.placed') log -= BigInt(e.debit);
    if (e.type === 'order.status') log += BigInt(e.refund);
    if (e.type === 'account.created') lastBalance.set(e.account, e.credits);
    if (e.type === 'credits.adjusted' || e.type === 'order.placed' || e.type === 'order.status') lastBalance.set(e.account, e.balance);
  }
  let wallets = 0n;
  const credits = new Map<number, number>();
  for (const { value } of store.tables.wallets.getRange()) {
    const w = value as WalletRecord;
    wallets += BigInt(w.credits);
    credits.set(w.id, w.credits);
  }
  return { wallets, log, lastBalance, credits };
}

describe('takeSnapshot of a live server', () => {
  let service: number;
  let accounts: Creds[];
  const scratchDir = useScratchDirs();
  const fresh = (): string => join(scratchDir(), 'snapshot');
  const t = useServer({}, async (t) => {
    service = await t.createService({ rate: '0.001', min: 1, max: 100_000 });
    accounts = [];
    for (let i = 0; i < 4; i++) accounts.push(await t.createAccount(`reseller-${i}`, '50'));
  });

  it('is consistent and verifies while eight clients are writing 200 orders', async () => {
    const out = fresh();
    const eventsBefore = verifyLedger(t.server.context.store).counts.events;
    // Eight clients each place orders back to back until 200 are placed, so
    // the stream lasts long enough to snapshot in the middle of it.
    const acked: string[] = [];
    let started = 0;
    const client = async (): Promise<number[]> => {
      const statuses: number[] = [];
      while (started < 200) {
        const i = started++;
        const r = await t.api('POST', '/api/v1/order', accounts[i % 4]!, order(service, 100 + i));
        statuses.push(r.status);
        if (r.status === 201) acked.push(r.body.order);
      }
      return statuses;
    };
    const inFlight = Promise.all(Array.from({ length: 8 }, client)).then((all) => all.flat());
    // Snapshot once some orders are acknowledged (so durable) and while the
    // rest are still being written.
    await waitFor('20 orders acknowledged', () => acked.length >= 20, undefined, () => `${acked.length} acknowledged, ${started} started`);
    const ackedBefore = [...acked];
    const startedAtSnapshot = started;
    const report = await takeSnapshot(t.server.context.store, out);
    const statuses = await inFlight;
    expect(statuses).toHaveLength(200);
    expect(startedAtSnapshot).toBeLessThan(200); // writes really were still going on
    expect(statuses.every((status) => status === 201)).toBe(true);

    expect(report.path).toBe(resolve(out));
    expect(report.verify.firstBroken).toBeNull();
    expect(report.verify.ok).toBe(true);
    expect(report.events).toBe(report.verify.counts.events);
    expect(report.events).toBeGreaterThanOrEqual(eventsBefore);
    expect(report.bytes).toBeGreaterThan(0);
    // Every order acknowledged before the snapshot began is in it.
    expect(report.verify.counts.orders).toBeGreaterThanOrEqual(ackedBefore.length);
    expect(report.verify.counts.orders).toBeLessThanOrEqual(200);

    // The copy opens read-only and agrees with its own log, account by account.
    const copy = openStore(out, { readOnly: true });
    try {
      const s = sums(copy);
      expect(s.wallets).toBe(s.log);
      expect(s.credits).toEqual(s.lastBalance);
      expect(s.credits.size).toBe(4);
      expect(copy.tables.orders.getCount()).toBe(report.verify.counts.orders);
      expect(copy.nextSeq).toBe(report.events + 1);
      // It carries the store format, so a server started on it (a restore) reads it.
      expect(copy.tables.meta.get(STORE_FORMAT_KEY)).toBe(STORE_FORMAT);
      for (const id of ackedBefore) expect(copy.tables.orders.get(t.server.context.orders.ids.storageKey(id)!)).toBeDefined();
    } finally {
      await copy.close();
    }

    // The live store, now past the snapshot, verifies too and holds all 200.
    const live = verifyLedger(t.server.context.store);
    expect(live.ok).toBe(true);
    expect(live.counts.orders).toBe(200);
    expect(live.counts.events).toBeGreaterThanOrEqual(report.events);
  });

  it('restores: a server started on a copy of the snapshot has its accounts and balances', async () => {
    const out = fresh();
    const report = await takeSnapshot(t.server.context.store, out);
    const restoredDir = join(tempDir(), 'restored');
    cpSync(out, restoredDir, { recursive: true });
    const restored = await startTestServer({ dir: restoredDir });
    try {
      expect(verifyLedger(restored.server.context.store)).toEqual(report.verify);
      const before = (await t.admin('GET', '/admin/v1/accounts')).body;
      const after = (await restored.admin('GET', '/admin/v1/accounts')).body;
      expect(after).toEqual(before);
      const balance = await restored.api('GET', '/api/v1/balance', accounts[0]!);
      expect(balance.status).toBe(200);
    } finally {
      await restored.close();
      rmSync(resolve(restoredDir, '..'), { recursive: true, force: true });
    }
  });

  it('refuses a directory that is not empty, and leaves it alone', async () => {
    const out = fresh();
    mkdirSync(out);
    writeFileSync(join(out, 'notes.txt'), 'keep me');
    await expect(takeSnapshot(t.server.context.store, out)).rejects.toThrow(/already exists and is not empty; choose a fresh directory/);
    expect(readdirSync(out)).toEqual(['notes.txt']);
  });

  it('refuses to overwrite an earlier snapshot', async () => {
    const out = fresh();
    await takeSnapshot(t.server.context.store, out);
    await expect(takeSnapshot(t.server.context.store, out)).rejects.toThrow(/not empty/);
  });

  it('accepts an existing empty directory', async () => {
    const out = fresh();
    mkdirSync(out);
    const report = await takeSnapshot(t.server.context.store, out);
    expect(report.verify.ok).toBe(true);
    expect(readdirSync(out).sort()).toEqual(['data.mdb', 'lock.mdb']);
  });

  it('refuses a path that exists as a file', async () => {
    const file = fresh();
    writeFileSync(file, 'x');
    await expect(takeSnapshot(t.server.context.store, file)).rejects.toThrow(/exists and is not a directory/);
  });

  it('takes a snapshot into a directory whose name has a dot, and a server starts on it (lmdb-js would take the name for a file)', async () => {
    const dotted = fresh() + '.2024-01-01';
    const report = await takeSnapshot(t.server.context.store, dotted);
    expect(report.verify.ok).toBe(true);
    expect(readdirSync(dotted).sort()).toEqual(['data.mdb', 'lock.mdb']);
    await withServer({ dir: dotted }, async (restored) => {
      expect((await restored.admin('GET', '/admin/v1/verify')).body.report.ok).toBe(true);
      expect((await restored.admin('GET', '/admin/v1/stats')).body.accounts).toBe((await t.admin('GET', '/admin/v1/stats')).body.accounts);
    });
  });
});

describe('takeSnapshot of hand-made stores', () => {
  it('throws naming the broken invariant, and leaves the directory for inspection', async () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000);
    ledger.wallet(1).credits = 10 * CREDIT; // the debit never reached the wallet row
    const { store, dir } = ledger.write();
    const out = join(tempDir(), 'snapshot');
    try {
      await expect(takeSnapshot(store, out)).rejects.toThrow(
        /does not verify.*Wallet check failed at account 1: the wallet holds 10 credits but its ledger replays to 9 credits/,
      );
      expect(readdirSync(out)).toContain('data.mdb');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(resolve(out, '..'), { recursive: true, force: true });
    }
  });

  it('copies a single-file environment (a data path with an extension) into an openable directory', async () => {
    const base = tempDir();
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000).move('o1', 'canceled');
    const { store } = ledger.write(join(base, 'live.lmdb'));
    try {
      expect(existsSync(join(base, 'live.lmdb'))).toBe(true);
      const report = await takeSnapshot(store, join(base, 'snapshot'));
      expect(report.verify).toMatchObject({ ok: true, counts: { events: 4, orders: 1 }, totals: { refunded: 1_000_000n } });
      const copy = openStore(join(base, 'snapshot'), { readOnly: true });
      expect(copy.tables.wallets.get(1).credits).toBe(10 * CREDIT);
      await copy.close();
    } finally {
      await store.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
});
