import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSyncBeforeReply, firstPid, readStraceLog } from './strace-log.js';

/**
 * The durability promise at the level of system calls: the built server
 * runs under strace, places orders one at a time (some with an
 * Idempotency-Key), and for every 201 the log must show each write the
 * server made to its data directory while handling that order synced
 * (fdatasync/fsync of the file completed, or the write went through an
 * O_DSYNC descriptor, as LMDB's meta page does) before the reply's first
 * byte was sent. Skips, saying so, where strace is missing or cannot trace.
 */
function straceMissing(): string | null {
  const probe = spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', '--', 'true'], { encoding: 'utf8' });
  if (probe.error !== undefined) return 'strace is not installed (Debian: apt-get install strace)';
  if (probe.status !== 0) return `strace cannot trace here: ${probe.stderr.trim().split('\n')[0] ?? `exit ${probe.status}`}`;
  return null;
}

const missing = straceMissing();
if (missing !== null) process.stderr.write(`SKIPPED syscall-level durability test: ${missing}\n`);

const TRACED = 'trace=openat,close,fsync,fdatasync,write,pwrite64,writev,pwritev,pwritev2,sendto,sendmsg,read,recvfrom,recvmsg';

/**
 * Per sync mode: the files whose writes must be synced before a reply. In
 * 'commit' and 'overlapping' mode every write to the data directory; in
 * 'log' mode the commit log (LMDB's writes follow it, unsynced,
 * and are replayed from it after a crash; see src/wal/log-first.ts).
 */
const MODES = [
  { mode: 'commit', env: {}, covered: (_path: string) => true, what: 'every write an order makes (LMDB)' },
  // lmdb-js overlapping sync commits (visible) before it flushes: the reply must still come after the flush.
  // (With one order at a time the flush follows its commit at once, so this holds even for a reply that waited
  // only for the commit; test/wal/durability.test.ts holds a sync to check the wait itself.)
  { mode: 'overlapping', env: { WAL_SYNC_MODE: 'overlapping' }, covered: (_path: string) => true, what: 'every write an order makes (LMDB, overlapping sync)' },
  { mode: 'log', env: { WAL_SYNC_MODE: 'log' }, covered: (path: string) => /\/commit-log\.[01]$/.test(path), what: "the order's commit-log record" },
];

describe.skipIf(missing !== null).each(MODES)('sync before reply, seen in the system calls (strace), sync mode $mode', ({ env, covered, what }) => {
  it(`syncs ${what} before the first byte of its 201 is sent`, async () => {
    const { spawnServer } = await import('../../dist/scripts/crash/server-process.js' as string);
    const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-strace-'));
    const dataDir = join(dir, 'data');
    const traceFile = join(dir, 'trace.log');
    const token = randomBytes(16).toString('hex');
    const server = await spawnServer(dataDir, token, env, {
      wrapper: ['strace', '-f', '-qq', '-e', 'signal=none', '-s', '40', '-o', traceFile, '-e', TRACED, '--'],
    });
    try {
      const admin = async (path: string, body: unknown): Promise<any> => {
        const res = await fetch(`${server.adminUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status, path).toBeLessThan(300);
        return res.json();
      };
      const service = (await admin('/admin/v1/services', { platform: 'strace', name: 'strace', rate: 0.001, min: 1, max: 1000 })).service.id;
      const account = await admin('/admin/v1/accounts', { name: 'strace' });
      await admin(`/admin/v1/accounts/${account.account.id}/credits`, { amount: 100, reason: 'strace test' });
      const orders = 12;
      for (let n = 0; n < orders; n++) {
        const res = await fetch(`${server.url}/api/v1/order`, {
          method: 'POST',
          headers: {
            'x-api-key': account.api_key,
            'x-api-secret': account.api_secret,
            'content-type': 'application/json',
            ...(n % 3 === 0 ? { 'idempotency-key': `strace-${n}` } : {}),
          },
          body: JSON.stringify({ service, target: `https://example.com/strace/${n}`, quantity: 10 + n }),
        });
        expect(res.status, await res.text()).toBe(201);
      }
      // strace writes its log completely only once the server has exited.
      process.kill(firstPid(traceFile), 'SIGTERM');
      expect((await server.exited).code).toBe(0);

      const checks = checkSyncBeforeReply(readStraceLog(traceFile), dataDir, 'POST /api/v1/order', 'HTTP/1.1 201', covered);
      expect(checks).toHaveLength(orders);
      for (const check of checks) {
        // Each order was written (its log event, wallet and order rows) …
        expect(check.writes, check.request).toBeGreaterThan(0);
        // … and every one of those writes was on disk before the reply began.
        expect(check.unsynced, check.request).toEqual([]);
      }
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
