import { describe, it } from 'vitest';
import { expectNothingAcknowledgedLost, runCrashCycles } from '../helpers/crash-cycles.js';

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
  }, 120_000);

  it("the same over sync mode 'log' (commit log first, LMDB behind it)", async () => {
    const seed = 20261124;
    const report = await runCrashCycles({ cycles: 3, seed, accounts: 6, workers: 12, runMsMax: 400, serverEnv: { WAL_SYNC_MODE: 'log' } });
    expectNothingAcknowledgedLost(report, seed);
  }, 120_000);
});
