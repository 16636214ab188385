/**
 * A throw-away PostgreSQL primary with a synchronous standby, on loopback,
 * for `npm run cluster` and the replication tests.
 *
 * Both servers live in one fresh temporary directory: `initdb` makes the
 * primary, `pg_basebackup` copies it into the standby, which streams from
 * the primary under the application name `standby1`; the primary's
 * `synchronous_standby_names` names it, so every commit waits until the
 * standby has flushed it (synchronous_commit on). fsync, synchronous_commit
 * and full_page_writes stay on: this is the durability the product relies
 * on, not a faster stand-in.
 *
 * initdb and postgres refuse to run as root. When we are root the servers
 * run as an unprivileged OS user (`nobody`, or COA_PG_OS_USER): the
 * directory is handed to it and the binaries are spawned with its uid and
 * gid. Authentication is `trust`, on 127.0.0.1 only: this is a local
 * sandbox; production uses the Patroni configuration in deploy/.
 *
 * Each server runs in its own process group, so `crash()` can SIGKILL the
 * postmaster and every backend at once, as a machine's death would.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, appendFileSync, chownSync, constants, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from '../../bench/http/loadgen.js';

export const POSTGRES_MISSING = 'PostgreSQL binaries (initdb, postgres, pg_basebackup) were not found: install the Debian package postgresql';

interface OsUser {
  uid?: number;
  gid?: number;
}

/** The directory holding initdb, postgres and pg_basebackup, or null. */
export function findPostgresBin(): string | null {
  const candidates: string[] = [];
  if (process.env['COA_PG_BIN'] !== undefined) candidates.push(process.env['COA_PG_BIN']);
  for (const root of ['/usr/lib/postgresql', '/usr/local/lib/postgresql']) {
    try {
      for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) candidates.push(join(root, v, 'bin'));
    } catch {
      // Not there.
    }
  }
  candidates.push('/usr/local/pgsql/bin', '/usr/bin');
  for (const dir of candidates) {
    try {
      for (const tool of ['initdb', 'postgres', 'pg_basebackup']) accessSync(join(dir, tool), constants.X_OK);
      return dir;
    } catch {
      // Not this one.
    }
  }
  return null;
}

function osUser(): OsUser {
  if (process.getuid?.() !== 0) return {};
  const name = process.env['COA_PG_OS_USER'] ?? 'nobody';
  const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`cannot find the OS user ${name} to run PostgreSQL as (we are root)`);
  return { uid, gid };
}

// A free loopback port, as the benchmarks pick theirs.
export { freePort };

function chownTree(path: string, user: OsUser): void {
  if (user.uid === undefined) return;
  spawnSync('chown', ['-R', `${user.uid}:${user.gid}`, path]);
}

function run(bin: string, tool: string, args: string[], user: OsUser): void {
  const result = spawnSync(join(bin, tool), args, { encoding: 'utf8', uid: user.uid, gid: user.gid, cwd: '/' });
  if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

/** One running PostgreSQL server. */
export class PgServer {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly user: OsUser,
  ) {}

  get url(): string {
    return `postgres://coa@127.0.0.1:${this.port}/coa`;
  }

  /** Starts the postmaster in its own process group and waits until it takes connections. */
  async start(): Promise<void> {
    const child = spawn(join(this.bin, 'postgres'), ['-D', this.dir], { uid: this.user.uid, gid: this.user.gid, cwd: '/', detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres ${this.name} exited at start: ${stderr}`);
      // The maintenance database: `coa` is created once the primary is up.
      const sql = postgres(`postgres://coa@127.0.0.1:${this.port}/postgres`, { max: 1, connect_timeout: 2, onnotice: () => {} });
      try {
        await sql`select 1`;
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`postgres ${this.name} did not take connections within 30 s: ${(error as Error).message} ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        await sql.end({ timeout: 1 });
      }
    }
  }

  /** The postmaster and every backend killed at once (SIGKILL to the process group), as when its machine dies. */
  async crash(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Gone already.
    }
    await this.exited;
    this.child = null;
  }

  /** A fast, clean stop (SIGINT: the "fast" shutdown mode). */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    child.kill('SIGINT');
    await this.exited;
    this.child = null;
  }

  /** Runs statements on this server as the superuser. */
  async sql<T>(use: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres(this.url, { max: 1, connect_timeout: 5, onnotice: () => {} });
    try {
      return await use(sql);
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
}

const COMMON_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  'fsync = on',
  'synchronous_commit = on',
  'full_page_writes = on',
  'wal_level = replica',
  'max_wal_senders = 8',
  'hot_standby = on',
  'max_connections = 100',
  "shared_buffers = '64MB'",
  'log_min_messages = warning',
];

/** A primary with one synchronous standby in a temporary directory. */
export class PgPair {
  private constructor(
    readonly root: string,
    readonly primary: PgServer,
    readonly standby: PgServer,
  ) {}

  /** A multi-host URI for the pair: whichever of the two is writable serves (target_session_attrs=read-write). */
  get url(): string {
    return `postgres://coa@127.0.0.1:${this.primary.port},127.0.0.1:${this.standby.port}/coa?target_session_attrs=read-write`;
  }

  /** Creates a database on the primary and returns the pair's multi-host URI for it (each test group gets its own). */
  async database(name: string): Promise<string> {
    await this.primary.sql((sql) => sql.unsafe(`create database ${name}`).then(() => undefined));
    return this.url.replace('/coa?', `/${name}?`);
  }

  static async start(): Promise<PgPair> {
    const bin = findPostgresBin();
    if (bin === null) throw new Error(POSTGRES_MISSING);
    const user = osUser();
    const root = mkdtempSync(join(tmpdir(), 'coa-pg-'));
    const [primaryPort, standbyPort] = [await freePort(), await freePort()];
    const primaryDir = join(root, 'primary');
    const standbyDir = join(root, 'standby');
    chownTree(root, user);
    run(bin, 'initdb', ['-D', primaryDir, '-U', 'coa', '--auth=trust', '--no-sync', '-E', 'UTF8'], user);
    appendFileSync(
      join(primaryDir, 'postgresql.conf'),
      [...COMMON_SETTINGS, `port = ${primaryPort}`, `unix_socket_directories = '${root}'`, ''].join('\n'),
    );
    const primary = new PgServer('primary', primaryDir, primaryPort, bin, user);
    await primary.start();
    const maintenance = postgres(`postgres://coa@127.0.0.1:${primaryPort}/postgres`, { max: 1, onnotice: () => {} });
    await maintenance`create database coa`;
    await maintenance.end();
    run(bin, 'pg_basebackup', ['-D', standbyDir, '-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'coa', '-X', 'stream', '-c', 'fast', '--no-sync'], user);
    appendFileSync(
      join(standbyDir, 'postgresql.auto.conf'),
      [`port = ${standbyPort}`, `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=coa application_name=standby1'`, ''].join('\n'),
    );
    writeFileSync(join(standbyDir, 'standby.signal'), '');
    chownTree(standbyDir, user);
    const standby = new PgServer('standby', standbyDir, standbyPort, bin, user);
    await standby.start();
    // Synchronous only once the standby exists: before, every commit (the
    // database's creation, the base backup's checkpoint) would wait for it.
    await primary.sql(async (sql) => {
      await sql`alter system set synchronous_standby_names = 'standby1'`;
      await sql`select pg_reload_conf()`;
    });
    const pair = new PgPair(root, primary, standby);
    await pair.waitStreaming();
    return pair;
  }

  /** Waits until the primary sees its standby streaming as synchronous. */
  async waitStreaming(): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await this.primary.sql((sql) => sql`select 1 from pg_stat_replication where state = 'streaming' and sync_state = 'sync'`);
      if (rows.length > 0) return;
      if (Date.now() > deadline) throw new Error('the standby did not start streaming synchronously within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Promotes the standby to primary (as Patroni would after the primary's
   * death). With no standby left behind it, the new primary is told not to
   * wait for one (`synchronous_standby_names` emptied), as Patroni does in
   * non-strict synchronous mode; in strict mode writes wait for a standby.
   */
  async promoteStandby(): Promise<void> {
    await this.standby.sql(async (sql) => {
      await sql`select pg_promote(true, 30)`;
      await sql`alter system set synchronous_standby_names = ''`;
      await sql`select pg_reload_conf()`;
    });
  }

  async stop(): Promise<void> {
    await this.standby.stop();
    await this.primary.stop();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Changes a file's owner when running as root (tests hand directories to the PostgreSQL user). */
export function chownForPostgres(path: string): void {
  const user = osUser();
  if (user.uid !== undefined) chownSync(path, user.uid, user.gid!);
}
