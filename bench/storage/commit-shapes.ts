/**
 * What one group commit costs on this disk, by shape, with and without its
 * syncs: the numbers behind the choice of commit path (docs/DECISIONS.md, "Storage").
 *
 *   node dist/bench/storage/commit-shapes.js [--commits 1500] [--orders 32] [--wallets 10000] [--dir /tmp]
 *
 * Two shapes of the same batch of `--orders` orders, each timed per commit
 * with one commit in flight (the commit's own time):
 * - lmdb: today's path. The batch's WalEntries (an order.placed event, the
 *   wallet row of a random one of `--wallets` wallets, the order row under a
 *   time-ordered key and its status-index row) through LmdbGroupCommit: LMDB
 *   writes the dirty pages, fdatasyncs and writes its meta page (O_DSYNC).
 * - log: the same entries serialised (JSON) and appended to a preallocated,
 *   zero-filled file with one write and one fdatasync, as a dedicated
 *   append-only log would.
 * The whole measurement then runs again in a child process with libeatmydata
 * preloaded (every sync a no-op), so each shape's sync cost is the
 * difference. The disk's sync latency (a 4 KiB write + fdatasync) is printed
 * with it.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LmdbGroupCommit, openStore, orderIndexKey, type WalEntry } from '../../src/wal/index.js';
import type { OrderRecord } from '../../src/ledger/index.js';
import { describeSyncLatency, measureSyncLatency } from '../http/sync-latency.js';

const { values } = parseArgs({
  options: {
    commits: { type: 'string', default: '1500' },
    orders: { type: 'string', default: '32' },
    wallets: { type: 'string', default: '10000' },
    dir: { type: 'string', default: tmpdir() },
    eatmydata: { type: 'string', default: '/usr/lib/x86_64-linux-gnu/libeatmydata.so' },
    child: { type: 'boolean', default: false },
  },
});
const commits = Number(values.commits);
const perCommit = Number(values.orders);
const wallets = Number(values.wallets);
for (const [name, n] of [['--commits', commits], ['--orders', perCommit], ['--wallets', wallets]] as const) {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
}

const T0_MS = 1_700_000_000_000;

function orderEntry(n: number, account: number): WalEntry {
  const order: OrderRecord = {
    id: `o${n.toString().padStart(21, '0')}`,
    account,
    service: 1,
    target: `https://example.com/p/${account}`,
    quantity: 1000,
    rate: 1000,
    charge: 1_000_000,
    debit: 1_000_000,
    status: 'pending',
    remains: null,
    channel: 'api',
    unlimited: false,
    createdAtMs: T0_MS + n,
    seq: n,
  };
  return {
    events: [
      {
        type: 'order.placed',
        atMs: order.createdAtMs,
        account,
        order: order.id,
        service: 1,
        quantity: 1000,
        rate: 1000,
        charge: 1_000_000,
        debit: 1_000_000,
        balance: 1_000_000_000_000 - n,
        channel: 'api',
        idempotencyKey: null,
      } as never,
    ],
    puts: [
      { table: 'wallets', key: account, value: { id: account, credits: 1_000_000_000_000 - n, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null } },
      { table: 'orders', key: [order.createdAtMs, order.seq], value: order },
      { table: 'orderIndex', key: orderIndexKey(order), value: account },
    ],
  };
}

/** A reproducible random wallet id (mulberry32-like), so both shapes write the same batches. */
function walletOf(n: number): number {
  let t = (n + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return 1 + (((t ^ (t >>> 14)) >>> 0) % wallets);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function lmdbShape(): Promise<{ medianMs: number; meanMs: number }> {
  const dir = mkdtempSync(join(values.dir!, 'commit-shapes-'));
  const store = openStore(dir);
  try {
    await store.root.transaction(() => {
      for (let w = 1; w <= wallets; w++) store.tables.wallets.put(w, { id: w, credits: 1_000_000_000_000, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null });
    });
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => console.error(e) });
    const times: number[] = [];
    let n = 0;
    for (let c = 0; c < commits; c++) {
      const started = performance.now();
      const acks: Promise<void>[] = [];
      for (let i = 0; i < perCommit; i++, n++) acks.push(wal.append(orderEntry(n, walletOf(n))));
      await Promise.all(acks);
      times.push(performance.now() - started);
    }
    await wal.close();
    return { medianMs: median(times), meanMs: times.reduce((a, b) => a + b, 0) / times.length };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function logShape(): { medianMs: number; meanMs: number; batchBytes: number } {
  const dir = mkdtempSync(join(values.dir!, 'commit-shapes-'));
  const fd = openSync(join(dir, 'log'), 'w+');
  try {
    const batches: Buffer[] = [];
    let n = 0;
    for (let c = 0; c < commits; c++) {
      const entries: WalEntry[] = [];
      for (let i = 0; i < perCommit; i++, n++) entries.push(orderEntry(n, walletOf(n)));
      batches.push(Buffer.from(JSON.stringify(entries)));
    }
    const total = batches.reduce((a, b) => a + b.length, 0);
    const zeros = Buffer.alloc(1 << 20);
    for (let at = 0; at < total; at += zeros.length) writeSync(fd, zeros, 0, zeros.length, at);
    fdatasyncSync(fd);
    const times: number[] = [];
    let at = 0;
    for (const b of batches) {
      const started = performance.now();
      writeSync(fd, b, 0, b.length, at);
      fdatasyncSync(fd);
      times.push(performance.now() - started);
      at += b.length;
    }
    return { medianMs: median(times), meanMs: times.reduce((a, b) => a + b, 0) / times.length, batchBytes: Math.round(total / commits) };
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(): Promise<string> {
  const lmdb = await lmdbShape();
  const log = logShape();
  return JSON.stringify({ lmdb, log });
}

if (values.child) {
  process.stdout.write(`${await measure()}\n`);
} else {
  const self = fileURLToPath(import.meta.url);
  const args = ['--commits', String(commits), '--orders', String(perCommit), '--wallets', String(wallets), '--dir', values.dir!, '--child'];
  const syncLatency = describeSyncLatency(measureSyncLatency(values.dir!));
  const run = (env: Record<string, string>): { lmdb: { medianMs: number; meanMs: number }; log: { medianMs: number; meanMs: number; batchBytes: number } } => {
    const r = spawnSync(process.execPath, [self, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`the measuring child exited with ${r.status}`);
    return JSON.parse(r.stdout);
  };
  const synced = run({});
  const noSync = run({ LD_PRELOAD: values.eatmydata! });
  const f = (x: number): string => x.toFixed(3);
  console.log(`${commits} commits of ${perCommit} orders over ${wallets} wallets, one commit in flight, data in ${values.dir}; ${syncLatency}`);
  console.log('| shape | synced: median / mean ms per commit | no-sync (eatmydata): median / mean | the syncs cost (mean) |');
  console.log('|---|---:|---:|---:|');
  console.log(`| LMDB group commit (today) | ${f(synced.lmdb.medianMs)} / ${f(synced.lmdb.meanMs)} | ${f(noSync.lmdb.medianMs)} / ${f(noSync.lmdb.meanMs)} | ${f(synced.lmdb.meanMs - noSync.lmdb.meanMs)} |`);
  console.log(
    `| append-only log, one ${synced.log.batchBytes}-byte write + fdatasync | ${f(synced.log.medianMs)} / ${f(synced.log.meanMs)} | ` +
      `${f(noSync.log.medianMs)} / ${f(noSync.log.meanMs)} | ${f(synced.log.meanMs - noSync.log.meanMs)} |`,
  );
}
