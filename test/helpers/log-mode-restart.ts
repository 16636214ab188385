/**
 * A restart in sync mode 'log', as the server does at start-up: the store
 * opened on its data directory, and the commit log's tail applied to LMDB.
 */
import { CommitLog, LmdbGroupCommit, openStore, recoverCommitLog, type Store } from '../../src/wal/index.js';

/**
 * The size of a commit-log file in the WAL tests (1 MiB: room for every
 * record a test writes). A restart reads the log in files of the size it
 * was written with, so the writers and `restartLogMode` share it.
 */
export const LOG_FILE_BYTES = 1024 * 1024;

/** Opens the store in `dir` and applies the commit log's tail to it; `replayed` counts the records applied, `position` is where the log goes on. */
export async function restartLogMode(dir: string, onFatal: (error: unknown) => void): Promise<{ store: Store; replayed: number; position: number }> {
  const store = openStore(dir, { syncMode: 'log' });
  const log = new CommitLog(dir, { fileBytes: LOG_FILE_BYTES, whenApplied: async () => {} });
  try {
    const result = await recoverCommitLog(store, log, new LmdbGroupCommit(store, { onFatal }));
    return { store, ...result };
  } finally {
    log.close();
  }
}
