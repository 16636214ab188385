/**
 * Group commit on LMDB. Entries from many actors accumulate in a batch for
 * one event-loop turn; the batch is then queued to lmdb-js's write thread,
 * which puts everything queued so far into one LMDB transaction, commits it
 * and syncs it (`overlappingSync: false`), then starts the next transaction
 * with whatever was queued meanwhile. Batches therefore grow with load, the
 * cost of a sync is shared by everything that waited for it, and the write
 * thread never waits for the busy main thread between two commits.
 *
 * Each batch's promise resolves, in order, only once its transaction is
 * synced. A failed commit is fail-stop: `onFatal` is called and nothing in
 * the failed batch or after it is ever acknowledged. Since several batches
 * may be queued at once, a later one must also never *land* after an
 * earlier one failed (its wallet rows were computed on top of the failed
 * one): every batch is queued on condition that the chain row's version is
 * the one its predecessor wrote, and writes the next version itself. A
 * batch whose predecessor did not land therefore writes nothing.
 */
import { asBinary, type Database, type Key } from 'lmdb';
import { assert } from '../platform/index.js';
import { newBatch, TurnBatches, type Batch } from './batch.js';
import { FatalReport } from './commit-cause.js';
import { CHAIN_KEY, type Store } from './store.js';
import { countEvent, loadOrderCounts, ORDER_COUNTS_KEY, type OrderCounts } from './order-counts.js';
import type { WalEntry } from './entry.js';
import type { Wal, WalStats } from './wal.js';
import { BATCH_ENTRIES_MAX, BATCHES_IN_FLIGHT_MAX, KEY_CHARS_MAX, LMDB_KEY_BYTES_MAX, PENDING_ENTRIES_MAX } from './limits.js';


export interface GroupCommitOptions {
  /** Most entries in one batch. */
  batchEntriesMax?: number;
  /** Most entries waiting in total; beyond it the server answers 503. */
  pendingEntriesMax?: number;
  /** Most batches queued to LMDB and not yet synced. */
  batchesInFlightMax?: number;
  onFatal: (error: unknown) => void;
  onBatch?: (entries: number, syncMs: number) => void;
  /**
   * Called when every batch has been acknowledged and none waits: nothing
   * is queued to LMDB, so a synchronous write transaction (the file
   * reserve's top-up) gets the write lock at once.
   */
  onIdle?: () => void;
}

interface Write {
  db: Database<any, any>;
  key: Key;
  /** The encoded record, or undefined for a remove. */
  value: unknown;
}

/** Where `eachWrite` sends a batch's writes. */
interface WriteSink {
  put(db: Database<any, any>, key: Key, value: unknown): void;
  remove(db: Database<any, any>, r: NonNullable<WalEntry['removes']>[number]): void;
}

interface Queued {
  batch: Batch;
  /** Called once the batch's transaction is flushed (sync mode 'log' only: its acknowledgement comes at the commit). */
  onFlushed: (() => void) | null;
  /** Queued as a write block (else written by a child-transaction callback). */
  fast: boolean;
  startedMs: number;
  events: number;
  done: boolean;
}

export class LmdbGroupCommit implements Wal {
  private readonly batchEntriesMax: number;
  private readonly pendingEntriesMax: number;
  private readonly batchesInFlightMax: number;
  /** Batches not yet handed to LMDB: the open one and the closed ones. */
  private readonly batches: TurnBatches;
  /** Batches handed to LMDB, not yet acknowledged, oldest first. */
  private readonly inFlight: Queued[] = [];
  /** The chain version the last queued batch writes. */
  private chainVersion: number;
  /** Orders by status after the last queued batch (its commit writes them). */
  private readonly orderCounts: OrderCounts;
  /** `appendTogether`'s flush callbacks, until their batch is queued. */
  private readonly flushCallbacks = new Map<Batch, () => void>();
  private failed: unknown = null;
  private fatal: FatalReport | null = null;
  private closed = false;
  private pendingEntries = 0;
  private readonly counters = { batches: 0, commits: 0, entries: 0, events: 0, lastBatchEntries: 0, lastSyncMs: 0 };

  constructor(
    private readonly store: Store,
    private readonly options: GroupCommitOptions,
  ) {
    this.batchEntriesMax = options.batchEntriesMax ?? BATCH_ENTRIES_MAX;
    this.pendingEntriesMax = options.pendingEntriesMax ?? PENDING_ENTRIES_MAX;
    this.batchesInFlightMax = options.batchesInFlightMax ?? BATCHES_IN_FLIGHT_MAX;
    this.batches = new TurnBatches(this.batchEntriesMax, () => this.queueWaiting());
    const entry = store.chain.getEntry(CHAIN_KEY);
    if (entry === undefined) store.chain.putSync(CHAIN_KEY, 0, 0);
    this.chainVersion = entry?.version ?? 0;
    this.orderCounts = loadOrderCounts(store);
    store.root.on('aftercommit', () => {
      this.counters.commits++;
    });
  }

  append(entry: WalEntry): Promise<void> {
    if (this.failed !== null) return Promise.reject(this.failed);
    assert(!this.closed, 'no append after the WAL was closed');
    // In sync mode 'log' a commit is acknowledged before LMDB syncs it, so
    // only what the commit log already holds may come this way.
    assert(this.store.syncMode !== 'log', "in sync mode 'log' entries reach LMDB only through the commit log (appendTogether)");
    const batch = this.batches.add(entry);
    this.pendingEntries++;
    return batch.promise;
  }

  /**
   * Appends entries that must land in one transaction, as a batch of their
   * own (the commit log's records, with the position they bring LMDB to).
   * In sync mode 'log' its promise resolves when the transaction is
   * committed, and `onFlushed` is called once it is flushed.
   */
  appendTogether(entries: WalEntry[], onFlushed: () => void): Promise<void> {
    if (this.failed !== null) return Promise.reject(this.failed);
    assert(!this.closed, 'no append after the WAL was closed');
    const batch = newBatch();
    batch.entries.push(...entries);
    this.flushCallbacks.set(batch, onFlushed);
    this.batches.push(batch);
    this.pendingEntries += entries.length;
    return batch.promise;
  }

  flushed(): Promise<void> {
    const last = this.batches.last() ?? this.inFlight[this.inFlight.length - 1]?.batch;
    return last === undefined ? Promise.resolve() : last.promise;
  }

  readBarrier(): Promise<void> | null {
    // lmdb-js overlapping sync makes a commit visible before it is flushed:
    // `flushed` resolves once every commit queued so far, so every one a read
    // can have seen, is on disk.
    if (this.store.syncMode !== 'overlapping') return null;
    return Promise.resolve(this.store.root.flushed).then(() => undefined);
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

  private queueWaiting(): void {
    while (this.failed === null && this.batches.waiting.length > 0 && this.inFlight.length < this.batchesInFlightMax) {
      const batch = this.batches.waiting[0]!;
      const fast = queueable(batch.entries);
      // A batch that must be written by a callback is queued alone: once
      // everything before it is acknowledged, and nothing after it until it
      // is (it is rare: see `queueable`). lmdb-js runs transaction callbacks
      // apart from the queued write blocks, so a block queued behind one
      // could be checked against the chain before the callback wrote it.
      // (So a child batch in flight is always the only one: inFlight[0].)
      if (this.inFlight.length > 0 && (!fast || !this.inFlight[0]!.fast)) return;
      this.batches.waiting.shift();
      this.queue(batch, fast);
    }
  }

  private queue(batch: Batch, fast: boolean): void {
    const { store } = this;
    const onFlushed = this.flushCallbacks.get(batch) ?? null;
    this.flushCallbacks.delete(batch);
    const item: Queued = { batch, onFlushed, fast, startedMs: performance.now(), events: 0, done: false };
    const expected = this.chainVersion;
    const next = expected + 1;
    this.chainVersion = next;
    this.inFlight.push(item);
    let written: Promise<boolean>;
    try {
      if (fast) {
        // Everything that can throw (encoding every record) happens first;
        // then the batch is queued as one conditional lmdb-js write block,
        // which cannot throw halfway. The write thread inserts, commits and
        // syncs on its own; an error there aborts the whole transaction, so
        // the block lands whole or not at all, and only if the chain version
        // is still `expected`.
        const writes = this.encode(batch.entries, item);
        written = store.chain.ifVersion(CHAIN_KEY, expected, () => {
          for (const w of writes) {
            if (w.value === undefined) w.db.remove(w.key);
            else w.db.put(w.key, w.value);
          }
          store.chain.put(CHAIN_KEY, next, next);
        });
      } else {
        // A callback in a child transaction rolls back entirely if any write
        // throws (lmdb-js commits whatever a plain transaction callback wrote
        // before it threw).
        written = store.root.childTransaction(() => {
          this.writeInTransaction(batch.entries, item);
          store.chain.put(CHAIN_KEY, next, next);
          return true;
        });
      }
    } catch (error) {
      // Nothing of this batch was queued (or the child transaction never
      // started): stop, so that nothing is acknowledged from here on.
      this.fail(error);
      return;
    }
    // In sync mode 'log' the batch is already durable in the commit log: it
    // is acknowledged once committed (visible to reads), and its flush only
    // lets the log reuse its space.
    const durable = store.syncMode === 'overlapping' ? flushedAfter(store, written) : written;
    if (store.syncMode === 'log' && onFlushed !== null) {
      flushedAfter(store, written).then(
        (landed) => {
          if (landed === true && this.failed === null) onFlushed();
        },
        (error: unknown) => this.fail(error),
      );
    }
    durable.then(
      (landed) => {
        if (this.failed !== null) return;
        if (landed !== true) {
          this.fail(new Error(`group commit ${next} was not written: the commit before it did not land`));
          return;
        }
        item.done = true;
        this.acknowledge();
      },
      (error: unknown) => this.fail(error),
    );
  }

  /** The batch's writes with every value already encoded (a remove has no value). */
  private encode(entries: readonly WalEntry[], item: Queued): Write[] {
    const writes: Write[] = [];
    this.eachWrite(entries, item, {
      put: (db, key, value) => writes.push({ db, key, value: encoded(db, value) }),
      remove: (db, r) => writes.push({ db, key: r.key, value: undefined }),
    });
    return writes;
  }

  /** Writes the batch inside a transaction callback (a batch with a key that may not fit). */
  private writeInTransaction(entries: readonly WalEntry[], item: Queued): void {
    this.eachWrite(entries, item, {
      put: (db, key, value) => db.put(key, value),
      remove: (db, r) => db.remove(r.key),
    });
  }

  /**
   * Every write of a batch, in order: each entry's log events (numbered
   * from `nextSeq`), removes and puts, then the orders-by-status row when
   * the batch's order events changed it.
   */
  private eachWrite(entries: readonly WalEntry[], item: Queued, to: WriteSink): void {
    const { store } = this;
    let countsChanged = false;
    for (const entry of entries) {
      for (const event of entry.events) {
        to.put(store.log, store.nextSeq++, event);
        item.events++;
        if (countEvent(this.orderCounts, event)) countsChanged = true;
      }
      if (entry.removes !== undefined) for (const r of entry.removes) to.remove(store.tables[r.table], r);
      for (const put of entry.puts) to.put(store.tables[put.table], put.key, put.value);
    }
    if (countsChanged) to.put(store.tables.meta, ORDER_COUNTS_KEY, { ...this.orderCounts });
  }

  /** Acknowledges synced batches in order, then queues what waited. */
  private acknowledge(): void {
    while (this.inFlight.length > 0 && this.inFlight[0]!.done) {
      const { batch, startedMs, events } = this.inFlight.shift()!;
      const syncMs = performance.now() - startedMs;
      this.pendingEntries -= batch.entries.length;
      this.counters.batches++;
      this.counters.entries += batch.entries.length;
      this.counters.events += events;
      this.counters.lastBatchEntries = batch.entries.length;
      this.counters.lastSyncMs = syncMs;
      this.options.onBatch?.(batch.entries.length, syncMs);
      batch.resolve();
    }
    if (this.inFlight.length === 0 && this.batches.waiting.length === 0 && this.failed === null) this.options.onIdle?.();
    this.queueWaiting();
  }

  private fail(error: unknown): void {
    if (this.failed !== null) {
      this.fatal?.also(error);
      return;
    }
    this.failed = error;
    for (const { batch } of this.inFlight) batch.reject(error);
    this.batches.rejectAll(error);
    // Nothing is acknowledged from here on; the fatal report waits only
    // for lmdb-js to name the system error behind a failed commit.
    this.fatal = new FatalReport(error, (e) => this.options.onFatal(e));
  }
}

/**
 * In overlapping-sync mode a write's promise resolves when its transaction
 * is committed, and its `flushed` (lmdb-js `separateFlushed`) when that
 * transaction is synced. `root.flushed` would be the flush of whatever
 * transaction is open when asked, possibly a later one: durable too, but a
 * commit later than needed. A failed commit rejects `written`, whose flush
 * then never comes.
 */
function flushedAfter(store: Store, written: Promise<boolean>): Promise<boolean> {
  const own = (written as Promise<boolean> & { flushed?: PromiseLike<unknown> }).flushed;
  return Promise.all([written, own ?? written.then(() => store.root.flushed)]).then(([landed]) => landed);
}

/**
 * A record encoded by its table's own msgpack encoder (with the table's
 * shared structures), wrapped so that lmdb-js stores the bytes as they are.
 * Encoding may throw (and may save new shared structures in a transaction
 * of its own), so it is done before any write of the batch is queued.
 */
function encoded(db: Database<any, any>, value: unknown): unknown {
  const { encoder } = db as unknown as { encoder?: { encode(value: unknown): Uint8Array } };
  return encoder === undefined ? value : asBinary(encoder.encode(value));
}

function keyPart(part: unknown): number {
  if (typeof part === 'number') return Number.isFinite(part) ? 0 : -1;
  if (typeof part === 'string') return part.length === 0 ? -1 : part.length;
  return -1;
}

/** A key lmdb-js surely accepts: a finite number, a non-empty short string, or a short non-empty array of those. */
function keyFits(key: unknown): boolean {
  if (Array.isArray(key)) {
    if (key.length === 0 || key.length > 8) return false;
    let chars = 0;
    for (const part of key) {
      const n = keyPart(part);
      if (n < 0) return false;
      chars += n;
    }
    return chars <= KEY_CHARS_MAX;
  }
  const n = keyPart(key);
  return n >= 0 && n <= KEY_CHARS_MAX;
}

/**
 * Whether a batch can be queued as asynchronous lmdb-js writes: no key that
 * could make a put throw halfway through queueing the batch. Values are the
 * service's own records, which msgpack always encodes. No batch reads
 * inside its commit (the Idempotency-Key sweep decides before it appends),
 * so every batch the service makes is queued this way.
 */
export function queueable(entries: readonly WalEntry[]): boolean {
  return keysFit(entries, keyFits);
}

/**
 * Whether every key of a batch is one LMDB surely takes. The commit log
 * checks it before a record is written: a record LMDB could not apply
 * would stop every restart that replays it.
 */
export function keysFit(entries: readonly WalEntry[], fits: (key: unknown) => boolean = (key) => (Buffer.isBuffer(key) ? key.length > 0 && key.length <= LMDB_KEY_BYTES_MAX : keyFits(key))): boolean {
  for (const entry of entries) {
    if (entry.removes !== undefined) for (const r of entry.removes) if (!fits(r.key)) return false;
    for (const put of entry.puts) if (!fits(put.key)) return false;
  }
  return true;
}
