import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMITS_IN_FLIGHT_MAX } from '../../src/wal/limits.js';
import { spawnServer } from '../helpers/server-process.js';
import { missingTool, requireTool } from '../helpers/tools.js';

/**
 * A failed fsync/fdatasync on the commit path is fail-stop, in every sync
 * mode. The built server runs under two test-only shims: the failing-sync
 * shim (scripts/crash/fail-sync.c), which lets the first syncs of one kind
 * of file succeed and fails every later one with EIO, and behind it the
 * power-loss recorder (scripts/crash/power-loss.c), which keeps of each
 * data file only what a successful sync made durable. Many orders are in
 * flight when the sync fails. Then:
 *
 * - the process stops by itself with exit code 1 and one fatal line naming
 *   the failed sync, and never syncs that file again (a sync retried after
 *   EIO may report success for data the kernel has dropped);
 * - the data files are put back to their durable images (a failed sync
 *   made nothing durable, so an order acknowledged on it is lost there) and
 *   the server restarts without the shims: every acknowledged order is
 *   there, and the ledger verifies.
 */
const { buildFailSyncLibrary, failSyncEnv } = await import('../../dist/scripts/crash/fail-sync.js' as string);
const { buildPowerLossLibrary, powerLossEnv, restoreDurableImages } = await import('../../dist/scripts/crash/power-loss.js' as string);
const { mergePreloadEnv } = await import('../../dist/scripts/crash/preload-library.js' as string);

const ccMissing = requireTool('cc', 'the failed-sync test');
const libraries = ccMissing === null ? { failSync: buildFailSyncLibrary(), powerLoss: buildPowerLossLibrary() } : null;
const built = (lib: { library: string } | { missing: string } | undefined, name: string): string | null =>
  lib === undefined ? null : 'library' in lib ? lib.library : (missingTool('cc', `the ${name}`, lib.missing), null);
const failSyncLibrary = built(libraries?.failSync, 'failing-sync shim');
const powerLossLibrary = built(libraries?.powerLoss, 'power-loss recorder');

/**
 * How many syncs of the failing file succeed: enough for the start-up's
 * own syncs and a few dozen batches of orders, so that the failure comes
 * with the server busy.
 */
const SYNCS_BEFORE_FAILURE = 40;
const CLIENTS = 16;
/** Every client has at most one order in flight, so at most this many were committed and never answered. */
const IN_FLIGHT_MAX = CLIENTS;

/**
 * `syncsAfterFailure`: how many more syncs of the file the server may
 * attempt once one has failed. In sync mode 'commit' and for the commit
 * log, none: the failed batch and everything behind it are rejected and
 * the process stops. When LMDB flushes behind its commits (lmdb-js
 * overlapping sync: sync mode 'overlapping', and LMDB's side of sync mode
 * 'log'), lmdb-js's write thread goes on with the transactions it was
 * already handed (at most COMMITS_IN_FLIGHT_MAX commits), each attempting
 * its flush, until the process is gone (one or two more, here). The shim
 * fails them too, as a dead disk would, so nothing more becomes durable,
 * and nothing after the first failure is acknowledged.
 */
const CASES = [
  { mode: 'commit', env: {} as Record<string, string>, file: 'data.mdb', syncsAfterFailure: 0, what: "LMDB's sync inside its commit" },
  { mode: 'overlapping', env: { WAL_SYNC_MODE: 'overlapping' }, file: 'data.mdb', syncsAfterFailure: COMMITS_IN_FLIGHT_MAX, what: "LMDB's flush after its commit" },
  { mode: 'log', env: { WAL_SYNC_MODE: 'log' }, file: 'commit-log', syncsAfterFailure: 0, what: "the commit log's record sync" },
  { mode: 'log', env: { WAL_SYNC_MODE: 'log' }, file: 'data.mdb', syncsAfterFailure: COMMITS_IN_FLIGHT_MAX, what: "LMDB's flush behind the commit log" },
];

interface Setup {
  service: number;
  key: string;
  secret: string;
}

function adminCall(adminUrl: string, token: string) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return res.json();
  };
}

/** A service and a funded account, made by a server without the shims, which then stops cleanly. */
async function setUp(dir: string, token: string, env: Record<string, string>): Promise<Setup> {
  const server = await spawnServer(dir, token, env);
  const admin = adminCall(server.adminUrl, token);
  const service = (await admin('POST', '/admin/v1/services', { platform: 'p', name: 'n', rate: 0.001, min: 1, max: 1000 })).service.id as number;
  const created = await admin('POST', '/admin/v1/accounts', { name: 'failed-sync' });
  await admin('POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: 1_000_000, reason: 'failed-sync test' });
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
  return { service, key: created.api_key, secret: created.api_secret };
}

/** Orders from many clients at once until the server is gone: the acknowledged orders and every status seen. */
async function orderUntilGone(url: string, setup: Setup): Promise<{ acked: string[]; statuses: Set<number> }> {
  const acked: string[] = [];
  const statuses = new Set<number>();
  const client = async (c: number): Promise<void> => {
    for (let i = 0; ; i++) {
      let res: Response;
      try {
        res = await fetch(`${url}/api/v1/order`, {
          method: 'POST',
          headers: { 'x-api-key': setup.key, 'x-api-secret': setup.secret, 'content-type': 'application/json', ...(i % 2 === 0 ? { 'idempotency-key': `c${c}-${i}` } : {}) },
          body: JSON.stringify({ service: setup.service, target: `https://example.com/${c}/${i}`, quantity: 10 }),
        });
        statuses.add(res.status);
        const body = (await res.json()) as { order?: string };
        if (res.status === 201) acked.push(body.order!);
      } catch {
        return; // the server is gone
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  return { acked, statuses };
}

/** The server's JSON log lines at level fatal (LMDB may print its own text before one, on the same line). */
function fatalLines(output: string): string[] {
  return output
    .split('\n')
    .map((line) => line.slice(Math.max(0, line.indexOf('{"level"'))))
    .filter((line) => line.startsWith('{"level"') && (JSON.parse(line) as { level: number }).level === 60);
}

describe.skipIf(failSyncLibrary === null || powerLossLibrary === null)('a failed fsync/fdatasync under load is fail-stop (failing-sync shim)', () => {
  it.each(CASES)(`sync mode $mode, $file fails: stops at the first failed sync, acknowledges nothing it covered, and a restart has every acknowledged order ($what)`, async ({ env, file, syncsAfterFailure }) => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-failed-sync-'));
    const images = mkdtempSync(join(tmpdir(), 'credit-order-api-failed-sync-images-'));
    const token = randomBytes(16).toString('hex');
    try {
      const setup = await setUp(dir, token, env);
      const shimmed = mergePreloadEnv(env, failSyncEnv(failSyncLibrary, SYNCS_BEFORE_FAILURE, file), powerLossEnv(powerLossLibrary, dir, images));
      const failing = await spawnServer(dir, token, shimmed);
      const { acked, statuses } = await orderUntilGone(failing.url, setup);
      const exit = await failing.exited;
      const output = failing.output();

      // Fail-stop: exit 1 by itself, one fatal line, and the failed sync's
      // EIO named (in the fatal line, or for LMDB by lmdb-js's own report
      // of its commit's error when no rejected write carried it in time) …
      const lines = output.split('\n');
      expect(exit, output.slice(-2000)).toEqual({ code: 1, signal: null });
      const fatal = fatalLines(output);
      expect(fatal, output.slice(-2000)).toHaveLength(1);
      expect(fatal[0]).toContain('a commit failed; stopping');
      expect(lines.filter((line) => !line.includes('fail-sync: ') && /\bEIO\b|Input\/output error/.test(line)).length, output.slice(-2000)).toBeGreaterThan(0);
      // … and the file was not synced again in the hope of success.
      const failures = lines.filter((line) => line.includes('fail-sync: '));
      expect(failures[0]).toContain(file);
      expect(failures.length, failures.join('\n')).toBeGreaterThanOrEqual(1);
      expect(failures.length, failures.join('\n')).toBeLessThanOrEqual(1 + syncsAfterFailure);
      // The failure came under load: orders were acknowledged before it, and
      // none was answered with anything but 201 or a server error.
      expect(acked.length).toBeGreaterThan(0);
      for (const status of statuses) expect([201, 500, 503]).toContain(status);

      // What a power cut at that moment leaves, restarted without the shims.
      restoreDurableImages(dir, images);
      const restarted = await spawnServer(dir, token, env);
      const admin = adminCall(restarted.adminUrl, token);
      const verify = await admin('GET', '/admin/v1/verify');
      expect(verify.report.ok, JSON.stringify(verify.report)).toBe(true);
      const missing: string[] = [];
      for (const id of acked) if (!(await fetch(`${restarted.adminUrl}/admin/v1/orders/${id}`, { headers: { authorization: `Bearer ${token}` } })).ok) missing.push(id);
      expect(missing).toEqual([]);
      // Stored: the acknowledged orders, and at most those committed and
      // synced just before the failure whose replies never left.
      const stored = (await admin('GET', '/admin/v1/stats')).orders.pending as number;
      expect(stored - acked.length).toBeGreaterThanOrEqual(0);
      expect(stored - acked.length).toBeLessThanOrEqual(IN_FLIGHT_MAX);
      restarted.child.kill('SIGTERM');
      expect((await restarted.exited).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(images, { recursive: true, force: true });
    }
  }, 90_000);
});
