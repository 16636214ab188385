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

/**
 * The batches of a group commit before they are handed on: the open batch,
 * taking this event-loop turn's entries, and the closed ones, oldest first.
 * At the next turn the open batch is closed and `onTurn` called
 * (setImmediate lets every request that arrived in this turn join it).
 */
export class TurnBatches {
  current: Batch | null = null;
  readonly waiting: Batch[] = [];
  private scheduled = false;

  constructor(
    private readonly entriesMax: number,
    private readonly onTurn: () => void,
  ) {}

  /** Adds an entry to the open batch and returns that batch. */
  add(entry: WalEntry): Batch {
    this.current = addToOpenBatch(this.current, this.waiting, entry, this.entriesMax);
    this.schedule();
    return this.current;
  }

  /** Adds a batch of its own after everything appended so far. */
  push(batch: Batch): void {
    this.closeOpen();
    this.waiting.push(batch);
    this.schedule();
  }

  /** The batch appended last, open or closed. */
  last(): Batch | undefined {
    return this.current ?? this.waiting[this.waiting.length - 1];
  }

  rejectAll(error: unknown): void {
    for (const batch of this.waiting) batch.reject(error);
    this.current?.reject(error);
  }

  private closeOpen(): void {
    if (this.current !== null) {
      this.waiting.push(this.current);
      this.current = null;
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.closeOpen();
      this.onTurn();
    });
  }
}
