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

export interface Wal {
  append(entry: WalEntry): Promise<void>;
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
