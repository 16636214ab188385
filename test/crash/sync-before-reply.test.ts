import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plantEarlyReply } from '../helpers/planted-build.js';
import { missingTool, requireTool } from '../helpers/tools.js';
import { checkOwnCommitSynced, firstPid, readStraceLog, type ReplyCheck } from './strace-log.js';

/**
 * The durability promise at the level of system calls: the built server
 * runs under strace while clients place orders, some one at a time and then
 * many in flight at once (some with an Idempotency-Key), and for every 201
 * the log must show the write of the order's own commit synced
 * (fdatasync/fsync of the file completed, or the write went through an
 * O_DSYNC descriptor, as LMDB's meta page does) before the reply's first
 * byte was sent.
 *
 * Each sync mode runs twice: on the disk as it is, and under the late-sync
 * shim (scripts/crash/late-sync.c), which starts every fsync/fdatasync
 * LATE_MS late. On a fast disk a reply that waited only for the commit
 * would often still leave after the sync; under the shim it cannot, so the
 * verdict does not depend on the disk's speed. The last test plants such a
 * bug in a copy of the build and shows the check catches it.
 */
const straceMissing = requireTool('strace', 'the syscall-level durability test');
const { buildLateSyncLibrary, lateSyncEnv } = await import('../../dist/scripts/crash/late-sync.js' as string);
const built = buildLateSyncLibrary() as { library: string } | { missing: string };
const shim = 'library' in built ? built.library : undefined;
const shimMissing = 'missing' in built ? missingTool('cc', 'the late-sync shim', built.missing) : null;

const TRACED = 'trace=openat,close,fsync,fdatasync,write,pwrite64,writev,pwritev,pwritev2,sendto,sendmsg';
/** Enough of each write for a whole LMDB page, and so every row's target, to appear in the log. */
const SHOWN_BYTES = 16_384;
/** How late the shim starts each sync: far longer than a reply takes to leave once its commit returns. */
const LATE_MS = 40;
/**
 * The planted bug's run: each record's sync, never awaited, sleeps in one
 * of libuv's pool threads, where LMDB's commit also runs. With the default
 * four threads, four sleeping syncs hold the pool, LMDB's commit waits for
 * one of them to end, and that sync, started after the record was written,
 * covers it: on a loaded machine every reply could leave synced by luck.
 * Enough threads for every sync of the run keep LMDB's commit from waiting
 * on them, and a longer delay keeps the syncs of the orders placed one at a
 * time from ending inside another order's reply.
 */
const PLANTED_POOL_THREADS = 128;
const PLANTED_LATE_MS = 200;
const ONE_AT_A_TIME = 6;
const IN_FLIGHT = 16;
const CONCURRENT_ORDERS = 64;

/**
 * Per sync mode: the files whose writes must be synced before a reply. In
 * 'commit' and 'overlapping' mode LMDB's files; in 'log' mode the commit log
 * (LMDB's writes follow it, unsynced, and are replayed from it after a
 * crash; see src/wal/log-first.ts).
 */
const LOG_FILES = (path: string): boolean => /\/commit-log\.[01]$/.test(path);

const MODES = [
  { mode: 'commit', env: {} as Record<string, string>, covered: (_path: string) => true, what: "the order's LMDB commit" },
  // lmdb-js overlapping sync commits (visible) before it flushes: the reply must still come after the flush.
  { mode: 'overlapping', env: { WAL_SYNC_MODE: 'overlapping' }, covered: (_path: string) => true, what: "the order's LMDB commit (overlapping sync)" },
  { mode: 'log', env: { WAL_SYNC_MODE: 'log' }, covered: LOG_FILES, what: "the order's commit-log record" },
];

const DISKS = [
  { disk: 'the disk as it is', lateMs: null },
  { disk: `every sync started ${LATE_MS} ms late (late-sync shim)`, lateMs: LATE_MS },
];

interface TracedRun {
  checks: ReplyCheck[];
  placed: number;
}

/** Runs a server (from `dist`) under strace, places orders, stops it and checks every 201 in its log. */
async function traceOrders(options: { env: Record<string, string>; lateMs: number | null; lateOnly?: string; covered: (path: string) => boolean; dist?: string }): Promise<TracedRun> {
  const { spawnServer } = await import(`${options.dist ?? '../../dist'}/scripts/crash/server-process.js`);
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-strace-'));
  const dataDir = join(dir, 'data');
  const traceFile = join(dir, 'trace.log');
  const token = randomBytes(16).toString('hex');
  const env = { ...options.env, ...(options.lateMs === null ? {} : lateSyncEnv(shim!, options.lateMs, options.lateOnly)) };
  const server = await spawnServer(dataDir, token, env, {
    wrapper: ['strace', '-f', '-qq', '-e', 'signal=none', '-s', String(SHOWN_BYTES), '-o', traceFile, '-e', TRACED, '--'],
  });
  try {
    const targets = await placeOrders(server.url, server.adminUrl, token);
    // strace writes its log completely only once the server has exited.
    process.kill(firstPid(traceFile), 'SIGTERM');
    expect((await server.exited).code).toBe(0);
    return { checks: checkOwnCommitSynced(readStraceLog(traceFile), dataDir, 'HTTP/1.1 201', targets, options.covered), placed: targets.size };
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Some orders one at a time, then many in flight; returns each acknowledged order's unique target. */
async function placeOrders(url: string, adminUrl: string, token: string): Promise<Map<string, string>> {
  const admin = async (path: string, body: unknown): Promise<any> => {
    const res = await fetch(`${adminUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, path).toBeLessThan(300);
    return res.json();
  };
  const service = (await admin('/admin/v1/services', { platform: 'strace', name: 'strace', rate: 0.001, min: 1, max: 1000 })).service.id;
  const account = await admin('/admin/v1/accounts', { name: 'strace' });
  await admin(`/admin/v1/accounts/${account.account.id}/credits`, { amount: 100, reason: 'strace test' });
  const targets = new Map<string, string>();
  const place = async (n: number): Promise<void> => {
    // A fixed-width number, so that no target is the start of another.
    const target = `https://example.com/strace/o${String(n).padStart(4, '0')}x`;
    const res = await fetch(`${url}/api/v1/order`, {
      method: 'POST',
      headers: { 'x-api-key': account.api_key, 'x-api-secret': account.api_secret, 'content-type': 'application/json', ...(n % 3 === 0 ? { 'idempotency-key': `strace-${n}` } : {}) },
      body: JSON.stringify({ service, target, quantity: 10 + n }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    targets.set((JSON.parse(text) as { order: string }).order, target);
  };
  for (let n = 0; n < ONE_AT_A_TIME; n++) await place(n);
  let next = ONE_AT_A_TIME;
  const client = async (): Promise<void> => {
    while (next < ONE_AT_A_TIME + CONCURRENT_ORDERS) await place(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, client));
  return targets;
}

const unsynced = (checks: ReplyCheck[]): string[] => checks.filter((c) => !c.syncedBefore).map((c) => `order ${c.order}, reply at log line ${c.replyAt}: ${c.write ?? 'no write of its target seen'}`);

describe.skipIf(straceMissing !== null || shimMissing !== null)('sync before reply, seen in the system calls (strace)', () => {
  describe.each(MODES)('sync mode $mode', ({ env, covered, what }) => {
    it.each(DISKS)(`syncs ${what} before the first byte of its 201, one order at a time and ${IN_FLIGHT} in flight: $disk`, async ({ lateMs }) => {
      const run = await traceOrders({ env, lateMs, covered });
      expect(run.placed).toBe(ONE_AT_A_TIME + CONCURRENT_ORDERS);
      // Every acknowledged order's reply is in the log, each with the write of its own commit …
      expect(run.checks).toHaveLength(run.placed);
      expect(run.checks.filter((c) => c.write === null).map((c) => c.order)).toEqual([]);
      // … and every one of those writes was on disk before its reply began.
      expect(unsynced(run.checks)).toEqual([]);
    }, 120_000);
  });

  // The planted bug: in sync mode 'log' a record's fdatasync is started but
  // not awaited (test/helpers/planted-build.ts). The reply still waits for
  // LMDB's commit, which on a fast disk usually outlasts the record's sync;
  // with the commit log's syncs started late, the replies leave first.
  it("catches a planted early reply (sync mode 'log' not waiting for the record's sync) under the shim", async () => {
    const planted = plantEarlyReply();
    try {
      const run = await traceOrders({ env: { WAL_SYNC_MODE: 'log', UV_THREADPOOL_SIZE: String(PLANTED_POOL_THREADS) }, lateMs: PLANTED_LATE_MS, lateOnly: 'commit-log', covered: LOG_FILES, dist: planted.dist });
      expect(run.checks).toHaveLength(run.placed);
      expect(unsynced(run.checks).length).toBeGreaterThan(0);
    } finally {
      planted.remove();
    }
  }, 120_000);
});
