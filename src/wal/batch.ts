/**
 * A group-commit batch: entries that share one commit, one sync and one
 * settlement. Shared by every WAL implementation so they batch the same way.
 */
import type { WalEntry } from './entry.js';
import type { Settled } from './wal.js';

export interface Batch {
  entries: WalEntry[];
  promise: Promise<void>;
  /**
   * Told of the settlement, in the order they were added, before the
   * promise's reactions run (`Wal.appendSettled`): one loop over the
   * batch's waiters instead of a promise reaction each.
   */
  listeners: Settled[];
  /** Settles the batch (once; a later call does nothing). */
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
  let resolvePromise!: () => void;
  let rejectPromise!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolvePromise = res;
    rejectPromise = rej;
  });
  // Waiters attach their own handlers; this keeps a failed batch from also
  // being reported as an unhandled rejection (the process is stopping anyway).
  promise.catch(() => {});
  const listeners: Settled[] = [];
  let settled = false;
  const settle = (error: unknown): void => {
    if (settled) return;
    settled = true;
    for (const listener of listeners) listener(error);
    if (error === null) resolvePromise();
    else rejectPromise(error);
  };
  return { entries: [], promise, listeners, resolve: () => settle(null), reject: (error) => settle(error ?? new Error('a commit failed')) };
}

/** An append's promise: the batch's, with `settled` (if given) among its listeners. */
export function joined(batch: Batch, settled: Settled | undefined): Promise<void> {
  if (settled !== undefined) batch.listeners.push(settled);
  return batch.promise;
}

/**
 * What an append returns to a WAL that has already failed: its error, to
 * the promise and, in a later microtask (never before the caller has its
 * promise in hand), to the listener.
 */
export function failedAppend(error: unknown, settled?: Settled): Promise<void> {
  if (settled !== undefined) queueMicrotask(() => settled(error));
  return Promise.reject(error);
}

/**
 * The batches of a WAL before they are handed on, oldest first: the open
 * batch, which takes every new entry, and closed ones before it (full ones,
 * and batches that must land on their own). The open batch stays open until
 * the WAL takes it, so it keeps growing for as long as the WAL is still
 * busy with what it took before: batches grow with load. `schedule` asks
 * for `onReady` at the end of the current event-loop turn (setImmediate,
 * after every request that arrived in this turn has joined); the WAL calls
 * it on each append and again when it has room for more.
 */
export class PendingBatches {
  private open: Batch | null = null;
  private readonly closed: Batch[] = [];
  private scheduled = false;

  constructor(
    private readonly entriesMax: number,
    private readonly onReady: () => void,
  ) {}

  /** Adds an entry to the open batch and returns that batch. */
  add(entry: WalEntry): Batch {
    this.open = addToOpenBatch(this.open, this.closed, entry, this.entriesMax);
    this.schedule();
    return this.open;
  }

  /** Adds a batch of its own after everything appended so far. */
  push(batch: Batch): void {
    this.closeOpen();
    this.closed.push(batch);
    this.schedule();
  }

  /** The batch appended last, open or closed. */
  last(): Batch | undefined {
    return this.open ?? this.closed[this.closed.length - 1];
  }

  /** The oldest batch not yet taken. */
  first(): Batch | undefined {
    return this.closed[0] ?? this.open ?? undefined;
  }

  get empty(): boolean {
    return this.open === null && this.closed.length === 0;
  }

  /**
   * Takes the oldest batches, closing the open one if it comes to it, while
   * `accepts` takes each and their entries stay within `entriesMax` (the
   * first is always taken). Returns them oldest first.
   */
  take(entriesMax: number, accepts: (batch: Batch) => boolean = () => true): Batch[] {
    const taken: Batch[] = [];
    let entries = 0;
    for (;;) {
      const next = this.first();
      if (next === undefined) break;
      if (taken.length > 0 && (entries + next.entries.length > entriesMax || !accepts(next))) break;
      if (this.closed.length === 0) this.open = null;
      else this.closed.shift();
      taken.push(next);
      entries += next.entries.length;
    }
    return taken;
  }

  rejectAll(error: unknown): void {
    for (const batch of this.closed) batch.reject(error);
    this.open?.reject(error);
  }

  /** Calls `onReady` at the end of this event-loop turn, once however often it is asked. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.onReady();
    });
  }

  private closeOpen(): void {
    if (this.open !== null) {
      this.closed.push(this.open);
      this.open = null;
    }
  }
}
