/**
 * A group-commit batch: entries that share one commit, one sync and one
 * promise. Shared by every WAL implementation so they batch the same way.
 */
import type { WalEntry } from './records.js';

export interface Batch {
  entries: WalEntry[];
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
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
