/**
 * One measured run of bench:cpu: a fresh server of one variant (the bare
 * uWS ceiling, or the order path of a build, seeded directly), a warm-up,
 * its threads named, then one wrk run inside a CPU window: every server
 * thread's CPU time, wrk's (the benchmark's reaped children), the
 * benchmark's own and the whole machine's, read right before wrk starts
 * and right after it has exited. For the order path the group commit's
 * counters and every wallet's durable balance are read around the window
 * (outside it), and the ledger must hold every acknowledged order.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fakeAccounts } from './ceiling.js';
import { cpuByClass, type CpuRun } from './cpu-figures.js';
import { assertLedger, balances, ledgerCheck } from './ledger.js';
import { freePort } from './loadgen.js';
import { machineTimes, reapedChildrenTicks, threadRuntimes, TICKS_PER_S, type MachineTimes, type ThreadRuntime } from './procstat.js';
import { RATE_MICRO, seedDirect } from './seed.js';
import { killServer, startServer, stopServer, walCounters, type ServerProcess, type WalCounters } from './server-process.js';
import { mapThreads, type ThreadMap } from './thread-classes.js';
import { onInterrupt } from './util.js';
import { runWrk, wrkScript, type WrkLoad } from './wrk-driver.js';

const BARE = fileURLToPath(new URL('./bare-uws.js', import.meta.url));
/** The longest second warm-up run: at 200 orders/s, 12,000 orders, enough for the default 10,000 accounts. */
const WARMUP_MAX_S = 60;

export interface CpuVariant {
  name: string;
  /** The bare uWS server, or the order path of the build at `entry`. */
  kind: 'bare' | 'order';
  entry: string;
  /** WAL_SYNC_MODE, or null for the server's default. */
  syncMode: string | null;
  /** More environment for the server (LD_PRELOAD of the no-sync variants). */
  env: Record<string, string>;
}

export interface RunSettings {
  load: WrkLoad;
  durationS: number;
  warmupS: number;
  accounts: number;
  quantity: number;
  useGdb: boolean;
  /** Run the server under `node --cpu-prof` into this directory. */
  profDir?: string;
}

export interface MeasuredRun {
  run: CpuRun;
  threads: ThreadMap;
  /** CLOCK_MONOTONIC µs around wrk's run (V8 profiles use the same clock). */
  fromUs: number;
  toUs: number;
}

/** A server under test: its pid, where to send the load, the wrk script, and how it ends. */
interface Target {
  pid: number;
  baseUrl: string;
  script: string;
  server: ServerProcess | null;
  close(): Promise<void>;
}

async function startBare(dir: string, accounts: number, quantity: number): Promise<Target> {
  const port = await freePort();
  const child = spawn(process.execPath, [BARE, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const unregister = onInterrupt(() => child.kill('SIGKILL'));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the bare uWS server exited (code ${code})`)));
  });
  const fakes = fakeAccounts(accounts);
  const script = join(dir, 'bare.lua');
  writeFileSync(script, wrkScript({ serviceId: 1, count: accounts, account: (i) => fakes[i]! }, quantity), { mode: 0o600 });
  const close = async (): Promise<void> => {
    child.kill('SIGKILL');
    await exited;
    unregister();
  };
  return { pid: child.pid!, baseUrl: `http://127.0.0.1:${port}`, script, server: null, close };
}

async function startOrderPath(v: CpuVariant, dir: string, settings: RunSettings): Promise<Target> {
  const dataDir = join(dir, 'data');
  const seeded = await seedDirect(dataDir, settings.accounts);
  const script = join(dir, 'orders.lua');
  // The script holds every account's secret: readable by its owner only.
  writeFileSync(script, wrkScript(seeded, settings.quantity), { mode: 0o600 });
  const server = await startServer(dataDir, { serverEntry: v.entry, syncMode: v.syncMode, env: v.env, profDir: settings.profDir ?? null });
  const close = async (): Promise<void> => {
    const stopped = await stopServer(server);
    if (stopped.code !== 0) throw new Error(`the ${v.name} server exited with ${String(stopped.code ?? stopped.signal)} on SIGTERM`);
  };
  return { pid: server.pid, baseUrl: server.baseUrl, script, server, close };
}

interface Snapshot {
  threads: ThreadRuntime[];
  childrenTicks: number;
  machine: MachineTimes;
  self: NodeJS.CpuUsage;
  atMs: number;
  monoUs: number;
}

function snapshot(pid: number): Snapshot {
  const threads = threadRuntimes(pid);
  if (threads === null) throw new Error(`the server (pid ${pid}) is gone`);
  return { threads, childrenTicks: reapedChildrenTicks(), machine: machineTimes(), self: process.cpuUsage(), atMs: performance.now(), monoUs: Number(process.hrtime.bigint() / 1000n) };
}

const ticksUs = (ticks: number): number => (ticks * 1e6) / TICKS_PER_S;

/**
 * The warm-up: `warmupS` seconds of the same load, then, when that did not
 * reach every account, one more run long enough to (at the rate the first
 * one saw), at most WARMUP_MAX_S. A fresh server loads each account on its
 * first order (its rows read and decoded, its actor made); on a quiet
 * machine the first seconds reach all of them, but a busy machine serves
 * fewer orders a second, and a measured run that met accounts for the
 * first time would count their loading as the cost of an order.
 */
async function warmUp(v: CpuVariant, target: Target, settings: RunSettings): Promise<void> {
  const warm = await runWrk(settings.load, target.baseUrl, target.script, settings.warmupS);
  const served = warm.requests - warm.non2xx;
  if (served === 0) throw new Error(`${v.name}: no request succeeded during the warm-up`);
  if (v.kind === 'bare' || served >= settings.accounts) return;
  // Every wrk run starts again from the first account, so the second run must reach all of them by itself.
  const seconds = Math.min(WARMUP_MAX_S, Math.ceil((settings.accounts * 1.2 * warm.durationUs) / 1e6 / served));
  await runWrk(settings.load, target.baseUrl, target.script, seconds);
}

/** Starts the variant, warms it up, names its threads, measures one wrk run and stops it. */
export async function measureVariant(v: CpuVariant, round: number, settings: RunSettings): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), 'credit-order-cpu-'));
  let target: Target | null = null;
  try {
    target = v.kind === 'bare' ? await startBare(dir, settings.accounts, settings.quantity) : await startOrderPath(v, dir, settings);
    if (settings.warmupS > 0) await warmUp(v, target, settings);
    const threads = mapThreads(target.pid, settings.useGdb);
    const measured = await measureWindow(v, round, settings, target, threads);
    const t = target;
    target = null;
    await t.close();
    return measured;
  } finally {
    if (target !== null) {
      if (target.server !== null) await killServer(target.server);
      else await target.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureWindow(v: CpuVariant, round: number, settings: RunSettings, target: Target, threads: ThreadMap): Promise<MeasuredRun> {
  const server = target.server;
  const ledgerBefore = server === null ? null : await balances(server);
  const walBefore: WalCounters | null = server === null ? null : await walCounters(server);
  const a = snapshot(target.pid);
  const summary = await runWrk(settings.load, target.baseUrl, target.script, settings.durationS);
  const b = snapshot(target.pid);
  const acknowledged = summary.requests - summary.non2xx;
  let walAfter: WalCounters | null = null;
  if (server !== null) {
    walAfter = await walCounters(server);
    assertLedger(ledgerCheck(ledgerBefore!, await balances(server), BigInt(settings.quantity) * RATE_MICRO), acknowledged);
  }
  const selfUs = b.self.user + b.self.system - (a.self.user + a.self.system);
  const run: CpuRun = {
    variant: v.name,
    round,
    wallS: (b.atMs - a.atMs) / 1000,
    loadS: summary.durationUs / 1e6,
    acknowledged,
    serverUs: cpuByClass(threads.roles, a.threads, b.threads),
    loadgenUs: ticksUs(b.childrenTicks - a.childrenTicks),
    selfUs,
    machineUs: ticksUs(b.machine.busy - a.machine.busy),
    entries: walAfter === null ? null : walAfter.entries - walBefore!.entries,
    commits: walAfter === null ? null : walAfter.commits - walBefore!.commits,
  };
  return { run, threads, fromUs: a.monoUs, toUs: b.monoUs };
}
