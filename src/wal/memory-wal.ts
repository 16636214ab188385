/**
 * A deterministic, fault-injecting write-ahead log held in memory, for
 * simulation tests. It honours the `Wal` contract exactly like the LMDB group
 * commit: entries appended before a sync share one batch and one promise, and
 * that promise resolves only once the batch is in the durable image.
 *
 * It never schedules anything by itself: no timers, no setImmediate. A batch
 * becomes durable only when the simulation calls `syncNext()` (or `step()`,
 * `syncAll()`), so the order of every event in a run is decided by the test
 * and a seed reproduces a run exactly.
 *
 * It keeps two things apart, as a disk does:
 * - the durable image: the log events (with their sequence numbers) and the
 *   tables, as a restarted process would find them;
 * - the unsynced tail: batches appended but not yet synced. `crash()` and
 *   `dropUnsynced()` throw the tail away; its promises then never settle,
 *   because the process that waited for them is gone.
 *
 * Values are deep-copied on the way in and on the way out (as LMDB
 * serialises them), so a caller mutating an object after `append` or after a
 * read can never change what is durable.
 */
import { assert } from '../platform/index.js';
import { addToOpenBatch, failedAppend, joined, type Batch } from './batch.js';
import type { LogEvent } from '../ledger/index.js';
import { TABLE_NAMES, type TableName, type WalEntry } from './entry.js';
import type { Settled, Wal, WalStats } from './wal.js';
import { BATCH_ENTRIES_MAX, PENDING_ENTRIES_MAX } from './limits.js';


export type TableKey = string | number | Buffer | (string | number)[];

/** What a restarted process finds on disk. Table keys are `tableKeyString(key)`. */
export interface DurableImage {
  events: LogEvent[];
  tables: Record<TableName, Map<string, unknown>>;
}

export interface MemoryWalOptions {
  /** Called once when a commit fails; the WAL is fail-stop from then on. */
  onFatal: (error: unknown) => void;
  /** Most entries in one batch (as `batchEntriesMax` of the LMDB group commit). */
  batchEntriesMax?: number;
  /** Most entries waiting in total; beyond it `overloaded()` is true. */
  pendingEntriesMax?: number;
  /** The durable state to start from (a restart); deep-copied. Empty when absent. */
  initial?: DurableImage;
}

export interface CommitFailure {
  /**
   * True when the batch did reach the disk although the sync reported an
   * error (the durable image then holds the batch, but nobody is told). False
   * (the default) when nothing of the batch is durable.
   */
  durable?: boolean;
}


/**
 * The stable string form of a table key: JSON, so the number 1 and the
 * string "1" stay different keys (as they are in LMDB) and an array key is
 * compared element by element.
 */
export function tableKeyString(key: TableKey): string {
  return JSON.stringify(key);
}

export function emptyImage(): DurableImage {
  const tables = {} as Record<TableName, Map<string, unknown>>;
  for (const name of TABLE_NAMES) tables[name] = new Map();
  return { events: [], tables };
}

export function copyImage(image: DurableImage): DurableImage {
  const tables = {} as Record<TableName, Map<string, unknown>>;
  for (const name of TABLE_NAMES) {
    const source = image.tables[name];
    tables[name] = source === undefined ? new Map() : structuredClone(source);
  }
  return { events: structuredClone(image.events), tables };
}


export class MemoryWal implements Wal {
  private readonly batchEntriesMax: number;
  private readonly pendingEntriesMax: number;
  private readonly image: DurableImage;
  /** Sealed batches, oldest first, waiting for their sync. */
  private readonly sealed: Batch[] = [];
  /** The batch new entries join; null until the next append. */
  private current: Batch | null = null;
  private failed: unknown = null;
  private armedFailure: { error: unknown; durable: boolean } | null = null;
  private crashedFlag = false;
  private closed = false;
  private pendingEntries = 0;
  private readonly counters = { batches: 0, commits: 0, entries: 0, events: 0, lastBatchEntries: 0, lastSyncMs: 0 };

  constructor(private readonly options: MemoryWalOptions) {
    this.batchEntriesMax = options.batchEntriesMax ?? BATCH_ENTRIES_MAX;
    this.pendingEntriesMax = options.pendingEntriesMax ?? PENDING_ENTRIES_MAX;
    assert(Number.isSafeInteger(this.batchEntriesMax) && this.batchEntriesMax >= 1, 'batchEntriesMax must be a positive integer', this.batchEntriesMax);
    assert(Number.isSafeInteger(this.pendingEntriesMax) && this.pendingEntriesMax >= 1, 'pendingEntriesMax must be a positive integer', this.pendingEntriesMax);
    this.image = options.initial === undefined ? emptyImage() : copyImage(options.initial);
  }

  // --- The Wal interface -------------------------------------------------

  append(entry: WalEntry): Promise<void> {
    return this.appendSettled(entry);
  }

  appendSettled(entry: WalEntry, settled?: Settled): Promise<void> {
    assert(!this.crashedFlag, 'no append after the simulated process crashed');
    return this.failed === null ? joined(this.add(entry), settled) : failedAppend(this.failed, settled);
  }

  private add(entry: WalEntry): Batch {
    assert(!this.closed, 'no append after the WAL was closed');
    // Copied now, as LMDB serialises at write time: what is durable is what
    // was appended, whatever the caller does with its objects afterwards.
    this.current = addToOpenBatch(this.current, this.sealed, structuredClone(entry), this.batchEntriesMax);
    this.pendingEntries++;
    return this.current;
  }

  /** Nothing is visible before its batch is acknowledged. */
  readBarrier(): null {
    return null;
  }

  flushed(): Promise<void> {
    const last = this.current ?? this.sealed[this.sealed.length - 1];
    if (last !== undefined) return last.promise;
    return this.failed === null ? Promise.resolve() : Promise.reject(this.failed);
  }

  overloaded(): boolean {
    return this.pendingEntries >= this.pendingEntriesMax;
  }

  stats(): WalStats {
    return { ...this.counters, pendingEntries: this.pendingEntries };
  }

  /** Waits for everything appended so far, like the LMDB one: the simulation must keep syncing. */
  async close(): Promise<void> {
    await this.flushed();
    this.closed = true;
  }

  // --- Simulation controls -----------------------------------------------

  /** Entries appended but not yet durable. */
  get unsyncedEntries(): number {
    return this.pendingEntries;
  }

  /** Batches waiting for a sync (the open one included). */
  get unsyncedBatches(): number {
    return this.sealed.length + (this.current === null ? 0 : 1);
  }

  get crashed(): boolean {
    return this.crashedFlag;
  }

  /** The error that stopped this WAL, or null while it works. */
  get failure(): unknown {
    return this.failed;
  }

  /**
   * Closes the open batch: entries appended from now on go to a new batch
   * with its own promise (what happens when the LMDB writer picks a batch up).
   */
  seal(): void {
    if (this.current === null) return;
    this.sealed.push(this.current);
    this.current = null;
  }

  /**
   * Completes the sync of the oldest unsynced batch: applies it to the
   * durable image and resolves its promise (or, when a failure is armed,
   * rejects it and everything after it). Returns the number of entries
   * synced; 0 when there was nothing to sync or the WAL has stopped.
   */
  syncNext(): number {
    if (this.crashedFlag || this.failed !== null) return 0;
    const batch = this.sealed.shift() ?? this.current;
    if (batch === null) return 0;
    if (batch === this.current) this.current = null;
    const failure = this.armedFailure;
    if (failure !== null) {
      this.armedFailure = null;
      if (failure.durable) this.apply(batch);
      this.fail(batch, failure.error);
      return 0;
    }
    const events = this.apply(batch);
    this.pendingEntries -= batch.entries.length;
    this.counters.batches++;
    this.counters.commits++;
    this.counters.entries += batch.entries.length;
    this.counters.events += events;
    this.counters.lastBatchEntries = batch.entries.length;
    this.counters.lastSyncMs = 0;
    batch.resolve();
    return batch.entries.length;
  }

  /** One tick of the simulated disk: the next sync completes. */
  step(): number {
    return this.syncNext();
  }

  /** Syncs every unsynced batch, oldest first. Returns the entries synced. */
  syncAll(): number {
    let total = 0;
    // Bounded: each round removes one batch, and no append can happen
    // between rounds (this loop is synchronous).
    for (let rounds = this.unsyncedBatches; rounds > 0; rounds--) total += this.syncNext();
    return total;
  }

  /**
   * Makes the next sync fail: that batch and every later one reject,
   * `onFatal` is called, and the WAL refuses to acknowledge anything again
   * (fail-stop, as the LMDB group commit).
   */
  failNextCommit(error: unknown, failure: CommitFailure = {}): void {
    this.armedFailure = { error, durable: failure.durable ?? false };
  }

  /**
   * Loses every unsynced batch, as a power cut would. Their promises never
   * settle. Returns the number of entries lost. The WAL itself keeps working
   * (for a test that models a disk losing its cache under a live process).
   */
  dropUnsynced(): number {
    const lost = this.pendingEntries;
    this.sealed.length = 0;
    this.current = null;
    this.pendingEntries = 0;
    return lost;
  }

  /**
   * The process dies: every unsynced batch is lost (its promise never
   * settles) and this instance refuses any further append. A restart builds
   * a new MemoryWal from `durableImage()`.
   */
  crash(): number {
    const lost = this.dropUnsynced();
    this.crashedFlag = true;
    this.armedFailure = null;
    return lost;
  }

  /** A deep copy of the durable state, for a restart or for checking invariants. */
  durableImage(): DurableImage {
    return copyImage(this.image);
  }

  /** Number of durable log events; the next event gets sequence number `durableEvents + 1`. */
  get durableEvents(): number {
    return this.image.events.length;
  }

  /** One durable row (a copy), or undefined: what a read of the tables would return. */
  get(table: TableName, key: TableKey): unknown {
    const value = this.image.tables[table].get(tableKeyString(key));
    return value === undefined ? undefined : structuredClone(value);
  }

  // --- Internals ---------------------------------------------------------

  /**
   * Writes one batch into the durable image, entry by entry: events, then
   * removes, then puts, as the LMDB group commit does.
   */
  private apply(batch: Batch): number {
    let events = 0;
    for (const entry of batch.entries) {
      for (const event of entry.events) {
        this.image.events.push(event);
        events++;
      }
      if (entry.removes !== undefined) {
        for (const r of entry.removes) {
          const table = this.image.tables[r.table];
          table.delete(tableKeyString(r.key));
        }
      }
      for (const put of entry.puts) this.image.tables[put.table].set(tableKeyString(put.key), put.value);
    }
    return events;
  }

  private fail(batch: Batch, error: unknown): void {
    this.failed = error;
    batch.reject(error);
    for (const b of this.sealed) b.reject(error);
    this.current?.reject(error);
    this.sealed.length = 0;
    this.current = null;
    this.options.onFatal(error);
  }
}
