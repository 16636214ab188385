/**
 * Ledger verification of an LMDB store: the ledger's replay
 * (`src/ledger/replay/replay-ledger.ts`, where every invariant is listed)
 * over one read transaction, so on a live store it checks one consistent
 * moment (the log and the tables are always committed together).
 *
 * `verifyLedger` runs synchronously where it is called: the CLI on a stopped
 * data directory, the operator-job child process, tests. A server never calls
 * it on its event loop; it asks `OperatorJobs`, which runs it in a child
 * process (`verifyLedgerAsync` is that, for a store given by path).
 */
import { replayLedger, type LedgerSource, type VerifyReport } from '../ledger/index.js';
import { lastLogSeq, openStore, storeLedgerSource, type Store } from '../wal/index.js';
import { VERIFY_PROGRESS_EVERY_EVENTS } from './limits.js';
import { runJob } from './job-client.js';

export type { BrokenInvariant, Invariant, VerifyReport } from '../ledger/index.js';

/**
 * Replays the store's whole log and checks every invariant, stopping at the
 * first one that breaks. Read-only; safe on a live store.
 */
export function verifyLedger(store: Store, progress?: VerifyProgress): VerifyReport {
  // One explicit read transaction: the log and all tables are read at the
  // same commit, even if a write lands while we iterate.
  const txn = store.root.useReadTransaction();
  try {
    const source = storeLedgerSource(store, txn);
    if (progress === undefined) return replayLedger(source);
    const total = lastLogSeq(store.log);
    progress(0, total);
    return replayLedger(withProgress(source, total, progress));
  } finally {
    txn.done();
  }
}

/** Hears how far a verify's replay is: events replayed of the log's total, every VERIFY_PROGRESS_EVERY_EVENTS and at the end. */
export type VerifyProgress = (events: number, total: number) => void;

/** `source`, its events counted as the replay reads them and reported to `progress`. */
export function withProgress(source: LedgerSource, total: number, progress: VerifyProgress): LedgerSource {
  return { ...source, events: () => counted(source.events(), total, progress) };
}

function* counted<T>(events: Iterable<T>, total: number, progress: VerifyProgress): Generator<T> {
  let done = 0;
  for (const event of events) {
    yield event;
    done++;
    if (done % VERIFY_PROGRESS_EVERY_EVENTS === 0) progress(done, total);
  }
  progress(done, total);
}

/**
 * The same check in a child process that opens the store's directory
 * read-only, so the caller's event loop and heap are untouched.
 */
export async function verifyLedgerAsync(store: Store): Promise<VerifyReport> {
  return (await runJob({ job: 'verify', dir: store.path })).report;
}

/** Opens a data directory or snapshot read-only, verifies it and closes it (the CLI with the server stopped). */
export async function verifyDirectory(dir: string, progress?: VerifyProgress): Promise<VerifyReport> {
  const store = openStore(dir, { readOnly: true });
  try {
    return verifyLedger(store, progress);
  } finally {
    await store.close();
  }
}
