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
import { replayLedger, type VerifyReport } from '../ledger/index.js';
import { openStore, storeLedgerSource, type Store } from '../wal/index.js';
import { runJob } from './job-client.js';

export type { BrokenInvariant, Invariant, VerifyReport } from '../ledger/index.js';

/**
 * Replays the store's whole log and checks every invariant, stopping at the
 * first one that breaks. Read-only; safe on a live store.
 */
export function verifyLedger(store: Store): VerifyReport {
  // One explicit read transaction: the log and all tables are read at the
  // same commit, even if a write lands while we iterate.
  const txn = store.root.useReadTransaction();
  try {
    return replayLedger(storeLedgerSource(store, txn));
  } finally {
    txn.done();
  }
}

/**
 * The same check in a child process that opens the store's directory
 * read-only, so the caller's event loop and heap are untouched.
 */
export async function verifyLedgerAsync(store: Store): Promise<VerifyReport> {
  return (await runJob({ job: 'verify', dir: store.path })).report;
}

/** Opens a data directory or snapshot read-only, verifies it and closes it (the CLI with the server stopped). */
export async function verifyDirectory(dir: string): Promise<VerifyReport> {
  const store = openStore(dir, { readOnly: true });
  try {
    return verifyLedger(store);
  } finally {
    await store.close();
  }
}
