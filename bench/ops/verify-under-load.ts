/**
 * Verify and snapshot of a large store while orders keep coming.
 *
 *   node dist/bench/ops/verify-under-load.js --orders 2000000 [--accounts 10000]
 *        [--rate 1500] [--connections 8] [--baseline-s 10] [--complete-lag 5000]
 *        [--data DIR] [--seed-only]
 *
 * Seeds `--orders` placed orders directly into a fresh data directory
 * (bench/http/seed.ts; with --complete-lag every other order is completed
 * that many orders after its placement, so the replay has a backlog to
 * follow), or reuses the one `--data` names when it already holds a store
 * (seeding ten million orders takes minutes: `--seed-only` seeds and stops,
 * so the measurement can run under the exclusive lock on its own). It starts
 * the real server (dist/src/main.js) on it, creates 100 funded accounts
 * through the admin API for the load, and drives a
 * paced order load (`--rate` orders/s over `--connections` keep-alive
 * loops). Three phases under the same load: a baseline, then
 * GET /admin/v1/verify, then POST /admin/v1/snapshot. For each phase it
 * reports the order latency (p50, p99, max) and throughput, and it samples
 * every 50 ms the resident memory of the server and of the job process the
 * server starts (anonymous and file-backed apart: the store's mapped pages
 * are file-backed and the kernel can drop them).
 *
 * Run it under `flock -x /work/cpu.lock` on the shared machine.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { memory, type Memory } from '../http/procstat.js';
import { seedDirect, seedViaAdmin, type Seeded } from '../http/seed.js';
import { timedOrder } from './timed-order.js';
import { admin, startServer, stopServer, type ServerProcess } from '../http/server-process.js';
import { describeSyncLatency, measureSyncLatency } from '../http/sync-latency.js';
import { f0, f1, log, setLogPrefix, sleep } from '../http/util.js';

setLogPrefix('bench:ops');

const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '1000000' },
    accounts: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '1500' },
    connections: { type: 'string', default: '8' },
    'baseline-s': { type: 'string', default: '10' },
    'complete-lag': { type: 'string', default: '5000' },
    data: { type: 'string' },
    'seed-only': { type: 'boolean', default: false },
  },
});
const int = (name: keyof typeof values): number => {
  const n = Number(values[name]);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
  return n;
};
const orders = int('orders');
const accounts = int('accounts');
const rate = int('rate');
const connections = int('connections');
const baselineS = int('baseline-s');
const completeLag = int('complete-lag');

/** Peak resident memory seen while sampling, MiB. */
interface MemoryPeaks {
  rss: number;
  anon: number;
  file: number;
}

function peaks(): MemoryPeaks {
  return { rss: 0, anon: 0, file: 0 };
}

function note(p: MemoryPeaks, m: Memory | null): void {
  // A process that is exiting has no VmRSS line any more: nothing to note.
  if (m === null || Number.isNaN(m.rssMiB) || Number.isNaN(m.anonMiB) || Number.isNaN(m.fileMiB)) return;
  p.rss = Math.max(p.rss, m.rssMiB);
  p.anon = Math.max(p.anon, m.anonMiB);
  p.file = Math.max(p.file, m.fileMiB);
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Latencies of the orders answered while a phase lasted. */
class Phase {
  readonly latenciesMs: number[] = [];
  readonly server = peaks();
  readonly job = peaks();
  errors = 0;
  startedMs = performance.now();
  endedMs = 0;

  summary(name: string): Record<string, string> {
    const sorted = [...this.latenciesMs].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
    const seconds = (this.endedMs - this.startedMs) / 1000;
    return {
      phase: name,
      seconds: f1(seconds),
      'orders/s': f0(sorted.length / seconds),
      'p50 ms': at(0.5).toFixed(2),
      'p99 ms': at(0.99).toFixed(2),
      'max ms': (sorted[sorted.length - 1] ?? NaN).toFixed(1),
      errors: String(this.errors),
      'server RSS peak MiB (anon / file)': `${f0(this.server.rss)} (${f0(this.server.anon)} / ${f0(this.server.file)})`,
      'job RSS peak MiB (anon / file)': this.job.rss === 0 ? '–' : `${f0(this.job.rss)} (${f0(this.job.anon)} / ${f0(this.job.file)})`,
    };
  }
}

let current: Phase | null = null;
let running = true;

async function orderLoop(server: ServerProcess, seeded: Seeded, loop: number): Promise<void> {
  const intervalMs = (1000 * connections) / rate;
  let next = performance.now() + (loop * intervalMs) / connections;
  let i = loop;
  while (running) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    next += intervalMs;
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

async function sampleMemory(server: ServerProcess): Promise<void> {
  while (running) {
    const phase = current;
    if (phase !== null) {
      note(phase.server, memory(server.pid));
      for (const child of childrenOf(server.pid)) note(phase.job, memory(child));
    }
    await sleep(50);
  }
}

async function timed(name: string, run: () => Promise<string>): Promise<{ phase: Phase; ms: number; text: string }> {
  const phase = new Phase();
  current = phase;
  const started = performance.now();
  const text = await run();
  const ms = performance.now() - started;
  phase.endedMs = performance.now();
  log(`${name}: ${f1(ms / 1000)} s`);
  return { phase, ms, text };
}

async function main(): Promise<void> {
  // Measured before the server starts: every benchmark report states the disk's sync latency.
  const syncLatency = describeSyncLatency(measureSyncLatency(tmpdir()));
  log(syncLatency);
  const scratch = mkdtempSync(join(tmpdir(), 'coa-bench-ops-'));
  const dataDir = values.data ?? join(scratch, 'data');
  if (existsSync(join(dataDir, 'data.mdb'))) {
    log(`reusing the store in ${dataDir}`);
  } else {
    log(`seeding ${f0(accounts)} accounts and ${f0(orders)} orders into ${dataDir} (complete lag ${completeLag})`);
    const seeded = await seedDirect(dataDir, accounts, {
      orders,
      completeLag,
      progress: (n, what) => {
        if (what === 'orders' && n % 1_000_000 === 0) log(`  ${f0(n)} orders`);
      },
    });
    log(`seeded in ${f1(seeded.seconds)} s`);
  }
  if (values['seed-only']) return;
  const server = await startServer(dataDir, { readyTimeoutMs: 120_000 });
  const before = memory(server.pid);
  log(`server ready in ${f0(server.readyMs)} ms; RSS ${f0(before?.rssMiB ?? 0)} MiB`);
  const seeded = await seedViaAdmin(server, 100);
  const loops = Array.from({ length: connections }, (_, i) => orderLoop(server, seeded, i));
  const sampler = sampleMemory(server);
  try {
    // Warm-up, then the baseline under the same load.
    await sleep(3000);
    const baseline = await timed('baseline', () => sleep(baselineS * 1000).then(() => ''));
    const verify = await timed('verify', () => admin(server, 'GET', '/admin/v1/verify'));
    const report = JSON.parse(verify.text) as { report: { counts: Record<string, number> } };
    await sleep(2000);
    const out = join(scratch, 'snapshot');
    const snapshot = await timed('snapshot', () => admin(server, 'POST', '/admin/v1/snapshot', { out }));
    const after = await timed('after', () => sleep(Math.min(baselineS, 5) * 1000).then(() => ''));
    current = null;
    const rows = [baseline.phase.summary('baseline'), verify.phase.summary('verify'), snapshot.phase.summary('snapshot'), after.phase.summary('after')];
    const headers = Object.keys(rows[0]!);
    const table = [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${headers.map((h) => r[h]).join(' | ')} |`)].join('\n');
    process.stdout.write(
      `\n${dataDir}: ${f0(report.report.counts.orders ?? 0)} orders, ${f0(report.report.counts.accounts ?? 0)} accounts; ` +
        `load ${f0(rate)} orders/s over ${connections} connections; ${syncLatency}\n` +
        `verify: ${f1(verify.ms / 1000)} s, counts ${JSON.stringify(report.report.counts)}\n` +
        `snapshot: ${f1(snapshot.ms / 1000)} s\n` +
        `server RSS before: ${f0(before?.rssMiB ?? 0)} MiB (anon ${f0(before?.anonMiB ?? 0)}, file ${f0(before?.fileMiB ?? 0)})\n\n${table}\n`,
    );
  } finally {
    running = false;
    await Promise.all([...loops, sampler]);
    await stopServer(server);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
