/**
 * Opening storage: the LMDB store, the zero-filled reserve ahead of its
 * data file, the commit log (sync mode 'log') and the WAL the parts commit
 * through, and the secret that turns order storage keys into public ids.
 */
import type { Logger } from 'pino';
import { OrderIds } from '../ids/index.js';
import type { Metrics } from '../ops/index.js';
import { BYTES_PER_MIB, MS_PER_SECOND } from '../platform/index.js';
import { CommitLog, commitLogPresent, FileReserve, LmdbGroupCommit, LogFirstWal, openStore, recoverCommitLog, type Store, type Wal } from '../wal/index.js';
import type { Config } from './config.js';
import type { ServerOptions } from './options.js';
import { openReplicaWal, type ReplicaWal } from './replica-wal.js';

/** Storage and its commit path: the store, the zero-filled reserve, the commit log (sync mode 'log') and the WAL. */
export interface Storage {
  store: Store;
  reserve: FileReserve | null;
  commitLog: CommitLog | null;
  wal: Wal;
  /** The order-id secret kept in the store (see orderIdSecret). */
  orderIdSecret: Buffer;
  /** Replicated mode: how this node follows or writes the group's log; null standalone. */
  replica: ReplicaWal | null;
}

/**
 * The secret that turns order storage keys into public ids. Created once,
 * synced before first use, and kept in the store so snapshots carry it.
 */
async function orderIdSecret(store: Store, configured: string | null): Promise<Buffer> {
  const existing = store.tables.meta.get('orderIdSecret') as Buffer | Uint8Array | undefined;
  const given = configured === null ? null : Buffer.from(configured, 'base64');
  if (existing !== undefined) {
    if (given !== null && !given.equals(Buffer.from(existing))) {
      throw new Error('ORDER_ID_KEY is not the order-id key this data directory was made with: its orders\' public ids would change. Set ORDER_ID_KEY to the group\'s key.');
    }
    return Buffer.from(existing);
  }
  const secret = given ?? OrderIds.newSecret();
  store.tables.meta.putSync('orderIdSecret', secret);
  // With lmdb-js overlapping sync (sync modes other than 'commit') putSync
  // commits without syncing: wait for the flush before any id is given out.
  if (store.syncMode !== 'commit') await store.root.flushed;
  return secret;
}

/** The WAL of the configured sync mode over an open store (the commit log first, LMDB behind it, in mode 'log'). */
async function openWal(config: Config, store: Store, reserve: FileReserve | null, log: Logger, metrics: Metrics, onFatal: (error: unknown) => void): Promise<{ wal: Wal; commitLog: CommitLog | null }> {
  const observe = (entries: number, syncMs: number): void => metrics.observeBatch(entries, syncMs / MS_PER_SECOND);
  if (config.syncMode !== 'log') {
    return { wal: new LmdbGroupCommit(store, { onFatal, onBatch: observe, onIdle: () => reserve?.idle() }), commitLog: null };
  }
  // The commit log first, LMDB behind it (src/wal/log-first.ts). LMDB's
  // failures stop the whole path, as the log's do.
  let logFirst: LogFirstWal | null = null;
  const lmdb = new LmdbGroupCommit(store, { onFatal: (error) => (logFirst === null ? onFatal(error) : logFirst.fail(error)), onIdle: () => reserve?.idle() });
  const commitLog = new CommitLog(config.dataDir, { whenApplied: (position) => logFirst!.whenApplied(position) });
  const recovered = await recoverCommitLog(store, commitLog, lmdb);
  if (recovered.replayed > 0) log.info({ records: recovered.replayed, position: recovered.position }, 'applied the commit log\'s tail to LMDB');
  logFirst = new LogFirstWal(commitLog, lmdb, recovered.position, { onFatal, onBatch: observe });
  return { wal: logFirst, commitLog };
}

export async function openStorage(config: Config, options: ServerOptions, log: Logger, metrics: Metrics, onFatal: (error: unknown) => void): Promise<Storage> {
  if (config.syncMode !== 'log' && commitLogPresent(config.dataDir)) {
    // Acknowledged orders may be in the log alone, and LMDB may hold a
    // commit it never flushed: only sync mode 'log' opens this safely.
    throw new Error(
      `${config.dataDir} holds a commit log: it was last run with WAL_SYNC_MODE=log and did not stop cleanly. Start it with WAL_SYNC_MODE=log (which applies the log and, on a clean stop, removes it), then with any mode.`,
    );
  }
  // Replicated, a change is durable once PostgreSQL has committed it: LMDB
  // runs as behind the commit log (sync mode 'log'), flushed after the commit.
  const store = openStore(config.dataDir, { syncMode: options.replica === undefined ? config.syncMode : 'log' });
  const reserve =
    config.walPreallocateMb === 0
      ? null
      : new FileReserve(store, {
          bytes: config.walPreallocateMb * BYTES_PER_MIB,
          onError: (error) => log.warn({ err: error }, 'could not keep zero-filled space ahead of the data file; commits go on without it'),
        });
  reserve?.fill();
  const secret = await orderIdSecret(store, config.orderIdKey);
  if (options.replica !== undefined) {
    const replica = await openReplicaWal(options.replica, store, reserve, log, metrics, onFatal);
    return { store, reserve, commitLog: null, wal: replica.wal, orderIdSecret: secret, replica };
  }
  const { wal, commitLog } = options.wal === undefined ? await openWal(config, store, reserve, log, metrics, onFatal) : { wal: options.wal(store, onFatal), commitLog: null };
  return { store, reserve, commitLog, wal, orderIdSecret: secret, replica: null };
}
