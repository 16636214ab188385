/**
 * `npm run test:crash -- --cycles N [--seed S] [--power-loss] [--sync-mode M] [--replicated]`:
 * many kill cycles, with a report. With --power-loss each kill is a
 * simulated power cut: the restart finds only what the server had synced
 * (power-loss.c). With --replicated each kill is of a replicated group's
 * leader (PostgreSQL primary with a synchronous standby, two nodes): the
 * other node takes over and the checks run against it.
 */
import { parseArgs } from 'node:util';
import { runCrashCycles } from './kill-cycles.js';
import { buildPowerLossLibrary } from './power-loss.js';
import { replicatedTarget } from './replicated-target.js';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '20' }, seed: { type: 'string' }, 'power-loss': { type: 'boolean', default: false }, 'sync-mode': { type: 'string' }, replicated: { type: 'boolean', default: false } } });
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
const takeoverMs: number[] = [];
const report = await runCrashCycles({
  ...(values.replicated ? { target: (token: string) => replicatedTarget(token, takeoverMs) } : {}),
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
if (takeoverMs.length > 0) {
  const sorted = [...takeoverMs].sort((a, b) => a - b);
  process.stdout.write(`replicated: ${sorted.length} takeovers after SIGKILL of the leader, median ${Math.round(sorted[sorted.length >> 1]!)} ms, max ${Math.round(sorted[sorted.length - 1]!)} ms\n`);
}
for (const p of report.problems.slice(0, 20)) process.stdout.write(`  ${p}\n`);
process.exit(report.problems.length === 0 && report.lost === 0 ? 0 : 1);
