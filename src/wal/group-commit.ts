/**
 * Group commit on LMDB. Entries from many actors accumulate in a batch; one
 * LMDB write transaction writes the batch's log events and table rows, and
 * one sync makes them durable; then every waiter of the batch is released.
 * While one batch is being written the next one fills up, so batches grow
 * with load and the cost of a sync is shared by everything that waited.
 *
 * A failed commit is fail-stop: `onFatal` is called and nothing in the
 * failed batch (or after it) is ever acknowledged.
 */
import { newBatch, type Batch } from './batch.js';
import type { Store } from './store.js';
import type { WalEntry } from './records.js';
import type { Wal, WalStats } from './wal.js';


export interface GroupCommitOptions {
  /** Most entries in one transaction. */
  batchEntriesMax?: number;
  /** Most entries waiting in total; beyond it the server answers 503. */
  pendingEntriesMax?: number;
  onFatal: (error: unknown) => void;
  onBatch?: (entries: number, syncMs: number) => void;
}


export class LmdbGroupCommit implements Wal {
  private readonly batchEntriesMax: number;
  private readonly pendingEntriesMax: number;
  private current: Batch | null = null;
  private readonly full: Batch[] = [];
  private writing: Batch | null = null;
  private scheduled = false;
  private failed: unknown = null;
  private closed = false;
  private pendingEntries = 0;
  private readonly counters = { batches: 0, entries: 0, events: 0, lastBatchEntries: 0, lastSyncMs: 0 };

  constructor(
    private readonly store: Store,
    private readonly options: GroupCommitOptions,
  ) {
    this.batchEntriesMax = options.batchEntriesMax ?? 4096;
    this.pendingEntriesMax = options.pendingEntriesMax ?? 200_000;
  }

  append(entry: WalEntry): Promise<void> {
    if (this.failed !== null) return Promise.reject(this.failed);
    if (this.closed) throw new Error('invariant: append after the WAL was closed');
    let batch = this.current;
    if (batch === null || batch.entries.length >= this.batchEntriesMax) {
      if (batch !== null) this.full.push(batch);
      batch = newBatch();
      this.current = batch;
    }
    batch.entries.push(entry);
    this.pendingEntries++;
    this.kick();
    return batch.promise;
  }

  flushed(): Promise<void> {
    if (this.current !== null) return this.current.promise;
    const last = this.full[this.full.length - 1] ?? this.writing;
    return last === null ? Promise.resolve() : last.promise;
  }

  overloaded(): boolean {
    return this.pendingEntries >= this.pendingEntriesMax;
  }

  stats(): WalStats {
    return { ...this.counters, pendingEntries: this.pendingEntries };
  }

  async close(): Promise<void> {
    await this.flushed();
    this.closed = true;
  }

  private kick(): void {
    if (this.writing !== null || this.scheduled) return;
    this.scheduled = true;
    // setImmediate lets every request that arrived in this event-loop turn
    // join the batch before it is written.
    setImmediate(() => {
      this.scheduled = false;
      this.writeNext();
    });
  }

  private writeNext(): void {
    const batch = this.full.shift() ?? this.current;
    if (batch === undefined || batch === null || this.failed !== null) return;
    if (batch === this.current) this.current = null;
    this.writing = batch;
    const { store } = this;
    const startedMs = performance.now();
    let events = 0;
    // A child transaction, so that if any write of the batch throws, the
    // whole batch is rolled back: lmdb-js commits whatever a plain
    // transaction callback wrote before it threw.
    const txn = store.root.childTransaction(() => {
      for (const entry of batch.entries) {
        for (const event of entry.events) {
          store.log.put(store.nextSeq++, event);
          events++;
        }
        if (entry.removes !== undefined) {
          for (const r of entry.removes) {
            if (r.ifAtMsBefore !== undefined) {
              const row = store.tables[r.table].get(r.key) as { atMs?: number } | undefined;
              if (row === undefined || row.atMs === undefined || row.atMs >= r.ifAtMsBefore) continue;
            }
            store.tables[r.table].remove(r.key);
          }
        }
        for (const put of entry.puts) store.tables[put.table].put(put.key, put.value);
      }
    });
    const durable = store.syncMode === 'overlapping' ? txn.then(() => store.root.flushed) : txn;
    durable.then(
      () => {
        const syncMs = performance.now() - startedMs;
        this.writing = null;
        this.pendingEntries -= batch.entries.length;
        this.counters.batches++;
        this.counters.entries += batch.entries.length;
        this.counters.events += events;
        this.counters.lastBatchEntries = batch.entries.length;
        this.counters.lastSyncMs = syncMs;
        this.options.onBatch?.(batch.entries.length, syncMs);
        batch.resolve();
        if (this.full.length > 0 || this.current !== null) this.writeNext();
      },
      (error: unknown) => {
        this.failed = error;
        batch.reject(error);
        for (const b of this.full) b.reject(error);
        this.current?.reject(error);
        this.options.onFatal(error);
      },
    );
  }
}
