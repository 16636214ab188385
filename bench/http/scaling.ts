/**
 * How the server scales with the size of its data set. For 0 accounts (the
 * baseline) and each step (N accounts, M stored orders; --sizes N means M =
 * 0): a fresh data directory seeded directly into LMDB (seed.ts: the same
 * records as the admin API writes, then M already-placed orders round-robin
 * over the accounts, as the order path writes them), then
 *  - start time: spawn → admin /healthz 200, against the data directory's size;
 *  - idle memory a few seconds after start (VmRSS and RssAnon, the private
 *    part, from /proc/PID/status); memory per never-used wallet =
 *    (RSS with N accounts − RSS with 0) / N;
 *  - one GET /api/v1/balance for each of up to --touch-accounts accounts
 *    (spread evenly: loads their profile and wallet actor, writes nothing),
 *    in two halves with the idle memory read after each; memory per loaded
 *    idle wallet = (RSS after all − RSS after half) / (accounts in the
 *    second half). (The server loads an
 *    account on first use and drops it after minutes idle; a server that
 *    loads every account at start-up shows its cost in the first figure.)
 *  - short order runs (64 connections over up to --load-accounts accounts
 *    spread evenly over all N): durable orders/s, p99, entries per commit;
 *  - GET /admin/v1/verify (full replay of the log against the tables: it
 *    also proves the directly seeded data is what the server would write);
 *  - SIGTERM, then a restart on the now larger directory: restart time.
 *
 *   node dist/bench/http/scaling.js [--sizes 1000,100000,1000000] [--steps 1000000:1000000,1000000:10000000]
 *        [--runs 1] [--duration 5] [--warmup 2] [--connections 64] [--load-accounts 100000] [--touch-accounts 100000] [--quiet-wait S]
 *
 * The steps run in the order given: every --sizes entry (N:0), then every
 * --steps entry.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { many } from './client.js';
import { startRunner, type Runner } from './loadgen.js';
import { describeRun, measureRun, type RunReport } from './measure.js';
import { memory, type Memory } from './procstat.js';
import type { RunnerConfig } from './protocol.js';
import { RATE_MICRO, seedDirect, spreadIndexes } from './seed.js';
import { killServer, startServer, stopServer, verifyLedger, type ServerProcess } from './server-process.js';
import { describeSyncLatency, measureSyncLatency } from './sync-latency.js';
import { dirBytes, f0, f1, intList, log, MiB, onInterrupt, positiveInt, sleep, QUIET_OPTION_SPECS, quietOptions, type QuietOptions } from './util.js';

/** One data set: accounts, and already-placed orders stored before the server starts. */
export interface ScalingPoint {
  accounts: number;
  orders: number;
}

export interface ScalingOptions extends QuietOptions {
  /** Account counts with no stored orders. */
  sizes: number[];
  /** (accounts, stored orders) pairs, run after the sizes (absent in JSON from before stored orders). */
  steps?: ScalingPoint[];
  /** Measured order runs per size (after one warm-up). */
  runs: number;
  durationS: number;
  warmupS: number;
  connections: number;
  /** Most accounts the load generator uses (spread evenly over the data set). */
  loadAccountsMax: number;
  quantity: number;
  /** Cross-check the run against every wallet's balance up to this many accounts (the listing of a million is slow). */
  ledgerMaxAccounts: number;
  /** Seconds between ready and the idle memory reading. */
  settleS: number;
  /** Most accounts loaded with a balance request for the loaded-wallet memory figure (0 skips). */
  touchAccountsMax: number;
}

export interface StartFigure {
  /** Data directory size on disk when started, bytes. */
  dataBytes: number;
  readyMs: number;
}

export interface ScalingStep {
  accounts: number;
  /** Already-placed orders seeded before the first start (absent in JSON from before stored orders: 0). */
  orders?: number;
  /** Seconds of seedS spent writing those orders. */
  ordersSeedS?: number;
  seedS: number;
  /** First start right after seeding (page cache warm: the files were just written). */
  start: StartFigure;
  idleMemory: Memory | null;
  /** Accounts loaded by one balance request each, and the idle memory after that. */
  touched: number;
  touchS: number;
  touchedMemory: Memory | null;
  /** The same after the first half of them. */
  halfTouched?: number;
  halfMemory?: Memory | null;
  /** The measured order runs (none for 0 accounts). */
  runs: RunReport[];
  verify: { ok: boolean; ms: number; detail: string } | null;
  /** Restart after the run, on the directory with the run's orders in it. */
  restart: StartFigure | null;
  restartIdleMemory: Memory | null;
  stopMs: number;
}

export interface ScalingResult {
  options: ScalingOptions;
  baseline: ScalingStep;
  steps: ScalingStep[];
}

export interface PerWallet {
  /**
   * (RSS with N − RSS with 0) / N, bytes: a wallet that exists but was not
   * used since start. The baseline has no orders, so for a step with stored
   * orders this also holds whatever of the order data the idle server has
   * in memory (mapped LMDB pages): reported, but flagged by `storedOrders`,
   * not a per-wallet cost alone.
   */
  cold: { rssBytes: number; privateBytes: number } | null;
  /** The step's stored orders; when > 0, `cold` includes order data (above). */
  storedOrders: number;
  /**
   * A wallet loaded by a request, now idle, bytes: (RSS after loading K −
   * after loading K/2) / (K/2), which leaves out the one-off costs of the
   * first requests; (RSS after K − before) / K when there is no half reading.
   */
  loaded: { rssBytes: number; privateBytes: number } | null;
}

export function perWallet(step: ScalingStep, baseline: ScalingStep): PerWallet {
  const per = (a: Memory | null, b: Memory | null, n: number): { rssBytes: number; privateBytes: number } | null =>
    a === null || b === null || n === 0 ? null : { rssBytes: ((a.rssMiB - b.rssMiB) * 2 ** 20) / n, privateBytes: ((a.anonMiB - b.anonMiB) * 2 ** 20) / n };
  const half = step.halfTouched ?? 0;
  const loaded =
    half > 0 && step.halfMemory !== undefined && step.halfMemory !== null
      ? per(step.touchedMemory, step.halfMemory, step.touched - half)
      : per(step.touchedMemory, step.idleMemory, step.touched);
  return { cold: per(step.idleMemory, baseline.idleMemory, step.accounts), storedOrders: step.orders ?? 0, loaded };
}

/** "1,000 accounts" or "1,000,000 accounts, 10,000,000 orders". */
export function pointName(p: ScalingPoint): string {
  return p.orders === 0 ? `${f0(p.accounts)} accounts` : `${f0(p.accounts)} accounts, ${f0(p.orders)} orders`;
}

/** Every step in run order: the sizes (N:0), then the (accounts, orders) steps. */
export function scalingPoints(options: Pick<ScalingOptions, 'sizes' | 'steps'>): ScalingPoint[] {
  return [...options.sizes.map((accounts) => ({ accounts, orders: 0 })), ...(options.steps ?? [])];
}

/** "1000:0,1000000:10000000" → (accounts, orders) pairs; accounts ≥ 1, orders ≥ 0. */
export function pointList(name: string, raw: string): ScalingPoint[] {
  const parts = raw.split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (parts.length === 0) throw new Error(`--${name} needs at least one accounts:orders pair`);
  return parts.map((part) => {
    const m = /^([\d_]+):([\d_]+)$/.exec(part);
    if (m === null) throw new Error(`--${name}: ${JSON.stringify(part)} is not accounts:orders (e.g. 1000000:10000000)`);
    return { accounts: positiveInt(name, m[1]!.replace(/_/g, '')), orders: positiveInt(name, m[2]!.replace(/_/g, ''), 0) };
  });
}

async function stepFor(point: ScalingPoint, options: ScalingOptions): Promise<ScalingStep> {
  const { accounts, orders } = point;
  const name = pointName(point);
  const dataDir = mkdtempSync(join(tmpdir(), `credit-order-scale-${accounts}-${orders}-`));
  let server: ServerProcess | null = null;
  let runner: Runner | null = null;
  const configFile = `${dataDir}-runner.json`;
  const unregister = onInterrupt(() => {
    runner?.child.kill('SIGKILL');
    server?.child.kill('SIGKILL');
    rmSync(configFile, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });
  // Start-up of a million accounts takes seconds; allow plenty.
  const readyTimeoutMs = 60_000 + accounts / 10;
  try {
    let lastReport = performance.now();
    const seeded = await seedDirect(dataDir, accounts, {
      orders,
      progress: (written, what) => {
        if (performance.now() - lastReport > 5000) {
          lastReport = performance.now();
          log(`[scaling] seeding: ${f0(written)} of ${f0(what === 'orders' ? orders : accounts)} ${what}`);
        }
      },
    });
    const seededBytes = dirBytes(dataDir).allocated;
    server = await startServer(dataDir, { readyTimeoutMs });
    const start = { dataBytes: seededBytes, readyMs: server.readyMs };
    await sleep(options.settleS * 1000);
    const idleMemory = memory(server.pid);
    log(
      `[scaling] ${name}: seeded in ${f1(seeded.seconds)} s` +
        (orders === 0 ? '' : ` (the orders in ${f1(seeded.ordersSeconds)} s, ${f0(orders / seeded.ordersSeconds)} orders/s)`) +
        `, ${f1(MiB(seededBytes))} MiB on disk; ready in ${f0(start.readyMs)} ms; ` +
        `idle RSS ${f0(idleMemory?.rssMiB ?? NaN)} MiB (${f0(idleMemory?.anonMiB ?? NaN)} private)`,
    );
    let touched = 0;
    let touchS = 0;
    let touchedMemory: Memory | null = null;
    let halfTouched = 0;
    let halfMemory: Memory | null = null;
    if (accounts > 0 && options.touchAccountsMax > 0) {
      const indexes = spreadIndexes(accounts, options.touchAccountsMax);
      const live = server;
      const touch = async (from: number, to: number): Promise<void> => {
        await many(
          to - from,
          (j) => {
            const a = seeded.account(indexes[from + j]!);
            return { method: 'GET', url: `${live.baseUrl}/api/v1/balance`, headers: { 'X-API-Key': a.key, 'X-API-Secret': a.secret } };
          },
          (_j, reply) => {
            if (reply.status !== 200) throw new Error(`GET /api/v1/balance answered ${reply.status}: ${reply.text.slice(0, 300)}`);
          },
        );
      };
      // In two halves with a reading after each: the second half's growth
      // per wallet leaves out what the first requests cost once (a larger
      // heap, JIT code, buffers).
      const started = performance.now();
      halfTouched = Math.floor(indexes.length / 2);
      await touch(0, halfTouched);
      await sleep(options.settleS * 1000);
      halfMemory = memory(server.pid);
      await touch(halfTouched, indexes.length);
      touchS = (performance.now() - started) / 1000 - options.settleS;
      touched = indexes.length;
      await sleep(options.settleS * 1000);
      touchedMemory = memory(server.pid);
      log(
        `[scaling] ${name}: after one balance request to each of ${f0(halfTouched)} and ${f0(touched)} idle RSS ` +
          `${f0(halfMemory?.rssMiB ?? NaN)} and ${f0(touchedMemory?.rssMiB ?? NaN)} MiB (${f0(halfMemory?.anonMiB ?? NaN)} and ${f0(touchedMemory?.anonMiB ?? NaN)} private)`,
      );
    }
    const runs: RunReport[] = [];
    let verify: ScalingStep['verify'] = null;
    if (accounts > 0) {
      const indexes = spreadIndexes(accounts, options.loadAccountsMax);
      const config: RunnerConfig = {
        baseUrl: server.baseUrl,
        connections: options.connections,
        serviceId: seeded.serviceId,
        quantity: options.quantity,
        mode: 'prebuilt',
        scenario: 'order',
        accounts: indexes.map((i) => {
          const a = seeded.account(i);
          return { key: a.key, secret: a.secret };
        }),
      };
      writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });
      runner = await startRunner(configFile);
      if (options.warmupS > 0) await runner.run('warm-up', options.warmupS);
      for (let i = 1; i <= options.runs; i++) {
        const run = await measureRun(server, runner, {
          ...options,
          label: `${name}, run ${i}`,
          scenario: 'order',
          durationS: options.durationS,
          connections: options.connections,
          chargeMicro: accounts <= options.ledgerMaxAccounts ? BigInt(options.quantity) * RATE_MICRO : null,
        });
        process.stdout.write(`${describeRun(run)}\n\n`);
        runs.push(run);
      }
      await runner.close();
      runner = null;
      const v = await verifyLedger(server);
      verify = { ok: v.ok, ms: v.ms, detail: v.ok ? '' : v.text.slice(0, 300) };
      // The replay holds one record per order: the peak shows what a large log costs it.
      const peak = memory(server.pid)?.peakMiB ?? NaN;
      log(`[scaling] ${name}: GET /admin/v1/verify ${v.ok ? 'passed' : `FAILED: ${v.text.slice(0, 300)}`} in ${f0(v.ms)} ms (server peak RSS so far ${f0(peak)} MiB)`);
    }
    const stopped = await stopServer(server);
    server = null;
    if (stopped.code !== 0) throw new Error(`the server exited with code ${stopped.code} on SIGTERM`);
    const afterBytes = dirBytes(dataDir).allocated;
    server = await startServer(dataDir, { readyTimeoutMs });
    const restart = { dataBytes: afterBytes, readyMs: server.readyMs };
    await sleep(options.settleS * 1000);
    const restartIdleMemory = memory(server.pid);
    const stoppedAgain = await stopServer(server);
    server = null;
    log(`[scaling] ${name}: restart on ${f1(MiB(afterBytes))} MiB ready in ${f0(restart.readyMs)} ms; SIGTERM → ${stoppedAgain.code} in ${stoppedAgain.ms} ms`);
    return { accounts, orders, ordersSeedS: seeded.ordersSeconds, seedS: seeded.seconds, start, idleMemory, touched, touchS, touchedMemory, halfTouched, halfMemory, runs, verify, restart, restartIdleMemory, stopMs: stopped.ms };
  } finally {
    if (runner !== null) runner.child.kill('SIGKILL');
    if (server !== null) await killServer(server);
    rmSync(configFile, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
    unregister();
  }
}

export async function runScaling(options: ScalingOptions, onStep?: (step: ScalingStep) => void): Promise<ScalingResult> {
  const baseline = await stepFor({ accounts: 0, orders: 0 }, options);
  onStep?.(baseline);
  const steps: ScalingStep[] = [];
  for (const point of scalingPoints(options)) {
    const step = await stepFor(point, options);
    steps.push(step);
    onStep?.(step);
    const per = perWallet(step, baseline);
    const text = (x: { rssBytes: number; privateBytes: number } | null): string => (x === null ? 'n/a' : `${f0(x.rssBytes)} B RSS (${f0(x.privateBytes)} B private)`);
    const cold = per.storedOrders === 0 ? 'per never-used wallet' : `per never-used wallet, including the ${f0(per.storedOrders)} stored orders' share,`;
    log(`[scaling] ${pointName(point)}: ${cold} ${text(per.cold)}; per loaded idle wallet ${text(per.loaded)}`);
  }
  return { options, baseline, steps };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '1000,100000' },
      steps: { type: 'string' },
      runs: { type: 'string', default: '1' },
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '64' },
      'load-accounts': { type: 'string', default: '100000' },
      'ledger-max-accounts': { type: 'string', default: '200000' },
      quantity: { type: 'string', default: '1000' },
      settle: { type: 'string', default: '2' },
      'touch-accounts': { type: 'string', default: '100000' },
      ...QUIET_OPTION_SPECS,
      json: { type: 'string' },
    },
  });
  const options: ScalingOptions = {
    sizes: values.sizes === '' ? [] : intList('sizes', values.sizes),
    steps: values.steps === undefined ? [] : pointList('steps', values.steps),
    runs: positiveInt('runs', values.runs),
    durationS: positiveInt('duration', values.duration),
    warmupS: positiveInt('warmup', values.warmup, 0),
    connections: positiveInt('connections', values.connections),
    loadAccountsMax: positiveInt('load-accounts', values['load-accounts']),
    ledgerMaxAccounts: positiveInt('ledger-max-accounts', values['ledger-max-accounts'], 0),
    quantity: positiveInt('quantity', values.quantity),
    settleS: positiveInt('settle', values.settle, 0),
    touchAccountsMax: positiveInt('touch-accounts', values['touch-accounts'], 0),
    ...quietOptions(values),
  };
  log(`[scaling] ${describeSyncLatency(measureSyncLatency(tmpdir()))}`);
  const result = await runScaling(options);
  if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    log(`failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  });
}
