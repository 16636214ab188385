/**
 * The commit path of a replicated node (src/replication).
 *
 * Leader: the log-first WAL with PostgreSQL in the commit log's place.
 * Each batch is one fenced INSERT into the group's log, committed (with a
 * synchronous standby: on two machines' disks) before LMDB takes it and
 * before any reply it covers. Before the first append the tail of the log
 * this node has not applied yet is applied, so the leader starts from the
 * group's last position.
 *
 * Follower: nothing is appended here; the log follower applies the group's
 * records to LMDB as the leader writes them. Requests that would append are
 * refused before they reach a wallet (the node answers 503), so `append`
 * reaching this WAL is a broken invariant.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../ops/index.js';
import { InvariantError, MS_PER_SECOND } from '../platform/index.js';
import { type GroupDb, type Leadership, LogFollower, PgAppender } from '../replication/index.js';
import { appliedPosition, type FileReserve, LmdbGroupCommit, LogFirstWal, type Settled, type Store, type Wal, type WalStats } from '../wal/index.js';

/** What a replicated node is asked to be when its server starts. */
export type ReplicaRole =
  | { kind: 'leader'; db: GroupDb; leadership: Leadership; synchronousStandby: () => boolean | null }
  | { kind: 'follower'; db: GroupDb; onApplied?: (position: number) => void };

export interface ReplicaWal {
  role: ReplicaRole;
  wal: Wal;
  /** The follower's copy of the log (null on the leader). */
  follower: LogFollower | null;
  /** The highest log position this node's LMDB has flushed: reported, so the log is trimmed only behind it. */
  flushedTo(): number;
}

/** A follower's WAL: appends are refused before they get here; flushes and stats are the LMDB group commit's. */
class FollowerWal implements Wal {
  constructor(private readonly lmdb: LmdbGroupCommit) {}

  append(): Promise<void> {
    return Promise.reject(new InvariantError('a follower never appends: requests that change state are answered 503 before they reach a wallet'));
  }

  appendSettled(_entry: unknown, settled: Settled): Promise<void> {
    const refused = this.append();
    refused.catch(settled);
    return refused;
  }

  flushed(): Promise<void> {
    return this.lmdb.flushed();
  }

  readBarrier(): null {
    return null;
  }

  overloaded(): boolean {
    return false;
  }

  stats(): WalStats {
    return this.lmdb.stats();
  }

  close(): Promise<void> {
    return this.lmdb.close();
  }
}

export async function openReplicaWal(role: ReplicaRole, store: Store, reserve: FileReserve | null, log: Logger, metrics: Metrics, onFatal: (error: unknown) => void): Promise<ReplicaWal> {
  let logFirst: LogFirstWal | null = null;
  const lmdb = new LmdbGroupCommit(store, { onFatal: (error) => (logFirst === null ? onFatal(error) : logFirst.fail(error)), onIdle: () => reserve?.idle() });
  const trouble = (error: unknown): void => log.warn({ err: error }, 'PostgreSQL is unreachable; retrying');
  const follower = new LogFollower(role.db, lmdb, appliedPosition(store), { onFatal, onTrouble: trouble, ...(role.kind === 'follower' && role.onApplied !== undefined ? { onApplied: role.onApplied } : {}) });
  await follower.checkJoinable();
  if (role.kind === 'follower') {
    follower.start();
    return { role, wal: new FollowerWal(lmdb), follower, flushedTo: () => follower.flushedTo };
  }
  const position = await follower.catchUp();
  // Reported as flushed from here on: the log may be trimmed behind it.
  await store.root.flushed;
  const last = await role.db.lastPosition();
  if (position < last) throw new InvariantError(`the leader applied the log to position ${position}, short of the group's last position ${last}`);
  log.info({ position, epoch: role.leadership.epoch }, 'leading: the log is applied to its last position');
  const observe = (entries: number, syncMs: number): void => metrics.observeBatch(entries, syncMs / MS_PER_SECOND);
  logFirst = new LogFirstWal(new PgAppender(role.db, role.leadership.epoch, trouble), lmdb, position, { onFatal, onBatch: observe });
  const wal = logFirst;
  return { role, wal, follower: null, flushedTo: () => wal.flushedTo };
}
