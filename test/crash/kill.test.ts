import { describe, expect, it } from 'vitest';
import { expectNothingAcknowledgedLost, runCrashCycles } from '../helpers/crash-cycles.js';
import { postgresMissing } from '../helpers/replicated-group.js';

const noPostgres = await postgresMissing();
if (noPostgres !== null) console.log(`replicated kill test skipped: ${noPostgres}`);

/**
 * SIGKILL at a random moment under concurrent load, restart, check that
 * nothing acknowledged was lost. Runs the built server (test/global-build.ts
 * refreshes the build first).
 */
describe('kill test (SIGKILL under load, restart, nothing acknowledged lost)', () => {
  it('survives a few kill cycles with every acknowledged order intact', async () => {
    const seed = 20261122;
    const report = await runCrashCycles({ cycles: 3, seed, accounts: 6, workers: 12, runMsMax: 400 });
    expectNothingAcknowledgedLost(report, seed);
    // Cancels and refills ran under the kills too, and were checked after each restart.
    expect(report.cancelsAcknowledged).toBeGreaterThan(0);
    expect(report.refillsAcknowledged).toBeGreaterThan(0);
  }, 120_000);

  it("the same over sync mode 'log' (commit log first, LMDB behind it)", async () => {
    const seed = 20261124;
    const report = await runCrashCycles({ cycles: 3, seed, accounts: 6, workers: 12, runMsMax: 400, serverEnv: { WAL_SYNC_MODE: 'log' } });
    expectNothingAcknowledgedLost(report, seed);
  }, 120_000);

  it.skipIf(noPostgres !== null)('the same over a replicated group: each kill is of the leader, the follower takes over with everything acknowledged', async () => {
    const seed = 20261127;
    const { replicatedTarget } = (await import('../../dist/scripts/crash/replicated-target.js' as string)) as typeof import('../../scripts/crash/replicated-target.js');
    const report = await runCrashCycles({ cycles: 2, seed, accounts: 4, workers: 8, runMsMax: 400, target: (token) => replicatedTarget(token) });
    expectNothingAcknowledgedLost(report, seed);
  }, 180_000);
});
