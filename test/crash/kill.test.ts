import { describe, expect, it } from 'vitest';

/**
 * SIGKILL at a random moment under concurrent load, restart, check that
 * nothing acknowledged was lost. Runs the built server (test/global-build.ts
 * refreshes the build first).
 */
describe('kill test (SIGKILL under load, restart, nothing acknowledged lost)', () => {
  it('survives a few kill cycles with every acknowledged order intact', async () => {
    const { runCrashCycles } = await import('../../dist/scripts/crash/kill-cycles.js' as string);
    const seed = 20261122;
    const report = await runCrashCycles({ cycles: 3, seed, accounts: 6, workers: 12, runMsMax: 400 });
    expect(report.problems, `seed ${seed}`).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.acknowledgedWithKey).toBeGreaterThan(0);
    // Cancels and refills ran under the kills too, and were checked after each restart.
    expect(report.cancelsAcknowledged).toBeGreaterThan(0);
    expect(report.refillsAcknowledged).toBeGreaterThan(0);
  }, 120_000);

  it("the same over sync mode 'log' (commit log first, LMDB behind it)", async () => {
    const { runCrashCycles } = await import('../../dist/scripts/crash/kill-cycles.js' as string);
    const seed = 20261124;
    const report = await runCrashCycles({ cycles: 3, seed, accounts: 6, workers: 12, runMsMax: 400, serverEnv: { WAL_SYNC_MODE: 'log' } });
    expect(report.problems, `seed ${seed}`).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.acknowledgedWithKey).toBeGreaterThan(0);
  }, 120_000);
});
