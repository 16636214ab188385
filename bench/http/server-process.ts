/**
 * The real server (dist/src/main.js) as a child process for the benchmarks:
 * started on free ports with a known admin token, ready once the admin
 * /healthz answers 200 (the time from spawn to that answer is recorded: the
 * start, or restart, time), the admin API, and a SIGTERM stop that must
 * exit 0. With REPLICATION_URL in the environment the server is a node of
 * a replicated group, which starts as a follower: it is ready once its
 * /readyz says it leads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePort } from './loadgen.js';
import { sleep } from './util.js';

export const SERVER_MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface ServerOptions {
  /** WAL_SYNC_MODE, or null for the server's default. */
  syncMode?: string | null;
  /** The script to run (default dist/src/main.js). */
  serverEntry?: string;
  /** Run under node --cpu-prof into this directory. */
  profDir?: string | null;
  /** How long to wait for /healthz (default 20 s; big data sets take longer). */
  readyTimeoutMs?: number;
  /** Prefix for the server's forwarded output lines; null drops them. */
  outputTag?: string | null;
  /** More environment for the server only (e.g. LD_PRELOAD), over the benchmark's own. */
  env?: Record<string, string>;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  adminUrl: string;
  token: string;
  /** Spawn → first 200 from the admin /healthz, ms. */
  readyMs: number;
  /** The server's DATA_DIR. */
  dataDir: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startServer(dataDir: string, options: ServerOptions = {}): Promise<ServerProcess> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const token = randomBytes(24).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: String(adminPort),
    DATA_DIR: dataDir,
    ADMIN_TOKEN: token,
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    RATE_LIMIT_DEFAULT: '100000000',
    ...options.env,
  };
  if (options.syncMode !== undefined && options.syncMode !== null) env['WAL_SYNC_MODE'] = options.syncMode;
  const nodeArgs = options.profDir === undefined || options.profDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profDir}`];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, options.serverEntry ?? SERVER_MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tag = options.outputTag === undefined ? '[server]' : options.outputTag;
  const forward = (chunk: Buffer): void => {
    if (tag === null) return;
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') process.stderr.write(`${tag} ${line}\n`);
  };
  child.stdout!.on('data', forward);
  child.stderr!.on('data', forward);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const timeoutMs = options.readyTimeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw new Error('the server exited during start-up (see its output above)');
    try {
      const response = await fetch(`${adminUrl}/healthz`);
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not answer /healthz within ${timeoutMs / 1000} s`);
    }
    await sleep(10);
  }
  if (env['REPLICATION_URL'] !== undefined && env['REPLICATION_URL'] !== '') await waitLeading(`http://127.0.0.1:${port}`, deadline, () => gone);
  return {
    child,
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${port}`,
    adminUrl,
    token,
    readyMs: performance.now() - spawnedAt,
    dataDir,
    exited,
  };
}

/** Waits until the node at `baseUrl` answers /readyz 200 as the leader. */
async function waitLeading(baseUrl: string, deadline: number, gone: () => boolean): Promise<void> {
  for (;;) {
    if (gone()) throw new Error('the server exited before it led its group (see its output above)');
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Switching from follower to leader: its listeners reopen.
    }
    if (Date.now() > deadline) throw new Error('the replicated node did not become the leader in time');
    await sleep(10);
  }
}

export async function admin(server: ServerProcess, method: string, path: string, body?: unknown): Promise<string> {
  const init: RequestInit = { method, headers: { Authorization: `Bearer ${server.token}` } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const response = await fetch(server.adminUrl + path, init);
  const text = await response.text();
  if (response.status < 200 || response.status >= 300) {
    throw new Error(`admin ${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return text;
}

/** The group commit's cumulative counters (GET /admin/v1/stats). */
export interface WalCounters {
  batches: number;
  /** LMDB commits (one sync each); several batches may share one. */
  commits: number;
  entries: number;
  events: number;
}

export async function walCounters(server: ServerProcess): Promise<WalCounters> {
  const stats = JSON.parse(await admin(server, 'GET', '/admin/v1/stats')) as { wal?: Partial<WalCounters> };
  const w = stats.wal;
  if (w === undefined || typeof w.batches !== 'number' || typeof w.entries !== 'number') {
    throw new Error('GET /admin/v1/stats has no wal.batches / wal.entries; did its format change?');
  }
  return { batches: w.batches, commits: w.commits ?? w.batches, entries: w.entries, events: w.events ?? 0 };
}

export interface BatchFigures {
  batches: number;
  commits: number;
  entries: number;
  perBatch: number;
  perCommit: number;
}

/** Entries per batch and per commit between two readings of the counters. */
export function batchBetween(before: WalCounters, after: WalCounters): BatchFigures {
  const batches = after.batches - before.batches;
  const commits = after.commits - before.commits;
  const entries = after.entries - before.entries;
  return { batches, commits, entries, perBatch: batches === 0 ? 0 : entries / batches, perCommit: commits === 0 ? 0 : entries / commits };
}

/** GET /admin/v1/verify: replays the whole log against the tables. */
export async function verifyLedger(server: ServerProcess): Promise<{ ok: boolean; ms: number; text: string }> {
  const started = performance.now();
  const response = await fetch(`${server.adminUrl}/admin/v1/verify`, { headers: { Authorization: `Bearer ${server.token}` } });
  const text = await response.text();
  return { ok: response.status === 200, ms: performance.now() - started, text };
}

export async function stopServer(server: ServerProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const started = Date.now();
  server.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), 20_000);
  });
  const exit = await Promise.race([server.exited, timeout]);
  clearTimeout(timer);
  if (exit === null) {
    server.child.kill('SIGKILL');
    throw new Error('the server did not exit within 20 s of SIGTERM');
  }
  return { ...exit, ms: Date.now() - started };
}

/** SIGKILL and wait: for clean-up paths only. */
export async function killServer(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGKILL');
  await server.exited;
}
