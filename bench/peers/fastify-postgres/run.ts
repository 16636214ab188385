/**
 * The conventional peer under the same load as `bench:http`:
 *
 *   npm run build && node dist/bench/peers/fastify-postgres/run.js [options]
 *
 * Starts a private PostgreSQL cluster (cluster.ts: temp directory, loopback,
 * fsync / synchronous_commit / full_page_writes on), creates the tables and
 * seeds 10,000 funded accounts and one service by direct SQL (schema.ts),
 * starts the Fastify + pg server (server.ts) as a child process, and drives
 * POST /api/v1/order with the bench:http load generator (bench/http/runner.js
 * in its own process, via bench/http/loadgen.js) with the same defaults:
 * 64 connections, prebuilt requests, quantity 1000 × rate 0.001, 3 s warm-up,
 * 10 s per run. After each run it checks in SQL that the wallets were debited
 * by exactly (new orders × charge), that no wallet is negative, and that the
 * new orders cover every 201 the clients saw (the excess is the requests in
 * flight when the load stopped, at most one per connection). Prints req/s,
 * durable orders/s, latency percentiles and the CPU of the server, of
 * PostgreSQL (postmaster and all its children) and of the load generator.
 *
 * When no PostgreSQL binaries are found it prints one line and exits 0.
 *
 * For other scripts: `runFastifyPostgresPeer(options)` does the same and
 * returns the figures as an object (or `{ skipped: true, reason }`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePort, startRunner, type Runner } from '../../http/loadgen.js';
import { cpuModel, cpuUse, machineTimes, machineUse, memory, processTimes, type CpuUse, type Memory } from '../../http/procstat.js';
import type { LatencySummary, LoadResult, RunnerConfig } from '../../http/protocol.js';
import { killCluster, startCluster, type Cluster } from './cluster.js';
import { createAndSeed } from './schema.js';
import { QUIET_OPTION_SPECS, quietOptions, waitForQuiet } from '../../http/util.js';
import { describeSyncLatency, measureSyncLatency } from '../../http/sync-latency.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const RATE_MICRO = 1000n; // 0.001 credits, as bench:http
const CREDITS_MICRO = 1_000_000_000n * 1_000_000n; // 1,000,000,000 credits per account, as bench:http
const SERVICE_ID = 1;
const TICKS_PER_S = 100;

export interface PeerOptions {
  accounts: number;
  connections: number;
  /** Seconds per measured run. */
  duration: number;
  /** Seconds of unmeasured load first (0 skips). */
  warmup: number;
  runs: number;
  quantity: number;
  mode: 'prebuilt' | 'rotate';
  /** pg Pool size in the peer server. */
  pool: number;
  /** explicit: BEGIN / UPDATE / INSERT / COMMIT; cte: one data-modifying statement. */
  tx: 'explicit' | 'cte';
  /** How the peer server reaches PostgreSQL. */
  via: 'socket' | 'tcp';
  /** Before each run, wait up to this many seconds for the machine to be below quietBelow percent busy (0: don't). */
  quietWait: number;
  quietBelow: number;
  /** Consecutive quiet seconds required by quietWait. */
  quietSeconds: number;
  keepData: boolean;
  /** Progress lines (default: stderr with a prefix). */
  log: (line: string) => void;
}

export const DEFAULT_PEER_OPTIONS: Omit<PeerOptions, 'log'> = {
  accounts: 10_000,
  connections: 64,
  duration: 10,
  warmup: 3,
  runs: 1,
  quantity: 1000,
  mode: 'prebuilt',
  pool: 16,
  tx: 'explicit',
  via: 'socket',
  quietWait: 0,
  quietBelow: 10,
  quietSeconds: 3,
  keepData: false,
};

export interface PeerLedger {
  /** Orders inserted during the run (SQL count). */
  newOrders: number;
  /** Wallet debits during the run, micro-credits (SQL sum before − after). */
  debitedMicro: string;
  /** debited = newOrders × charge, and every new order has that charge. */
  consistent: boolean;
  /** newOrders − 201s seen (in flight when the load stopped; 0..connections expected). */
  excessOver201: number;
  negativeWallets: number;
}

export interface PeerRun {
  label: string;
  requestsPerS: number;
  /** 201 responses per second: each was sent after its COMMIT returned (synchronous_commit=on). */
  durableOrdersPerS: number;
  latency: LatencySummary;
  ledger: PeerLedger;
  /**
   * WAL flushes (fdatasync) per second and WAL bytes and full-page images per order over the run, from
   * pg_stat_wal (approximate: backends report at most once a second); null before PostgreSQL 14.
   */
  wal: { syncsPerS: number; ordersPerSync: number; bytesPerOrder: number; fpiPerOrder: number } | null;
  /** Percent of one core over the run. */
  serverCpuPct: number | null;
  postgresCpuPct: number;
  loadgenCpuPct: number | null;
  /** Everything else on the machine, percent of one core. */
  otherCpuPct: number;
  /** The busiest other processes (kernel threads included, e.g. jbd2 / kworker doing PostgreSQL's fsyncs), percent of one core. */
  otherTop: { pid: number; name: string; pct: number }[];
  /** Of the other CPU: interrupt and softirq time (not charged to any process), percent of one core. */
  irqPct: number;
  machineBusyPct: number;
  iowaitPct: number;
  serverCpu: CpuUse | null;
  postgresCpu: { kind: string; count: number; pct: number }[];
  loadgenCpu: CpuUse | null;
  serverMemory: Memory | null;
  load: LoadResult;
}

export interface PeerEnvironment {
  date: string;
  node: string;
  postgres: string;
  fastify: string;
  pg: string;
  cpu: string;
  cores: number;
  /** SHOW … read back from the running cluster. */
  settings: Record<string, string>;
  osUser: string;
  /** The disk's measured sync latency, as a sentence (http/sync-latency.ts); absent in results older than the probe. */
  syncLatency?: string;
}

export type PeerResult =
  | { skipped: true; reason: string }
  | { skipped: false; env: PeerEnvironment; options: Omit<PeerOptions, 'log'>; seedS: number; runs: PeerRun[]; stopExitCode: number | null };

const f0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const f1 = (n: number): string => n.toFixed(1);
const f2 = (n: number): string => n.toFixed(2);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ------------------------------------------------------------ PostgreSQL CPU (process tree)

interface TreeProcess {
  ticks: number;
  kind: string;
}

function statOf(pid: number): { ppid: number; ticks: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

function kindOf(pid: number, root: number): string {
  if (pid === root) return 'postmaster';
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replaceAll('\0', ' ');
    const m = /^postgres: (checkpointer|background writer|walwriter|autovacuum launcher|autovacuum worker|logical replication launcher|archiver|stats collector)/.exec(title);
    return m === null ? 'backends' : m[1]!;
  } catch {
    return 'backends';
  }
}

/** CPU ticks of the postmaster and every process whose parent it is (backends and auxiliary processes). */
function treeTimes(root: number): Map<number, TreeProcess> {
  const out = new Map<number, TreeProcess>();
  const own = statOf(root);
  if (own !== null) out.set(root, { ticks: own.ticks, kind: 'postmaster' });
  for (const entry of readdirNumeric('/proc')) {
    const s = statOf(entry);
    if (s !== null && s.ppid === root) out.set(entry, { ticks: s.ticks, kind: kindOf(entry, root) });
  }
  return out;
}

/** Machine-wide irq + softirq ticks (CPU time not charged to any process: device interrupts, network and block completions). */
function irqTicks(): { irq: number; total: number } {
  const v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  return { irq: (v[5] ?? 0) + (v[6] ?? 0), total };
}

/** Every process's CPU ticks and name (to say what the "other" CPU was). */
function allTimes(): Map<number, { ticks: number; name: string }> {
  const out = new Map<number, { ticks: number; name: string }>();
  for (const pid of readdirNumeric('/proc')) {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = text.lastIndexOf(')');
      const fields = text.slice(close + 2).split(' ');
      out.set(pid, { ticks: Number(fields[11]) + Number(fields[12]), name: text.slice(text.indexOf('(') + 1, close) });
    } catch {
      // Gone.
    }
  }
  return out;
}

/** The busiest processes over the interval other than the excluded ones, percent of one core. */
function topOthers(
  before: Map<number, { ticks: number; name: string }>,
  after: Map<number, { ticks: number; name: string }>,
  exclude: Set<number>,
  seconds: number,
): { pid: number; name: string; pct: number }[] {
  const out: { pid: number; name: string; pct: number }[] = [];
  for (const [pid, p] of after) {
    if (exclude.has(pid)) continue;
    // A process that started during the interval spent all its CPU time in it; one that ended is not seen.
    const delta = p.ticks - (before.get(pid)?.ticks ?? 0);
    const pct = (100 * delta) / TICKS_PER_S / seconds;
    if (pct >= 1) out.push({ pid, name: p.name, pct });
  }
  return out.sort((a, b) => b.pct - a.pct).slice(0, 5);
}

function readdirNumeric(dir: string): number[] {
  try {
    return readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

function treeUse(before: Map<number, TreeProcess>, after: Map<number, TreeProcess>, seconds: number): { pct: number; kinds: { kind: string; count: number; pct: number }[] } {
  const kinds = new Map<string, { count: number; ticks: number }>();
  let total = 0;
  for (const [pid, p] of after) {
    // Processes that started during the run count from 0; ones that ended during it are lost (autovacuum workers at most).
    const delta = p.ticks - (before.get(pid)?.ticks ?? 0);
    total += delta;
    const k = kinds.get(p.kind) ?? { count: 0, ticks: 0 };
    k.count++;
    k.ticks += delta;
    kinds.set(p.kind, k);
  }
  const pct = (ticks: number): number => (100 * ticks) / TICKS_PER_S / seconds;
  return {
    pct: pct(total),
    kinds: [...kinds.entries()]
      .map(([kind, k]) => ({ kind, count: k.count, pct: pct(k.ticks) }))
      .filter((k) => k.pct > 0)
      .sort((a, b) => b.pct - a.pct),
  };
}

// ------------------------------------------------------------ peer server process

interface PeerServer {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startPeerServer(cluster: Cluster, options: PeerOptions): Promise<PeerServer> {
  const port = await freePort();
  const conn = cluster.connection(options.via);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    POOL_SIZE: String(options.pool),
    TX_MODE: options.tx,
    PGHOST: String(conn.host),
    PGPORT: String(conn.port),
    PGUSER: String(conn.user),
    PGPASSWORD: String(conn.password),
    PGDATABASE: String(conn.database),
  };
  const child = spawn(process.execPath, [SERVER], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const forward = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') options.log(`[peer server] ${line}`);
  };
  child.stdout!.on('data', forward);
  child.stderr!.on('data', forward);
  let gone = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      gone = true;
      resolve({ code, signal });
    });
  });
  const server: PeerServer = { child, pid: child.pid!, baseUrl: `http://127.0.0.1:${port}`, exited };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (gone) throw new Error('the peer server exited during start-up (see its output above)');
    try {
      const response = await fetch(`${server.baseUrl}/healthz`);
      await response.arrayBuffer();
      if (response.status === 200) return server;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error('the peer server did not answer /healthz within 20 s');
    await sleep(50);
  }
}

async function stopPeerServer(server: PeerServer): Promise<number | null> {
  server.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    server.exited,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), 20_000);
    }),
  ]);
  clearTimeout(timer);
  if (exit === null) {
    server.child.kill('SIGKILL');
    await server.exited;
    throw new Error('the peer server did not exit within 20 s of SIGTERM');
  }
  return exit.code;
}

// ------------------------------------------------------------ SQL checks

interface Snapshot {
  orders: bigint;
  charged: bigint;
  credits: bigint;
  negative: number;
  oddCharges: number;
  /** pg_stat_wal (PostgreSQL 14+; null before): WAL flushes to disk and bytes written. Backends report it at most once a second. */
  wal: { syncs: bigint; bytes: bigint; fpi: bigint } | null;
}

async function snapshot(db: pg.Client, chargeMicro: bigint): Promise<Snapshot> {
  const { rows } = await db.query<{ orders: string; charged: string; credits: string; negative: string; odd: string }>(
    `SELECT (SELECT count(*) FROM orders) AS orders,
            (SELECT coalesce(sum(charge_micro), 0) FROM orders) AS charged,
            (SELECT sum(credits) FROM accounts) AS credits,
            (SELECT count(*) FROM accounts WHERE credits < 0) AS negative,
            (SELECT count(*) FROM orders WHERE charge_micro <> $1 OR charge_micro <> quantity * rate_micro) AS odd`,
    [chargeMicro.toString()],
  );
  const r = rows[0]!;
  let wal: Snapshot['wal'] = null;
  try {
    const w = (await db.query<{ wal_sync: string; wal_bytes: string; wal_fpi: string }>('SELECT wal_sync, wal_bytes, wal_fpi FROM pg_stat_wal')).rows[0];
    if (w !== undefined) wal = { syncs: BigInt(w.wal_sync), bytes: BigInt(w.wal_bytes), fpi: BigInt(w.wal_fpi) };
  } catch {
    // PostgreSQL before 14.
  }
  return { orders: BigInt(r.orders), charged: BigInt(r.charged), credits: BigInt(r.credits), negative: Number(r.negative), oddCharges: Number(r.odd), wal };
}

/** Reads until two readings 100 ms apart agree (requests in flight when the load stopped finish meanwhile). */
async function settledSnapshot(db: pg.Client, chargeMicro: bigint): Promise<Snapshot> {
  let last = await snapshot(db, chargeMicro);
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const next = await snapshot(db, chargeMicro);
    if (next.orders === last.orders && next.credits === last.credits) return next;
    last = next;
  }
  return last;
}

// ------------------------------------------------------------ the benchmark

function packageVersion(name: string): string {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const SHOWN = [
  'server_version',
  'fsync',
  'synchronous_commit',
  'full_page_writes',
  'wal_sync_method',
  'wal_level',
  'commit_delay',
  'shared_buffers',
  'max_wal_size',
  'checkpoint_timeout',
  'data_checksums',
  'autovacuum',
  'max_connections',
];

function defaultLog(line: string): void {
  process.stderr.write(`[peer:fastify-postgres] ${line}\n`);
}

/**
 * Runs the whole peer benchmark and returns the figures. Never leaves a
 * cluster, server or load generator behind (unless keepData).
 */
export async function runFastifyPostgresPeer(partial: Partial<PeerOptions> = {}): Promise<PeerResult> {
  const options: PeerOptions = { ...DEFAULT_PEER_OPTIONS, log: defaultLog, ...partial };
  const log = options.log;
  const chargeMicro = BigInt(options.quantity) * RATE_MICRO;
  const clusterPort = await freePort();
  const started = await startCluster(clusterPort, { log, keep: options.keepData });
  if (!started.ok) return { skipped: true, reason: started.reason };
  const cluster = started.cluster;

  let server: PeerServer | null = null;
  let runner: Runner | null = null;
  let db: pg.Client | null = null;
  const configFile = join(cluster.dir, 'runner.json');
  const onSigint = (): void => {
    runner?.child.kill('SIGKILL');
    server?.child.kill('SIGKILL');
    killCluster(cluster);
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  try {
    db = new pg.Client(cluster.connection('socket'));
    db.on('error', (error) => log(`checking connection: ${error.message}`));
    await db.connect();
    const settings: Record<string, string> = {};
    for (const name of SHOWN) settings[name] = (await db.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
    if (settings['fsync'] !== 'on' || settings['synchronous_commit'] !== 'on' || settings['full_page_writes'] !== 'on') {
      throw new Error(`the cluster is not durable: ${JSON.stringify(settings)}`);
    }
    const env: PeerEnvironment = {
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      node: process.version,
      postgres: cluster.binaries.version,
      fastify: packageVersion('fastify'),
      pg: packageVersion('pg'),
      cpu: cpuModel(),
      cores: cpus().length,
      settings,
      osUser: cluster.osUser,
      syncLatency: describeSyncLatency(measureSyncLatency(tmpdir())),
    };

    const seedStarted = performance.now();
    const accounts = await createAndSeed(db, options.accounts, CREDITS_MICRO, { id: SERVICE_ID, rateMicro: RATE_MICRO, min: 1, max: 1_000_000 });
    const seedS = (performance.now() - seedStarted) / 1000;
    log(`seeded ${f0(accounts.length)} accounts and service ${SERVICE_ID} by SQL in ${f1(seedS)} s`);

    server = await startPeerServer(cluster, options);
    log(`peer server pid ${server.pid} at ${server.baseUrl} (pool ${options.pool}, tx ${options.tx}, PostgreSQL via ${options.via})`);

    const runnerConfig: RunnerConfig = {
      baseUrl: server.baseUrl,
      connections: options.connections,
      serviceId: SERVICE_ID,
      quantity: options.quantity,
      mode: options.mode,
      accounts: accounts.map((a) => ({ key: a.key, secret: a.secret })),
    };
    writeFileSync(configFile, JSON.stringify(runnerConfig), { mode: 0o600 });
    runner = await startRunner(configFile);
    log(`load generator pid ${runner.pid}`);

    if (options.warmup > 0) {
      const warm = await runner.run('warm-up', options.warmup);
      log(`warm-up: ${f0(warm.completed / warm.durationS)} req/s, ${f0(warm.non2xx)} non-2xx, ${f0(warm.errors)} errors`);
      if (warm.ok2xx === 0) throw new Error(`no order succeeded during the warm-up; status codes ${JSON.stringify(warm.statusCodes)}`);
    }

    const runs: PeerRun[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const label = `run ${i}`;
      await waitForQuiet({ quietWait: options.quietWait, quietBelow: options.quietBelow, quietSeconds: options.quietSeconds });
      const before = await settledSnapshot(db, chargeMicro);
      const machine0 = machineTimes();
      const server0 = processTimes(server.pid);
      const runner0 = processTimes(runner.pid);
      const pg0 = treeTimes(cluster.pid);
      const all0 = allTimes();
      const irq0 = irqTicks();
      const self0 = process.cpuUsage();
      const t0 = performance.now();
      const load = await runner.run(label, options.duration);
      const wallS = (performance.now() - t0) / 1000;
      const self = process.cpuUsage(self0);
      const server1 = processTimes(server.pid);
      const runner1 = processTimes(runner.pid);
      const pg1 = treeTimes(cluster.pid);
      const all1 = allTimes();
      const irq1 = irqTicks();
      const machine1 = machineTimes();
      const serverMemory = memory(server.pid);
      const after = await settledSnapshot(db, chargeMicro);

      const newOrders = after.orders - before.orders;
      const debited = before.credits - after.credits;
      const ledger: PeerLedger = {
        newOrders: Number(newOrders),
        debitedMicro: debited.toString(),
        consistent: debited === newOrders * chargeMicro && after.charged - before.charged === debited && after.oddCharges === 0,
        excessOver201: Number(newOrders) - load.ok2xx,
        negativeWallets: after.negative,
      };
      const serverCpu = cpuUse(server.pid, server0, server1, wallS);
      const loadgenCpu = cpuUse(runner.pid, runner0, runner1, wallS);
      const pgUse = treeUse(pg0, pg1, wallS);
      const machine = machineUse(machine0, machine1);
      const selfPct = (self.user + self.system) / 1e4 / wallS;
      const run: PeerRun = {
        label,
        requestsPerS: load.completed / load.durationS,
        durableOrdersPerS: load.ok2xx / load.durationS,
        latency: load.latency,
        ledger,
        wal:
          before.wal === null || after.wal === null || newOrders === 0n
            ? null
            : {
                syncsPerS: Number(after.wal.syncs - before.wal.syncs) / wallS,
                ordersPerSync: Number(newOrders) / Math.max(1, Number(after.wal.syncs - before.wal.syncs)),
                bytesPerOrder: Number(after.wal.bytes - before.wal.bytes) / Number(newOrders),
                fpiPerOrder: Number(after.wal.fpi - before.wal.fpi) / Number(newOrders),
              },
        serverCpuPct: serverCpu?.pct ?? null,
        postgresCpuPct: pgUse.pct,
        loadgenCpuPct: loadgenCpu?.pct ?? null,
        otherCpuPct: Math.max(0, machine.busyPct * cpus().length - (serverCpu?.pct ?? 0) - pgUse.pct - (loadgenCpu?.pct ?? 0) - selfPct),
        otherTop: topOthers(all0, all1, new Set([server.pid, runner.pid, process.pid, ...pg0.keys(), ...pg1.keys()]), wallS),
        irqPct: irq1.total > irq0.total ? ((100 * (irq1.irq - irq0.irq)) / (irq1.total - irq0.total)) * cpus().length : 0,
        machineBusyPct: machine.busyPct,
        iowaitPct: machine.iowaitPct,
        serverCpu,
        postgresCpu: pgUse.kinds,
        loadgenCpu,
        serverMemory,
        load,
      };
      runs.push(run);
      log(`${label}: ${f0(run.durableOrdersPerS)} durable orders/s, p99 ${f2(run.latency.p99)} ms`);
      if (!ledger.consistent) throw new Error(`SQL check failed: ${JSON.stringify({ before, after, newOrders: String(newOrders), debited: String(debited) })}`);
      if (ledger.excessOver201 < 0) throw new Error(`SQL check failed: ${-ledger.excessOver201} fewer orders in the database than 201 responses`);
      if (ledger.negativeWallets > 0) throw new Error('SQL check failed: negative wallets');
    }

    await runner.close();
    runner = null;
    const stopExitCode = await stopPeerServer(server);
    server = null;
    return { skipped: false, env, options: withoutLog(options), seedS, runs, stopExitCode };
  } finally {
    process.removeListener('SIGINT', onSigint);
    if (runner !== null) runner.child.kill('SIGKILL');
    if (server !== null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    if (db !== null) await db.end().catch(() => undefined);
    rmSync(configFile, { force: true });
    await cluster.stop();
    if (options.keepData) log(`kept ${cluster.dir}`);
  }
}

function withoutLog(options: PeerOptions): Omit<PeerOptions, 'log'> {
  const { log: _log, ...rest } = options;
  return rest;
}

// ------------------------------------------------------------ report

function cpuText(cpu: CpuUse | null): string {
  if (cpu === null) return 'n/a';
  return `${f0(cpu.pct)}% (${cpu.threads.slice(0, 3).map((t) => `${t.name}${t.count > 1 ? `×${t.count}` : ''} ${f0(t.pct)}%`).join(', ')})`;
}

export function describePeerRun(r: PeerRun, connections: number): string {
  const l = r.load;
  const codes = Object.entries(l.statusCodes)
    .map(([c, n]) => `${c}: ${f0(n)}`)
    .join(', ');
  return [
    `${r.label}: ${f1(l.durationS)} s at ${connections} connections`,
    `  requests/s          ${f0(r.requestsPerS)}  (${f0(l.completed)} completed; per-second samples ${f0(l.perSecond.min)}..${f0(l.perSecond.max)})`,
    `  durable orders/s    ${f0(r.durableOrdersPerS)}  (201 responses: ${f0(l.ok2xx)}; each sent after its COMMIT returned)`,
    `  SQL check           ${f0(r.ledger.newOrders)} new orders, debits ${r.ledger.debitedMicro} micro-credits = orders × charge: ${r.ledger.consistent ? 'yes' : 'NO'}; ` +
      `${f0(r.ledger.excessOver201)} more orders than 201s seen (≤ ${connections} expected: in flight when the load stopped); negative wallets ${r.ledger.negativeWallets}`,
    `  latency (2xx)       p50 ${f2(r.latency.p50)} ms, p90 ${f2(r.latency.p90)} ms, p99 ${f2(r.latency.p99)} ms, p99.9 ${f2(r.latency.p999)} ms, max ${f2(r.latency.max)} ms`,
    `  PostgreSQL WAL      ${
      r.wal === null
        ? 'n/a'
        : `${f0(r.wal.syncsPerS)} flushes/s (${f1(r.wal.ordersPerSync)} orders per flush), ${f0(r.wal.bytesPerOrder)} bytes and ${f2(r.wal.fpiPerOrder)} full-page images per order (pg_stat_wal, approximate)`
    }`,
    `  status codes        ${codes || 'none'}; non-2xx ${f0(l.non2xx)}, errors ${f0(l.errors)}, timeouts ${f0(l.timeouts)}`,
    `  peer server CPU     ${cpuText(r.serverCpu)}`,
    `  PostgreSQL CPU      ${f0(r.postgresCpuPct)}% (${r.postgresCpu.slice(0, 4).map((k) => `${k.kind}${k.count > 1 ? `×${k.count}` : ''} ${f0(k.pct)}%`).join(', ')})`,
    `  load generator CPU  ${cpuText(r.loadgenCpu)}`,
    `  machine             ${f0(r.machineBusyPct)}% busy of ${cpus().length} cores, iowait ${f1(r.iowaitPct)}%; other processes ${f0(r.otherCpuPct)}% of a core` +
      (r.otherCpuPct > 20 ? ' (NOISY: something else was running)' : '') +
      `; irq + softirq ${f0(r.irqPct)}%` +
      (r.otherTop.length === 0 ? '' : `; busiest: ${r.otherTop.map((o) => `${o.name} ${f0(o.pct)}%`).join(', ')}`),
    `  peer server memory  ${r.serverMemory === null ? 'n/a' : `RSS ${f0(r.serverMemory.rssMiB)} MiB`}`,
  ].join('\n');
}

export function peerMarkdown(result: Extract<PeerResult, { skipped: false }>, command: string): string {
  const { env, options } = result;
  const s = env.settings;
  const rows = result.runs.map(
    (r) =>
      `| ${r.label} | ${f0(r.requestsPerS)} | ${f0(r.durableOrdersPerS)} | ${f0(r.load.ok2xx)} / ${f0(r.ledger.newOrders)} | ` +
      `${f2(r.latency.p50)} | ${f2(r.latency.p90)} | ${f2(r.latency.p99)} | ${f2(r.latency.max)} | ` +
      `${f0(r.load.non2xx)} / ${f0(r.load.errors)} / ${f0(r.load.timeouts)} | ${r.serverCpuPct === null ? 'n/a' : `${f0(r.serverCpuPct)}%`} | ` +
      `${f0(r.postgresCpuPct)}% | ${r.loadgenCpuPct === null ? 'n/a' : `${f0(r.loadgenCpuPct)}%`} | ${f0(r.otherCpuPct)}% |`,
  );
  return [
    `Run of ${env.date}: \`${command}\``,
    '',
    `Node ${env.node}; ${env.postgres}; fastify ${env.fastify}; pg ${env.pg}; ${env.cpu}, ${env.cores} cores. ` +
      `PostgreSQL: fsync=${s['fsync']}, synchronous_commit=${s['synchronous_commit']}, full_page_writes=${s['full_page_writes']}, ` +
      `wal_sync_method=${s['wal_sync_method']}, commit_delay=${s['commit_delay']}, shared_buffers=${s['shared_buffers']}, ` +
      `max_wal_size=${s['max_wal_size']}, data_checksums=${s['data_checksums']} (otherwise initdb defaults), running as OS user ${env.osUser}; ${env.syncLatency ?? 'disk sync latency not measured'}. ` +
      `Peer: pool ${options.pool}, transaction ${options.tx === 'explicit' ? 'BEGIN / guarded UPDATE / INSERT / COMMIT' : 'one data-modifying CTE'}, ` +
      `PostgreSQL via ${options.via === 'socket' ? 'Unix socket' : 'TCP loopback'}. ` +
      `${f0(options.accounts)} accounts (SQL seed ${f1(result.seedS)} s), ${options.connections} connections (${options.mode} requests), ` +
      `${options.warmup} s warm-up, ${options.duration} s per run, quantity ${options.quantity} × rate 0.001. SIGTERM: exit code ${result.stopExitCode}.`,
    '',
    '| run | req/s | durable orders/s | 201s / SQL orders | p50 ms | p90 ms | p99 ms | max ms | non-2xx / errors / timeouts | server CPU | postgres CPU | loadgen CPU | other CPU |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

// ------------------------------------------------------------ CLI

const HELP = `Usage: node dist/bench/peers/fastify-postgres/run.js [options]

  --accounts N      funded accounts (default 10000)
  --connections N   concurrent HTTP connections (default 64)
  --duration S      seconds per measured run (default 10)
  --warmup S        seconds of unmeasured load first (default 3; 0 skips)
  --runs N          measured runs against the same server (default 1)
  --mode M          prebuilt (default) or rotate, as bench:http
  --quantity Q      quantity per order; rate 0.001 (default 1000)
  --pool N          pg Pool size in the peer server (default 16)
  --tx M            explicit (default: BEGIN / UPDATE / INSERT / COMMIT) or cte (one statement)
  --via M           socket (default: Unix socket) or tcp (127.0.0.1) from the peer server to PostgreSQL
  --quiet-wait S    before each run, wait up to S seconds for the machine to go idle (default 0)
  --quiet-below PCT idle threshold for --quiet-wait (default 10)
  --quiet-seconds S consecutive idle seconds --quiet-wait asks for (default 3)
  --json FILE       also write every figure as JSON
  --keep-data       keep the cluster directory afterwards
`;

function positiveInt(name: string, raw: string, min = 1): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new Error(`--${name} must be an integer of at least ${min}; got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let options: Partial<PeerOptions>;
  let json: string | null;
  try {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        accounts: { type: 'string', default: '10000' },
        connections: { type: 'string', default: '64' },
        duration: { type: 'string', default: '10' },
        warmup: { type: 'string', default: '3' },
        runs: { type: 'string', default: '1' },
        mode: { type: 'string', default: 'prebuilt' },
        quantity: { type: 'string', default: '1000' },
        pool: { type: 'string', default: '16' },
        tx: { type: 'string', default: 'explicit' },
        via: { type: 'string', default: 'socket' },
        ...QUIET_OPTION_SPECS,
        'quiet-seconds': { type: 'string', default: '3' },
        json: { type: 'string' },
        'keep-data': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    if (values.help) {
      process.stdout.write(HELP);
      return;
    }
    const { mode, tx, via } = values;
    if (mode !== 'prebuilt' && mode !== 'rotate') throw new Error(`--mode must be prebuilt or rotate; got ${JSON.stringify(mode)}`);
    if (tx !== 'explicit' && tx !== 'cte') throw new Error(`--tx must be explicit or cte; got ${JSON.stringify(tx)}`);
    if (via !== 'socket' && via !== 'tcp') throw new Error(`--via must be socket or tcp; got ${JSON.stringify(via)}`);
    options = {
      accounts: positiveInt('accounts', values.accounts),
      connections: positiveInt('connections', values.connections),
      duration: positiveInt('duration', values.duration),
      warmup: positiveInt('warmup', values.warmup, 0),
      runs: positiveInt('runs', values.runs),
      mode,
      quantity: positiveInt('quantity', values.quantity),
      pool: positiveInt('pool', values.pool),
      tx,
      via,
      ...quietOptions(values),
      quietSeconds: positiveInt('quiet-seconds', values['quiet-seconds']),
      keepData: values['keep-data'],
    };
    json = values.json ?? null;
  } catch (error) {
    process.stderr.write(`peer: ${(error as Error).message}\n${HELP}`);
    process.exit(2);
  }
  const result = await runFastifyPostgresPeer(options);
  if (result.skipped) {
    process.stdout.write(`${result.reason}\n`);
    return;
  }
  for (const r of result.runs) process.stdout.write(`${describePeerRun(r, result.options.connections)}\n\n`);
  const args = argv.map((a) => (/^[\w./=:-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ');
  process.stdout.write(`${peerMarkdown(result, `node dist/bench/peers/fastify-postgres/run.js${args === '' ? '' : ` ${args}`}`)}\n`);
  if (json !== null) {
    writeFileSync(json, JSON.stringify(result, null, 2) + '\n');
    defaultLog(`wrote ${json}`);
  }
  if (result.stopExitCode !== 0) {
    defaultLog(`the peer server exited with code ${result.stopExitCode} on SIGTERM (expected 0)`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    defaultLog(`failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  });
}
