/**
 * The write-ahead log interface every implementation honours (the LMDB one
 * here; a fault-injecting one for simulation). `append` returns a promise
 * that resolves only when the entry is durable; entries appended in the
 * same batch share one transaction, one sync and one promise.
 */
import type { WalEntry } from './entry.js';

export interface WalStats {
  batches: number;
  /** Storage commits (each one sync); LMDB may put several batches in one. */
  commits: number;
  entries: number;
  events: number;
  lastBatchEntries: number;
  lastSyncMs: number;
  pendingEntries: number;
}

/**
 * Told once when an appended entry settles: with null once it is durable,
 * with the error when its commit failed (the process is then stopping).
 */
export type Settled = (error: unknown) => void;

export interface Wal {
  append(entry: WalEntry): Promise<void>;
  /**
   * `append`, and `settled` is called from the batch's one settlement,
   * before the reactions to the promise run and never before this returns:
   * the hot path's bookkeeping (the wallet actor's) costs no promise
   * reaction of its own.
   */
  appendSettled(entry: WalEntry, settled: Settled): Promise<void>;
  /** Resolves when everything appended so far is durable. */
  flushed(): Promise<void>;
  /**
   * For a read that has just looked at the store: a promise that resolves
   * once everything it could have seen is durable, or null when whatever a
   * read sees is durable already (a commit becomes visible only once
   * synced, or once its commit-log record is). A read's reply waits for it.
   */
  readBarrier(): Promise<void> | null;
  /** True when no more entries may be appended right now (global queue limit). */
  overloaded(): boolean;
  stats(): WalStats;
  close(): Promise<void>;
}
