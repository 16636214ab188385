/**
 * A private, throw-away PostgreSQL cluster for the peer benchmark.
 *
 * Uses the PostgreSQL binaries already on this machine (PATH, then
 * /usr/local/bin, /usr/lib/postgresql/<version>/bin, /usr/pgsql-<version>/bin),
 * creates a cluster in a fresh temporary directory, starts `postgres` on
 * 127.0.0.1 and a free port with its Unix socket in that directory, and
 * removes everything again in stop(). Durable like our server: fsync,
 * synchronous_commit and full_page_writes are all on (set explicitly, and
 * read back with SHOW by the caller).
 *
 * initdb and postgres refuse to run as root. When we are root the cluster
 * runs as an unprivileged OS user (default `nobody`, or PEER_PG_OS_USER):
 * the temp directory is chowned to it and the binaries are spawned with its
 * uid/gid (Node's spawn `uid`/`gid`, the same as `runuser -u nobody --`).
 *
 * The database role is `bench` with a random password (scram-sha-256 on the
 * socket and on loopback), so nobody else on a shared machine can use it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync, appendFileSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import pg from 'pg';

export interface PgBinaries {
  binDir: string;
  initdb: string;
  postgres: string;
  /** `postgres --version`, e.g. "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)". */
  version: string;
}

export const SKIP_NO_BINARIES = 'peer skipped: PostgreSQL binaries not found (install postgresql)';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function versionKey(dir: string): number {
  const m = /(\d+)(?:\.(\d+))?/.exec(dir);
  return m === null ? 0 : Number(m[1]) * 1000 + Number(m[2] ?? 0);
}

/** The first directory holding initdb and postgres, or null. (pg_ctl is not needed: postgres runs as our child.) */
export function findPostgres(): PgBinaries | null {
  const candidates: string[] = [];
  if (process.env['PEER_PG_BIN']) candidates.push(process.env['PEER_PG_BIN']);
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) if (dir !== '') candidates.push(dir);
  candidates.push('/usr/local/bin', '/usr/local/pgsql/bin');
  for (const root of ['/usr/lib/postgresql', '/usr/local/lib/postgresql']) {
    try {
      const versions = readdirSync(root).sort((a, b) => versionKey(b) - versionKey(a));
      for (const v of versions) candidates.push(join(root, v, 'bin'));
    } catch {
      // Not there.
    }
  }
  try {
    const versions = readdirSync('/usr').filter((d) => d.startsWith('pgsql-')).sort((a, b) => versionKey(b) - versionKey(a));
    for (const v of versions) candidates.push(join('/usr', v, 'bin'));
  } catch {
    // Not there.
  }
  for (const dir of candidates) {
    const initdbPath = join(dir, 'initdb');
    if (!executable(initdbPath)) continue;
    // /usr/local/bin/initdb is often a symlink into the versioned bin directory: use that one.
    const binDir = dirname(realpathSync(initdbPath));
    const initdb = join(binDir, 'initdb');
    const postgres = join(binDir, 'postgres');
    if (!executable(initdb) || !executable(postgres)) continue;
    const v = spawnSync(postgres, ['--version'], { encoding: 'utf8' });
    if (v.status !== 0) continue;
    return { binDir, initdb, postgres, version: v.stdout.trim() };
  }
  return null;
}

export interface ClusterOptions {
  /** Extra postgresql.conf settings (name → value, written verbatim; quote strings yourself). */
  settings?: Record<string, string>;
  /** OS user to run as when we are root (default PEER_PG_OS_USER or nobody). */
  osUser?: string;
  log?: (line: string) => void;
  /** Keep the directory after stop() (for a post-mortem). */
  keep?: boolean;
}

export interface Cluster {
  binaries: PgBinaries;
  /** The temporary directory holding data/, the socket and the server log. */
  dir: string;
  dataDir: string;
  socketDir: string;
  port: number;
  database: string;
  user: string;
  password: string;
  /** The OS user postgres runs as (the current user unless we are root). */
  osUser: string;
  /** The postmaster's pid; backends and auxiliary processes are its children. */
  pid: number;
  /** Settings written into postgresql.conf. */
  settings: Record<string, string>;
  /** Connection parameters for pg over the Unix socket or TCP loopback. */
  connection(via: 'socket' | 'tcp'): pg.ClientConfig;
  /** Fast shutdown (SIGINT), wait for exit, remove the directory. Safe to call twice. */
  stop(): Promise<void>;
  /** Last lines of the server log (for error messages). */
  logTail(lines?: number): string;
}

export type ClusterStart = { ok: true; cluster: Cluster } | { ok: false; reason: string };

interface RunAs {
  name: string;
  uid?: number;
  gid?: number;
}

function runAs(requested: string | undefined): RunAs | { error: string } {
  const uid = process.getuid?.();
  const name = requested ?? process.env['PEER_PG_OS_USER'] ?? 'nobody';
  if (uid !== 0) {
    return { name: process.env['USER'] ?? String(uid ?? 'current user') };
  }
  const u = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (u.status !== 0 || g.status !== 0) return { error: `we are root and initdb refuses root, but OS user ${JSON.stringify(name)} does not exist (set PEER_PG_OS_USER)` };
  const pu = Number(u.stdout.trim());
  const pgid = Number(g.stdout.trim());
  if (pu === 0) return { error: `OS user ${JSON.stringify(name)} is root; initdb refuses root (set PEER_PG_OS_USER to an unprivileged user)` };
  return { name, uid: pu, gid: pgid };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no server log)';
  }
}

/**
 * Creates and starts the cluster. `{ ok: false }` (with a one-line reason)
 * when there are no binaries or the cluster cannot run as a non-root user;
 * throws on anything else.
 */
export async function startCluster(port: number, options: ClusterOptions = {}): Promise<ClusterStart> {
  const log = options.log ?? (() => undefined);
  const binaries = findPostgres();
  if (binaries === null) return { ok: false, reason: SKIP_NO_BINARIES };
  const who = runAs(options.osUser);
  if ('error' in who) return { ok: false, reason: `peer skipped: ${who.error}` };

  const dir = mkdtempSync(join(tmpdir(), 'credit-order-peer-pg-'));
  let postmaster: ChildProcess | null = null;
  let removed = false;
  const remove = (): void => {
    if (removed || options.keep) return;
    removed = true;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (who.uid !== undefined) chownSync(dir, who.uid, who.gid!);
    const dataDir = join(dir, 'data');
    const socketDir = dir;
    const logFile = join(dir, 'postgres.log');
    const user = 'bench';
    const database = 'bench';
    const password = randomBytes(18).toString('base64url');
    const pwFile = join(dir, 'pwfile');
    writeFileSync(pwFile, password + '\n', { mode: 0o600 });
    closeSync(openSync(logFile, 'a', 0o600));
    if (who.uid !== undefined) {
      chownSync(pwFile, who.uid, who.gid!);
      chownSync(logFile, who.uid, who.gid!);
    }
    const ids = who.uid === undefined ? {} : { uid: who.uid, gid: who.gid! };
    const childEnv: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', HOME: dir };

    const init = spawnSync(
      binaries.initdb,
      ['-D', dataDir, '-U', user, `--pwfile=${pwFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
      { ...ids, cwd: dir, env: childEnv, encoding: 'utf8' },
    );
    rmSync(pwFile, { force: true });
    if (init.status !== 0) {
      throw new Error(`initdb failed (exit ${init.status}${init.error ? `, ${init.error.message}` : ''}):\n${init.stderr}${init.stdout}`);
    }

    const settings: Record<string, string> = {
      listen_addresses: "'127.0.0.1'",
      port: String(port),
      unix_socket_directories: `'${socketDir}'`,
      // Durable like ours: every acknowledged commit is on disk.
      fsync: 'on',
      synchronous_commit: 'on',
      full_page_writes: 'on',
      max_connections: '100',
      logging_collector: 'off',
      ...options.settings,
    };
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      '\n# credit-order-api peer benchmark\n' + Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n',
    );

    const logFd = openSync(logFile, 'a');
    postmaster = spawn(binaries.postgres, ['-D', dataDir], { ...ids, cwd: dir, env: childEnv, stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    const child = postmaster;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    const exit = new Promise<void>((resolve) => {
      child.on('exit', (code, signal) => {
        exited = { code, signal };
        resolve();
      });
    });
    child.on('error', () => undefined);

    const connection = (via: 'socket' | 'tcp'): pg.ClientConfig => ({
      host: via === 'socket' ? socketDir : '127.0.0.1',
      port,
      user,
      password,
      database: 'postgres',
    });

    // Wait until it accepts connections.
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited !== null) throw new Error(`postgres exited during start-up (${JSON.stringify(exited)}):\n${tail(logFile, 20)}`);
      const probe = new pg.Client(connection('socket'));
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        await probe.query(`CREATE DATABASE ${database}`);
        await probe.end();
        break;
      } catch (error) {
        await probe.end().catch(() => undefined);
        const message = (error as Error).message;
        if (!/ECONNREFUSED|ENOENT|starting up|the database system is/.test(message)) {
          throw new Error(`could not connect to the new cluster: ${message}\n${tail(logFile, 20)}`);
        }
      }
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s:\n${tail(logFile, 20)}`);
      await sleep(50);
    }
    log(`PostgreSQL cluster in ${dir} (${binaries.version}; running as ${who.name}), port ${port}, socket ${socketDir}, pid ${child.pid}`);

    let stopping: Promise<void> | null = null;
    const cluster: Cluster = {
      binaries,
      dir,
      dataDir,
      socketDir,
      port,
      database,
      user,
      password,
      osUser: who.name,
      pid: child.pid!,
      settings,
      connection: (via) => ({ ...connection(via), database }),
      logTail: (lines = 20) => tail(logFile, lines),
      stop() {
        stopping ??= (async () => {
          if (exited === null) {
            child.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
            const timer = setTimeout(() => child.kill('SIGQUIT'), 20_000);
            await exit;
            clearTimeout(timer);
          }
          remove();
        })();
        return stopping;
      },
    };
    return { ok: true, cluster };
  } catch (error) {
    if (postmaster !== null && postmaster.exitCode === null && postmaster.signalCode === null) {
      postmaster.kill('SIGQUIT');
      await new Promise((resolve) => postmaster!.once('exit', resolve));
    }
    remove();
    throw error;
  }
}

/** Kills a cluster synchronously-ish (for SIGINT handlers): immediate shutdown, then remove its directory. */
export function killCluster(cluster: Cluster): void {
  try {
    process.kill(cluster.pid, 'SIGQUIT');
  } catch {
    // Already gone.
  }
  if (existsSync(cluster.dir)) {
    // The postmaster may still be writing; removal is best effort.
    try {
      rmSync(cluster.dir, { recursive: true, force: true });
    } catch {
      // Leave it.
    }
  }
}
