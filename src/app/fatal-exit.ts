/**
 * The exit after a fatal fault (a failed commit or a broken invariant).
 *
 * lmdb-js's write thread goes on with the transactions it was already
 * handed when the fault stops the WAL. A process that exits while that
 * thread runs can crash in lmdb-js's native teardown: the C++ runtime
 * destroys a table the thread is still using, and the process dies of
 * SIGFPE instead of exiting with status 1, which is what supervisors and
 * the operator guide read as a fail-stop. So the exit first waits, at most
 * FATAL_SETTLE_MS, for the store's handed writes to settle (committed, and
 * flushed where LMDB flushes behind its commits), whether they succeed or
 * fail. Nothing is acknowledged meanwhile: the failed WAL refuses every
 * write, so the wait loses nothing and adds nothing acknowledged.
 */
import type { Store } from '../wal/index.js';

/** What the exit waits on: the store's root (its commits and flushes) and whether LMDB flushes behind its commits. */
export type SettlingStore = Pick<Store, 'root' | 'syncMode'>;

export interface FatalExitTimers {
  setTimeout(callback: () => void, ms: number): unknown;
}

/** Calls `exit(1)` once the store's handed writes have settled, or after `boundMs`, whichever is first; at once when there is no store yet. */
export function exitWhenStoreSettles(store: SettlingStore | null, exit: (code: number) => void, boundMs: number, timers: FatalExitTimers = globalThis): void {
  let exited = false;
  const exitOnce = (): void => {
    if (exited) return;
    exited = true;
    exit(1);
  };
  if (store === null) return exitOnce();
  timers.setTimeout(exitOnce, boundMs);
  const settled = (promise: PromiseLike<unknown>): Promise<void> => Promise.resolve(promise).then(
    () => undefined,
    () => undefined,
  );
  const flushedToo = store.syncMode !== 'commit';
  void settled(store.root.committed)
    .then(() => (flushedToo ? settled(store.root.flushed) : undefined))
    .then(exitOnce);
}
