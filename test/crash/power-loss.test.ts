import { describe, it } from 'vitest';
import { expectNothingAcknowledgedLost, runCrashCycles } from '../helpers/crash-cycles.js';
import { missingTool } from '../helpers/tools.js';

/**
 * Power loss under load: the built server runs with the power-loss
 * recorder (scripts/crash/power-loss.c, LD_PRELOAD), which keeps beside
 * each data file an image of only what was synced. SIGKILL at a random
 * moment, the images put in place of the files (every unsynced write
 * dropped), restart: every acknowledged order must be there, each wallet
 * must equal its credits minus its stored orders, every key must replay.
 *
 * Each sync mode also runs under the late-sync shim
 * (scripts/crash/late-sync.c), which starts every fsync/fdatasync LATE_MS
 * late while twelve clients keep orders in flight: a reply that left
 * before its sync would then be acknowledged and lost at the kill whatever
 * the disk's speed (test/crash/sync-before-reply.test.ts shows a planted
 * early reply caught under the shim).
 */
const { buildPowerLossLibrary } = await import('../../dist/scripts/crash/power-loss.js' as string);
const { buildLateSyncLibrary } = await import('../../dist/scripts/crash/late-sync.js' as string);
const built = buildPowerLossLibrary() as { library: string } | { missing: string };
const builtShim = buildLateSyncLibrary() as { library: string } | { missing: string };
const recorder = 'library' in built ? built : undefined;
const shim = 'library' in builtShim ? builtShim.library : undefined;
const missing = 'missing' in built ? missingTool('cc', 'the power-loss test', built.missing) : 'missing' in builtShim ? missingTool('cc', 'the late-sync shim', builtShim.missing) : null;

/** How late the shim starts each sync: far longer than a reply takes to leave once its commit returns. */
const LATE_MS = 40;
const LOAD = { accounts: 6, workers: 12, runMsMax: 400 };

const MODES = [
  { mode: 'commit', serverEnv: {} as Record<string, string>, seed: 20261123 },
  // LMDB commits without its own sync here and reopens at its last flushed
  // transaction; the commit log's tail brings it back to every acknowledged order.
  { mode: 'log', serverEnv: { WAL_SYNC_MODE: 'log' }, seed: 20261124 },
  { mode: 'overlapping', serverEnv: { WAL_SYNC_MODE: 'overlapping' }, seed: 20261125 },
];

describe.skipIf(missing !== null)('power loss (unsynced writes dropped, restart, nothing acknowledged lost)', () => {
  describe.each(MODES)('sync mode $mode', ({ serverEnv, seed }) => {
    it('keeps every acknowledged order when everything unsynced is lost', async () => {
      const report = await runCrashCycles({ cycles: 3, seed, ...LOAD, powerLoss: recorder, serverEnv });
      expectNothingAcknowledgedLost(report, seed);
    }, 120_000);

    it(`keeps every acknowledged order with every sync started ${LATE_MS} ms late (late-sync shim)`, async () => {
      const report = await runCrashCycles({ cycles: 2, seed, ...LOAD, powerLoss: recorder, lateSync: { library: shim!, lateMs: LATE_MS }, serverEnv });
      expectNothingAcknowledgedLost(report, seed);
    }, 120_000);
  });

});
