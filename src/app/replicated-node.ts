/**
 * One node of a replicated group (REPLICATION_URL set).
 *
 * It starts as a follower: its server answers health checks and admin
 * reads, refuses the rest with 503, and applies the group's log to its own
 * LMDB as the leader writes it. Every CONTEND_EVERY_MS it looks at the
 * lease; once the lease has run out (the leader died, froze or lost
 * PostgreSQL) it takes it with a new epoch, stops following, and starts
 * its server again as the leader: the log's tail applied, then every batch
 * appended to PostgreSQL before its replies. A leader never goes back to
 * following: when its lease is taken by another node, the fence refuses
 * its appends and the process stops (a supervisor restarts it, as a
 * follower).
 *
 * Each node reports the position its LMDB has flushed; the leader trims
 * the log behind the slowest live node, and reports whether PostgreSQL has
 * a synchronous standby streaming.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { createLogger } from '../platform/index.js';
import { CONTEND_EVERY_MS, GroupDb, type GroupKeys, LEASE_MS, Leadership, REPORT_EVERY_MS, STANDBY_CHECK_EVERY_MS, TRIM_EVERY_MS } from '../replication/index.js';
import { adminToken } from './admin-token.js';
import type { Config } from './config.js';
import { exitWhenStoreSettles, type SettlingStore } from './fatal-exit.js';
import { FATAL_SETTLE_MS } from './limits.js';
import type { ServerOptions } from './options.js';
import { type Server, startServer } from './server.js';

export interface ReplicatedNode {
  /** The server this node runs now (its follower's, then its leader's once it takes over). */
  readonly server: Server;
  readonly role: 'follower' | 'leader';
  /** Resolves when this node has become the leader. */
  readonly leading: Promise<void>;
  close(): Promise<void>;
}

function fingerprint(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The fingerprints of the keys every node of a group must share. */
function groupKeys(config: Config): GroupKeys {
  return { adminToken: fingerprint(adminToken(config).token), sealingKey: fingerprint(config.webhooksSecretKey!), orderIdKey: fingerprint(config.orderIdKey!) };
}

/** Repeats `work` every `everyMs` (never two at once) until stopped; its errors go to `onError`. */
function every(everyMs: number, work: () => Promise<void>, onError: (error: unknown) => void): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    work().then(
      () => (busy = false),
      (error: unknown) => {
        busy = false;
        onError(error);
      },
    );
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Connects to the group's PostgreSQL, creates its tables if missing, and refuses keys that differ from the group's. */
async function joinGroup(config: Config): Promise<GroupDb> {
  const db = new GroupDb(config.replicationUrl!, config.nodeName);
  await db.ensureSchema();
  const differ = await db.checkKeys(groupKeys(config));
  if (differ.length > 0) {
    await db.close();
    throw new Error(`${differ.join(', ')} ${differ.length === 1 ? 'differs' : 'differ'} from the group's: every node of a group uses the same admin token, webhook sealing key and order-id key.`);
  }
  return db;
}

/**
 * The node's fail-stop: every fault is logged, and the first calls `exit(1)`
 * once the writes handed to the live store have settled (fatal-exit.ts), so
 * that the process exits with status 1 rather than dying in lmdb-js's
 * native teardown; later faults (a lost lease also fences the appends) add
 * their line and no second exit. The live store is the one of the server
 * the node runs at the time of the fault, the follower's until the
 * leader's server has started. Nothing waits for PostgreSQL: an append in
 * flight either commits there, and the next leader applies it, or not, and
 * no reply covered it either way (a request that got no answer may or may
 * not have happened); postgres.js is sockets on the event loop, no thread
 * that an exit could tear down under it.
 */
function failStop(log: Logger, liveStore: () => SettlingStore | null, exit: (code: number) => void): (error: unknown) => void {
  let stopping = false;
  return (error) => {
    log.fatal({ err: error }, 'stopping this node so that a restart rejoins the group as a follower');
    if (stopping) return;
    stopping = true;
    exitWhenStoreSettles(liveStore(), exit, FATAL_SETTLE_MS);
  };
}

export async function startReplicatedNode(config: Config, options: ServerOptions = {}): Promise<ReplicatedNode> {
  const log: Logger = options.log ?? createLogger(config.logLevel);
  let live: SettlingStore | null = null;
  const fatal = options.onFatal ?? failStop(log, () => live, options.exit ?? process.exit);
  const db = await joinGroup(config);
  let server = await startServer(config, { ...options, log, onFatal: fatal, replica: { kind: 'follower', db } });
  live = server.store;
  // At once: the log is trimmed only behind the nodes that have said where they are.
  await db.report(server.flushedTo());
  let role: 'follower' | 'leader' = 'follower';
  let standby: boolean | null = null;
  let becameLeader!: () => void;
  const leading = new Promise<void>((resolve) => (becameLeader = resolve));
  const stoppers: (() => void)[] = [];
  const warn = (what: string) => (error: unknown) => log.warn({ err: error }, what);
  stoppers.push(every(REPORT_EVERY_MS, () => db.report(server.flushedTo()), warn('could not report this node\'s position to PostgreSQL')));

  const takeOver = async (epoch: number, acquiredMs: number): Promise<void> => {
    const leadership = new Leadership(db, epoch, acquiredMs, { onLost: fatal, onTrouble: warn('could not renew the lease') });
    leadership.start();
    stoppers.push(() => leadership.stop());
    log.info({ node: config.nodeName, epoch }, 'took the lease: starting as the leader');
    await server.close();
    server = await startServer(config, { ...options, log, onFatal: fatal, replica: { kind: 'leader', db, leadership, synchronousStandby: () => standby } });
    live = server.store;
    role = 'leader';
    stoppers.push(every(TRIM_EVERY_MS, async () => void (await db.trim(config.replicationLogKeep)), warn('could not trim the log')));
    const checkStandby = async (): Promise<void> => {
      standby = await db.synchronousStandby();
    };
    await checkStandby().catch(warn('could not ask PostgreSQL about its standby'));
    stoppers.push(every(STANDBY_CHECK_EVERY_MS, checkStandby, warn('could not ask PostgreSQL about its standby')));
    becameLeader();
  };
  let contending = true;
  const stopContending = every(
    CONTEND_EVERY_MS,
    async () => {
      if (!contending || !(await db.leader()).expired) return;
      const sentMs = performance.now();
      const epoch = await db.tryAcquire(LEASE_MS);
      if (epoch === null) return;
      contending = false;
      stopContending();
      await takeOver(epoch, sentMs).catch(fatal);
    },
    warn('could not look at the lease'),
  );
  stoppers.push(stopContending);
  return {
    get server() {
      return server;
    },
    get role() {
      return role;
    },
    leading,
    async close() {
      for (const stop of stoppers) stop();
      await server.close();
      await db.close();
    },
  };
}
