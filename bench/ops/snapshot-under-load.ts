/**
 * A snapshot beside a saturating order load, against the same load without it.
 *
 *   node dist/bench/ops/snapshot-under-load.js [--orders 1000000] [--accounts 10000]
 *        [--connections 64] [--warmup-s 10] [--without-s 10] [--rounds 3] [--mb-per-second 100]
 *        [--backup] [--data DIR] [--seed-only]
 *
 * Seeds `--orders` placed orders directly into a fresh data directory (or
 * reuses the store `--data` names), starts the real server
 * (dist/src/main.js) with SNAPSHOT_MB_PER_SECOND=`--mb-per-second`, and
 * drives orders from `--connections` keep-alive loops that each send the
 * next order as soon as the last is answered: the server is saturated, so
 * whatever the snapshot takes from it shows as throughput or latency. After
 * `--warmup-s` seconds of that load (not measured), each
 * round is a phase without a snapshot (`--without-s` seconds), then a phase
 * as long as one POST /admin/v1/snapshot takes. It prints, per phase and
 * pooled over the rounds, orders/s and p50, p99 and max latency, and the
 * ratios with / without that the target is stated in (p99 within 2×,
 * throughput within 0.9×), with the disk's sync latency. With `--backup`
 * each round ends with a third phase: LMDB's own `backup()` of the same
 * store (lmdb-backup.ts, at nice 10): the unpaced copy, for the same
 * comparison in the same run.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { seedDirect, seedViaAdmin, type Seeded } from '../http/seed.js';
import { timedOrder } from './timed-order.js';
import { admin, startServer, stopServer, type ServerProcess } from '../http/server-process.js';
import { describeSyncLatency, measureSyncLatency } from '../http/sync-latency.js';
import { f0, f1, log, positiveInt, setLogPrefix, sleep, sourceVersion } from '../http/util.js';

setLogPrefix('bench:snapshot');

const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '1000000' },
    accounts: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '64' },
    'without-s': { type: 'string', default: '10' },
    'warmup-s': { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    'mb-per-second': { type: 'string', default: '100' },
    backup: { type: 'boolean', default: false },
    data: { type: 'string' },
    'seed-only': { type: 'boolean', default: false },
  },
});
const orders = positiveInt('orders', values.orders);
const accounts = positiveInt('accounts', values.accounts);
const connections = positiveInt('connections', values.connections);
const withoutS = positiveInt('without-s', values['without-s']);
const warmupS = positiveInt('warmup-s', values['warmup-s']);
const rounds = positiveInt('rounds', values.rounds);
const mbPerSecond = positiveInt('mb-per-second', values['mb-per-second']);

/** The orders answered while a phase lasted. */
class Phase {
  readonly latenciesMs: number[] = [];
  errors = 0;
  readonly startedMs = performance.now();
  endedMs = 0;

  constructor(readonly name: string) {}
}

function summary(name: string, phases: Phase[]): { row: Record<string, string>; p99: number; rate: number } {
  const sorted = phases.flatMap((p) => p.latenciesMs).sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const seconds = phases.reduce((s, p) => s + (p.endedMs - p.startedMs) / 1000, 0);
  const rate = sorted.length / seconds;
  const row = {
    phase: name,
    seconds: f1(seconds),
    'orders/s': f0(rate),
    'p50 ms': at(0.5).toFixed(2),
    'p99 ms': at(0.99).toFixed(2),
    'max ms': (sorted[sorted.length - 1] ?? NaN).toFixed(1),
    errors: String(phases.reduce((s, p) => s + p.errors, 0)),
  };
  return { row, p99: at(0.99), rate };
}

let current: Phase | null = null;
let running = true;

async function orderLoop(server: ServerProcess, seeded: Seeded, loop: number): Promise<void> {
  let i = loop;
  while (running) {
    const phase = current;
    const order = i;
    i += connections;
    try {
      // Awaited first: inside `phase?.…push(…)` the request would be skipped while no phase is measured.
      const latencyMs = await timedOrder(server, seeded, order);
      phase?.latenciesMs.push(latencyMs);
    } catch {
      if (phase !== null) phase.errors++;
    }
  }
}

async function phase(name: string, run: () => Promise<void>): Promise<Phase> {
  const p = new Phase(name);
  current = p;
  await run();
  p.endedMs = performance.now();
  current = null;
  return p;
}

function table(rows: Record<string, string>[]): string {
  const headers = Object.keys(rows[0]!);
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${headers.map((h) => r[h]).join(' | ')} |`)].join('\n');
}

/** LMDB's own copy of the live store in a nice 10 child process, as the snapshot job ran it. */
function lmdbBackup(dataDir: string, out: string): Promise<void> {
  const script = fileURLToPath(new URL('./lmdb-backup.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn('nice', ['-n', '10', process.execPath, script, dataDir, out], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`lmdb-backup.js exited with ${code}`))));
  });
}

async function measure(server: ServerProcess, scratch: string): Promise<string> {
  const without: Phase[] = [];
  const withSnapshot: Phase[] = [];
  const snapshots: string[] = [];
  const backups: Phase[] = [];
  for (let round = 1; round <= rounds; round++) {
    without.push(await phase(`without ${round}`, () => sleep(withoutS * 1000)));
    const out = join(scratch, `snapshot-${round}`);
    let answer = '';
    withSnapshot.push(await phase(`snapshot ${round}`, async () => void (answer = await admin(server, 'POST', '/admin/v1/snapshot', { out }))));
    const taken = JSON.parse(answer) as { ok: boolean; snapshot?: { bytes: number } };
    if (!taken.ok) throw new Error(`snapshot ${round} failed: ${answer}`);
    snapshots.push(`${f1((withSnapshot.at(-1)!.endedMs - withSnapshot.at(-1)!.startedMs) / 1000)} s for ${f0(taken.snapshot!.bytes / 2 ** 20)} MiB`);
    rmSync(out, { recursive: true, force: true });
    log(`round ${round}: snapshot ${snapshots.at(-1)}`);
    if (values.backup) backups.push(await phase(`backup() ${round}`, () => lmdbBackup(server.dataDir, out)));
    rmSync(out, { recursive: true, force: true });
  }
  const a = summary('without (pooled)', without);
  const b = summary('with snapshot (pooled)', withSnapshot);
  const byRound = without.map((p, i) => [p, withSnapshot[i]!, ...(backups[i] === undefined ? [] : [backups[i]!])]);
  const rows = [...byRound.flat().map((p) => summary(p.name, [p]).row), a.row, b.row];
  let ratios = `p99 with ÷ without: ${(b.p99 / a.p99).toFixed(2)} (target ≤ 2); orders/s with ÷ without: ${(b.rate / a.rate).toFixed(2)} (target ≥ 0.9)`;
  if (backups.length > 0) {
    const c = summary('backup() (pooled)', backups);
    rows.push(c.row);
    ratios += `\nbackup(): p99 ÷ without ${(c.p99 / a.p99).toFixed(2)}; orders/s ÷ without ${(c.rate / a.rate).toFixed(2)}`;
  }
  return `${table(rows)}\n\nsnapshots: ${snapshots.join('; ')}\n${ratios}\n`;
}

async function main(): Promise<void> {
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  const scratch = mkdtempSync(join(tmpdir(), 'coa-bench-snapshot-'));
  const dataDir = values.data ?? join(scratch, 'data');
  if (existsSync(join(dataDir, 'data.mdb'))) {
    log(`reusing the store in ${dataDir}`);
  } else {
    log(`seeding ${f0(accounts)} accounts and ${f0(orders)} orders into ${dataDir}`);
    const seeded = await seedDirect(dataDir, accounts, { orders });
    log(`seeded in ${f1(seeded.seconds)} s`);
  }
  if (values['seed-only']) return;
  process.env['SNAPSHOT_MB_PER_SECOND'] = String(mbPerSecond);
  const server = await startServer(dataDir, { readyTimeoutMs: 120_000 });
  const seeded = await seedViaAdmin(server, 100);
  const loops = Array.from({ length: connections }, (_, i) => orderLoop(server, seeded, i));
  try {
    await sleep(warmupS * 1000);
    const text = await measure(server, scratch);
    process.stdout.write(
      `\n${sourceVersion()}; ${dataDir}; ${connections} closed-loop connections; SNAPSHOT_MB_PER_SECOND=${mbPerSecond}; ${syncLatency}\n\n${text}`,
    );
  } finally {
    running = false;
    await Promise.all(loops);
    await stopServer(server);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
