/**
 * Group commit on LMDB. Entries from many actors join one open batch. At
 * the end of an event-loop turn everything waiting becomes one commit: one
 * conditional write block queued to lmdb-js's write thread, which puts
 * every block queued so far into one LMDB transaction, commits it and
 * syncs it (`overlappingSync: false`), then starts the next transaction
 * with whatever was queued meanwhile. So transactions grow with load, the
 * cost of a sync is shared by everything that waited for it, the write
 * thread never waits for the busy main thread between two commits, and a
 * lone entry on an idle server waits for its own sync only. When
 * COMMITS_IN_FLIGHT_MAX commits are queued and not yet synced (a disk far
 * behind the event loop), the open batch stays open and takes everything
 * that arrives until one is acknowledged, then goes as one commit.
 *
 * Each batch's promise resolves, in order, only once its transaction is
 * synced: one settlement per batch, however many entries share it. A
 * failed commit is fail-stop: `onFatal` is called and nothing in the failed
 * commit or after it is ever acknowledged. When several commits are queued
 * at once, a later one must also never *land* after an earlier one failed
 * (its wallet rows were computed on top of the failed one): every commit is
 * queued on condition that the chain row's version is the one its
 * predecessor wrote, and writes the next version itself. A commit whose
 * predecessor did not land therefore writes nothing.
 */
import type { Database, Key } from 'lmdb';
import { assert } from '../platform/index.js';
import { failedAppend, joined, newBatch, PendingBatches, type Batch } from './batch.js';
import { FatalReport } from './commit-cause.js';
import { CHAIN_KEY, type Store } from './store.js';
import { countEvent, loadOrderCounts, ORDER_COUNTS_KEY, type OrderCounts } from './order-counts.js';
import { WriteValues } from './write-values.js';
import type { WalEntry } from './entry.js';
import type { Settled, Wal, WalStats } from './wal.js';
import { BATCH_ENTRIES_MAX, COMMITS_IN_FLIGHT_MAX, KEY_CHARS_MAX, LMDB_KEY_BYTES_MAX, PENDING_ENTRIES_MAX } from './limits.js';


export interface GroupCommitOptions {
  /** Most entries in one commit. */
  batchEntriesMax?: number;
  /** Most entries waiting in total; beyond it the server answers 503. */
  pendingEntriesMax?: number;
  /** Most commits queued to LMDB and not yet synced. */
  commitsInFlightMax?: number;
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

/** One commit queued to LMDB: the batches it carries, oldest first. */
interface Queued {
  batches: Batch[];
  entries: number;
  /** Queued as a write block (else written by a child-transaction callback). */
  fast: boolean;
  startedMs: number;
  events: number;
  done: boolean;
}

export class LmdbGroupCommit implements Wal {
  private readonly batchEntriesMax: number;
  private readonly pendingEntriesMax: number;
  private readonly commitsInFlightMax: number;
  /** Batches not yet handed to LMDB: the open one and the closed ones. */
  private readonly batches: PendingBatches;
  /** Commits handed to LMDB, not yet acknowledged, oldest first. */
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
    this.commitsInFlightMax = options.commitsInFlightMax ?? COMMITS_IN_FLIGHT_MAX;
    this.batches = new PendingBatches(this.batchEntriesMax, () => this.queueWaiting());
    const entry = store.chain.getEntry(CHAIN_KEY);
    if (entry === undefined) store.chain.putSync(CHAIN_KEY, 0, 0);
    this.chainVersion = entry?.version ?? 0;
    this.orderCounts = loadOrderCounts(store);
    store.root.on('aftercommit', () => {
      this.counters.commits++;
    });
  }

  append(entry: WalEntry): Promise<void> {
    return this.appendSettled(entry);
  }

  appendSettled(entry: WalEntry, settled?: Settled): Promise<void> {
    return this.failed === null ? joined(this.add(entry), settled) : failedAppend(this.failed, settled);
  }

  private add(entry: WalEntry): Batch {
    assert(!this.closed, 'no append after the WAL was closed');
    // In sync mode 'log' a commit is acknowledged before LMDB syncs it, so
    // only what the commit log already holds may come this way.
    assert(this.store.syncMode !== 'log', "in sync mode 'log' entries reach LMDB only through the commit log (appendTogether)");
    this.pendingEntries++;
    return this.batches.add(entry);
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
    const batches = this.inFlight[this.inFlight.length - 1]?.batches;
    const last = this.batches.last() ?? batches?.[batches.length - 1];
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

  /** Queues what waits as commits, while fewer than `commitsInFlightMax` are in flight. */
  private queueWaiting(): void {
    while (this.failed === null && this.inFlight.length < this.commitsInFlightMax) {
      const first = this.batches.first();
      if (first === undefined) return;
      const fast = queueable(first.entries);
      // A batch that must be written by a callback is committed alone: once
      // everything before it is acknowledged, and nothing after it until it
      // is (it is rare: see `queueable`). lmdb-js runs transaction callbacks
      // apart from the queued write blocks, so a block queued behind one
      // could be checked against the chain before the callback wrote it.
      // (So a child commit in flight is always the only one: inFlight[0].)
      if (this.inFlight.length > 0 && (!fast || !this.inFlight[0]!.fast)) return;
      // `take(0)` takes the first batch alone.
      const taken = fast ? this.batches.take(this.batchEntriesMax, (b) => queueable(b.entries)) : this.batches.take(0);
      this.queue(taken, fast);
    }
  }

  /** The entries of a commit's batches, in order, and the flush callbacks `appendTogether` gave them. */
  private contents(batches: readonly Batch[]): { entries: WalEntry[]; onFlushed: (() => void)[] } {
    const onFlushed: (() => void)[] = [];
    const entries: WalEntry[] = [];
    for (const batch of batches) {
      const callback = this.flushCallbacks.get(batch);
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: in sync mode 'log' every batch comes from appendTogether and has a callback (append refuses that mode), and in the other modes the flush callbacks are never called
      if (callback !== undefined) {
        onFlushed.push(callback);
        this.flushCallbacks.delete(batch);
      }
      for (const entry of batch.entries) entries.push(entry);
    }
    return { entries, onFlushed };
  }

  private queue(batches: Batch[], fast: boolean): void {
    const { store } = this;
    const { entries, onFlushed } = this.contents(batches);
    const item: Queued = { batches, entries: entries.length, fast, startedMs: performance.now(), events: 0, done: false };
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
        const writes = this.encode(entries, item);
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
          this.writeInTransaction(entries, item);
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
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: in sync mode 'overlapping' a reply at the commit instead of the flush shows only as a reply before the sync, which test/crash/sync-before-reply.test.ts (overlapping) catches; in the other modes waiting for the flush as well only delays the reply
    const durable = store.syncMode === 'overlapping' ? flushedAfter(store, written) : written;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,LogicalOperator: equivalent: only sync mode 'log' appends with flush callbacks (appendTogether, from the commit log), and there every batch has one; following a flush with no callback to call does nothing
    if (store.syncMode === 'log' && onFlushed.length > 0) this.passFlushOn(written, onFlushed);
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

  /** Calls `appendTogether`'s flush callbacks once the commit is flushed, unless the group commit has failed by then. */
  private passFlushOn(written: Promise<boolean>, onFlushed: readonly (() => void)[]): void {
    flushedAfter(this.store, written).then(
      () => {
        // A commit that did not land has already failed the group commit,
        // in the reaction to `written`, which runs before this one.
        if (this.failed === null) for (const callback of onFlushed) callback();
      },
      // Stryker disable next-line ArrowFunction: a flush that fails after its commit landed is caused only by test/crash/failed-sync.test.ts (sync mode log, LMDB's flush behind the commit log); a commit that failed has already failed the group commit through `written`
      (error: unknown) => this.fail(error),
    );
  }

  /** The batch's writes with every value as lmdb-js is to take it (write-values.ts; a remove has no value). */
  private encode(entries: readonly WalEntry[], item: Queued): Write[] {
    const writes: Write[] = [];
    const values = new WriteValues(this.store, entries);
    this.eachWrite(entries, item, {
      put: (db, key, value) => writes.push({ db, key, value: values.of(db, value) }),
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
    // Stryker disable next-line BooleanLiteral: equivalent: the counts row always holds the counts of the last landed batch (loadOrderCounts writes it at start), so writing it unchanged stores the same value
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

  /**
   * Acknowledges synced commits in order. What waited is queued at the end
   * of this turn, as every batch is, so that the open batch still takes
   * the requests this turn reads. It runs only from the reaction of a
   * commit that landed while nothing had failed, and nothing it calls
   * (`onBatch`, the batches' listeners) fails the group commit.
   */
  private acknowledge(): void {
    while (this.inFlight.length > 0 && this.inFlight[0]!.done) {
      const { batches, entries, startedMs, events } = this.inFlight.shift()!;
      const syncMs = performance.now() - startedMs;
      this.pendingEntries -= entries;
      this.counters.batches++;
      this.counters.entries += entries;
      this.counters.events += events;
      this.counters.lastBatchEntries = entries;
      this.counters.lastSyncMs = syncMs;
      this.options.onBatch?.(entries, syncMs);
      for (const batch of batches) batch.resolve();
    }
    if (!this.batches.empty) this.batches.schedule();
    else if (this.inFlight.length === 0) this.options.onIdle?.();
  }

  private fail(error: unknown): void {
    if (this.failed !== null) {
      // Stryker disable next-line OptionalChaining: equivalent: `fatal` is set in the same synchronous step as `failed` (the listeners of the batches rejected in between never fail the group commit), so it is never null here
      this.fatal?.also(error);
      return;
    }
    this.failed = error;
    for (const { batches } of this.inFlight) for (const batch of batches) batch.reject(error);
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
  // Stryker disable next-line LogicalOperator,ArrowFunction: equivalent: only stores opened with separateFlushed (sync modes 'overlapping' and 'log') come here, so every write has its own flush; the root's flush, taken after the commit, is that one or a later one
  return Promise.all([written, own ?? written.then(() => store.root.flushed)]).then(([landed]) => landed);
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
