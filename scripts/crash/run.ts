/**
 * `npm run test:crash -- --cycles N [--seed S] [--power-loss] [--sync-mode M]`: many kill
 * cycles, with a report. With --power-loss each kill is a simulated power
 * cut: the restart finds only what the server had synced (power-loss.c).
 */
import { parseArgs } from 'node:util';
import { runCrashCycles } from './kill-cycles.js';
import { buildPowerLossLibrary } from './power-loss.js';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '20' }, seed: { type: 'string' }, 'power-loss': { type: 'boolean', default: false }, 'sync-mode': { type: 'string' } } });
const cycles = Number(values.cycles);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!Number.isSafeInteger(cycles) || cycles < 1) {
  process.stderr.write('--cycles must be a positive integer\n');
  process.exit(2);
}
let powerLoss: { library: string } | undefined;
if (values['power-loss']) {
  const built = buildPowerLossLibrary();
  if ('missing' in built) {
    process.stderr.write(`--power-loss: ${built.missing}\n`);
    process.exit(2);
  }
  powerLoss = built;
}
const started = Date.now();
const syncMode = values['sync-mode'];
const report = await runCrashCycles({
  cycles,
  seed,
  log: (line) => process.stdout.write(line + '\n'),
  ...(powerLoss === undefined ? {} : { powerLoss }),
  ...(syncMode === undefined ? {} : { serverEnv: { WAL_SYNC_MODE: syncMode } }),
});
process.stdout.write(
  `\nseed ${seed}${powerLoss === undefined ? '' : ' (power loss: unsynced writes dropped)'}${syncMode === undefined ? '' : ` (WAL_SYNC_MODE=${syncMode})`}: ${report.cycles} cycles, ${report.acknowledged} acknowledged orders (${report.acknowledgedWithKey} with keys), ` +
    `${report.cancelsAcknowledged} acknowledged cancels, ${report.refillsAcknowledged} acknowledged refills, ` +
    `${report.storedOrders} stored${syncMode === 'log' ? `, ${report.logReplays} restarts replayed a commit-log tail` : ''}, lost ${report.lost}, problems ${report.problems.length}, ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
for (const p of report.problems.slice(0, 20)) process.stdout.write(`  ${p}\n`);
process.exit(report.problems.length === 0 && report.lost === 0 ? 0 : 1);
