/**
 * A group-commit batch: entries that share one commit, one sync and one
 * promise. Shared by every WAL implementation so they batch the same way.
 */
import type { WalEntry } from './entry.js';

export interface Batch {
  entries: WalEntry[];
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Adds an entry to the open batch, or to a new one when there is none or it
 * holds `entriesMax` already (the full one is pushed to `closed`). Returns
 * the batch that took the entry: the caller's new open batch.
 */
export function addToOpenBatch(open: Batch | null, closed: Batch[], entry: WalEntry, entriesMax: number): Batch {
  let batch = open;
  if (batch === null || batch.entries.length >= entriesMax) {
    if (batch !== null) closed.push(batch);
    batch = newBatch();
  }
  batch.entries.push(entry);
  return batch;
}

export function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Waiters attach their own handlers; this keeps a failed batch from also
  // being reported as an unhandled rejection (the process is stopping anyway).
  promise.catch(() => {});
  return { entries: [], promise, resolve, reject };
}
