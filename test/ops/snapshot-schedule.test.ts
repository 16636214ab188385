/**
 * Scheduled snapshots: SNAPSHOT_EVERY, SNAPSHOT_DIR and SNAPSHOT_KEEP. Each
 * scheduled snapshot is a verified store directory named for its time; the
 * oldest beyond SNAPSHOT_KEEP are removed and nothing else in the directory
 * is touched; the last result (time, duration, size, ok or error) is on
 * /metrics and in stats, for a snapshot asked for as for a scheduled one.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
import { verifyDirectory } from '../../src/ops/index.js';
import { MS_PER_DAY, MS_PER_HOUR } from '../../src/platform/units.js';
import { cli } from '../helpers/cli.js';
import { order, startTestServer, useScratchDirs, type TestServer } from '../helpers/server.js';

/** The snapshot gauges of /metrics, by name. */
async function snapshotGauges(t: TestServer): Promise<Record<string, number>> {
  const text = (await t.admin('GET', '/metrics')).text;
  const gauges: Record<string, number> = {};
  for (const m of text.matchAll(/^(coa_snapshot_\w+) (\S+)$/gm)) gauges[m[1]!] = Number(m[2]);
  return gauges;
}

const scheduled = (dir: string): string[] => readdirSync(dir).filter((name) => name.startsWith('snapshot-')).sort();

describe('scheduled snapshots', () => {
  const scratch = useScratchDirs();

  it('each is a verified store named for its time; the oldest beyond SNAPSHOT_KEEP go, and nothing else in SNAPSHOT_DIR does', async () => {
    const dir = join(scratch(), 'snapshots');
    const t = await startTestServer({ config: { snapshotEveryMs: MS_PER_DAY, snapshotDir: dir, snapshotKeep: 2 } });
    try {
      const creds = await t.createAccount('reseller', '100');
      const service = await t.createService();
      mkdirSync(join(dir, 'keep-me'), { recursive: true });
      writeFileSync(join(dir, 'notes.txt'), 'the operator\'s own file');
      const taken: string[] = [];
      for (let i = 0; i < 3; i++) {
        expect((await t.api('POST', '/api/v1/order', creds, order(service, 10))).status).toBe(201);
        const result = (await t.server.snapshots!.runOnce())!;
        expect(result.error).toBeNull();
        expect(result.scheduled).toBe(true);
        expect(result.atMs).toBe(t.clock.wallMs());
        taken.push(result.path);
        t.clock.advance(MS_PER_HOUR);
      }
      expect(taken.map((p) => p.slice(dir.length + 1))).toEqual(['snapshot-2026-01-01T00-00-00Z', 'snapshot-2026-01-01T01-00-00Z', 'snapshot-2026-01-01T02-00-00Z']);
      expect(scheduled(dir)).toEqual(['snapshot-2026-01-01T01-00-00Z', 'snapshot-2026-01-01T02-00-00Z']);
      expect(existsSync(join(dir, 'keep-me'))).toBe(true);
      expect(existsSync(join(dir, 'notes.txt'))).toBe(true);
      // The newest holds all three orders and verifies on its own.
      const newest = await verifyDirectory(taken[2]!);
      expect(newest.ok).toBe(true);
      expect(newest.counts.orders).toBe(3);
    } finally {
      await t.close();
    }
    // Three snapshots, each taken and verified in an operator-job child process (a Node start each):
    // 5–13 s here on a quiet machine, past 30 s beside other heavy processes.
  }, 60_000);

  it('the last result is on /metrics and in stats: time, duration, size and ok, or the error of a failed one', async () => {
    const t = await startTestServer();
    try {
      expect(await snapshotGauges(t)).toEqual({
        coa_snapshot_last_start_time_seconds: 0,
        coa_snapshot_last_duration_seconds: 0,
        coa_snapshot_last_bytes: 0,
        coa_snapshot_last_ok: 0,
      });
      expect((await t.admin('GET', '/admin/v1/stats')).body.last_snapshot).toBeNull();

      const out = join(scratch(), 'asked');
      const taken = await t.admin('POST', '/admin/v1/snapshot', { out });
      expect(taken.status, taken.text).toBe(200);
      const ok = await snapshotGauges(t);
      expect(ok['coa_snapshot_last_ok']).toBe(1);
      expect(ok['coa_snapshot_last_bytes']).toBe(taken.body.snapshot.bytes);
      expect(ok['coa_snapshot_last_start_time_seconds']).toBe(t.clock.wallMs() / 1000);
      const stats = (await t.admin('GET', '/admin/v1/stats')).body.last_snapshot;
      expect(stats).toEqual({ at: new Date(t.clock.wallMs()).toISOString(), duration_ms: 0, bytes: taken.body.snapshot.bytes, path: out, scheduled: false, ok: true, error: null });
      const shown = await cli(t, 'stats');
      expect(shown.code).toBe(0);
      expect(shown.out).toMatch(/^last_snapshot\.ok\s+yes$/m);
      expect(shown.out).toContain(`last_snapshot.path`);
      expect(shown.out).toMatch(new RegExp(`^last_snapshot\\.at\\s+${new Date(t.clock.wallMs()).toISOString().replace(/[.]/g, '\\.')}$`, 'm'));

      // Into the same, now non-empty, directory: it fails, and that is the last result.
      t.clock.advance(MS_PER_HOUR);
      expect((await t.admin('POST', '/admin/v1/snapshot', { out })).status).toBe(400);
      const failed = await snapshotGauges(t);
      expect(failed['coa_snapshot_last_ok']).toBe(0);
      expect(failed['coa_snapshot_last_bytes']).toBe(0);
      expect(failed['coa_snapshot_last_start_time_seconds']).toBe(t.clock.wallMs() / 1000);
      const last = (await t.admin('GET', '/admin/v1/stats')).body.last_snapshot;
      expect(last.ok).toBe(false);
      expect(last.error).toMatch(/already exists and is not empty/);
      expect((await cli(t, 'stats')).out).toMatch(/^last_snapshot\.ok\s+no$/m);
    } finally {
      await t.close();
    }
  });

  it('runs on its own every SNAPSHOT_EVERY', async () => {
    const dir = join(scratch(), 'timed');
    // One second of real time: the schedule's timer is wall time, like the sweep's.
    const t = await startTestServer({ config: { snapshotEveryMs: 1000, snapshotDir: dir, snapshotKeep: 2 } });
    try {
      // The test clock stands still, so the names share one second and are told apart by -2, -3…;
      // the first is removed once the third is taken and verified.
      const first = 'snapshot-2026-01-01T00-00-00Z';
      const pruned = (): boolean => existsSync(dir) && scheduled(dir).length === 2 && !scheduled(dir).includes(first);
      // Its own deadline, inside the test's (60 s): three snapshots, each verified in a child process.
      const until = Date.now() + 30_000;
      while (!pruned()) {
        if (Date.now() > until) throw new Error(`no third scheduled snapshot within 30 s; ${dir} holds ${existsSync(dir) ? scheduled(dir).join(', ') : 'nothing'}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(scheduled(dir).every((name) => /^snapshot-2026-01-01T00-00-00Z-\d+$/.test(name))).toBe(true);
      expect((await snapshotGauges(t))['coa_snapshot_last_ok']).toBe(1);
    } finally {
      await t.close();
    }
  }, 60_000);
});

describe('snapshot settings', () => {
  it('SNAPSHOT_EVERY takes a duration; anything else, or no SNAPSHOT_DIR beside it, stops the start with a sentence', () => {
    expect(loadConfig([], { SNAPSHOT_EVERY: '1h30m', SNAPSHOT_DIR: '/backups' }).snapshotEveryMs).toBe(90 * 60 * 1000);
    expect(loadConfig([], { SNAPSHOT_EVERY: '1d', SNAPSHOT_DIR: '/backups' }).snapshotEveryMs).toBe(MS_PER_DAY);
    expect(loadConfig([], {}).snapshotEveryMs).toBeNull();
    expect(() => loadConfig([], { SNAPSHOT_EVERY: '6 hours', SNAPSHOT_DIR: '/backups' })).toThrow('SNAPSHOT_EVERY (--snapshot-every) must be a duration such as 90s, 30m, 6h, 1d or 1h30m; got "6 hours".');
    expect(() => loadConfig([], { SNAPSHOT_EVERY: '0s', SNAPSHOT_DIR: '/backups' })).toThrow(/must be a duration/);
    expect(() => loadConfig([], { SNAPSHOT_EVERY: '6h' })).toThrow('SNAPSHOT_EVERY (--snapshot-every) is set but SNAPSHOT_DIR (--snapshot-dir) is not');
    expect(() => loadConfig([], { SNAPSHOT_KEEP: '0' })).toThrow(/SNAPSHOT_KEEP/);
  });
});
