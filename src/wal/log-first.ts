/**
 * The commit path of sync mode 'log': the commit log first, LMDB behind it.
 *
 * Entries join one open batch, as in the LMDB group commit. At the end of
 * an event-loop turn, if no record is being written, everything waiting
 * becomes one commit-log record (its position one more than the last),
 * written with one `pwrite` and one `fdatasync`. Only one record is being
 * written at a time: the open batch takes what arrives meanwhile and goes
 * as the next record as soon as the sync returns, so records grow with
 * load and a lone entry waits only for its own sync. Once a record is on disk its entries, with the position they
 * bring LMDB to (`LOG_APPLIED_KEY`, in the same transaction), go to the
 * LMDB group commit, which commits without waiting for LMDB's own sync
 * (lmdb-js overlapping sync: the data pages and the meta page are flushed
 * after the commit, off the reply's path). The batch's promise resolves
 * when that commit is done. So a reply is sent only once its entries are
 * (1) on disk in the commit log and (2) visible to every read of LMDB; a
 * read never sees a row that is not yet durable, and never misses one that
 * was acknowledged. Replies are released in log order (the LMDB group
 * commit acknowledges in order).
 *
 * Recovery (`recoverCommitLog`): LMDB opens at its last flushed transaction
 * and the records after the position it holds are applied again, in order,
 * before the server serves. A torn or damaged last record was never
 * acknowledged (its sync never returned) and is dropped.
 *
 * Fail-stop: a failed log write or sync, and a failed LMDB commit, reject
 * every entry not yet acknowledged and call `onFatal`; nothing is
 * acknowledged after it.
 */
import { assert, InvariantError } from '../platform/index.js';
import { failedAppend, joined, PendingBatches, type Batch } from './batch.js';
import { FatalReport } from './commit-cause.js';
import type { DurableLog } from './durable-log.js';
import type { WalEntry } from './entry.js';
import { keysFit, type LmdbGroupCommit } from './group-commit.js';
import { decodeEntries, encodeRecord } from './log-record.js';
import type { Store } from './store.js';
import type { Settled, Wal, WalStats } from './wal.js';
import { PENDING_ENTRIES_MAX, RECORD_ENTRIES_MAX } from './limits.js';

/** The `meta` row holding the position of the last commit-log record LMDB has applied. */
export const LOG_APPLIED_KEY = 'commitLogApplied';

export interface LogFirstOptions {
  /** Most entries in one record (a record and its applied position must fit one LMDB transaction). */
  recordEntriesMax?: number;
  /** Most entries waiting in total; beyond it the server answers 503. */
  pendingEntriesMax?: number;
  onFatal: (error: unknown) => void;
  onBatch?: (entries: number, syncMs: number) => void;
}

/** The position LMDB has applied (0: none). */
export function appliedPosition(store: Pick<Store, 'tables'>): number {
  const value: unknown = store.tables.meta.get(LOG_APPLIED_KEY);
  return typeof value === 'number' ? value : 0;
}

/** The entry that records, in the same LMDB transaction as a record's entries, the position they bring LMDB to. */
export function appliedEntry(position: number): WalEntry {
  return { events: [], puts: [{ table: 'meta', key: LOG_APPLIED_KEY, value: position }] };
}

/**
 * Applies to LMDB, in order, every commit-log record after the position
 * LMDB holds, and waits until LMDB has flushed them. Returns the last
 * position (the next record gets the one after it). Records must follow
 * each other without a gap; the first gap ends the log (what follows it
 * was never acknowledged, or is left over from the file's earlier use).
 */
export async function recoverCommitLog(store: Store, log: { records(): { position: number; payload: Buffer }[] }, lmdb: LmdbGroupCommit): Promise<{ position: number; replayed: number }> {
  const applied = appliedPosition(store);
  const records = log
    .records()
    .filter((r) => r.position > applied)
    .sort((a, b) => a.position - b.position);
  let position = applied;
  let last: Promise<void> = Promise.resolve();
  let flushed: Promise<void> = Promise.resolve();
  let replayed = 0;
  for (const record of records) {
    if (record.position !== position + 1) break;
    position = record.position;
    let onFlushed!: () => void;
    flushed = new Promise<void>((resolve) => {
      onFlushed = resolve;
    });
    last = lmdb.appendTogether([...decodeEntries(record.payload), appliedEntry(position)], onFlushed);
    replayed++;
  }
  await last;
  await flushed;
  return { position, replayed };
}

/** A record written and not yet acknowledged: the batches it carries. */
interface Logged {
  batches: Batch[];
  entries: number;
  startedMs: number;
}

export class LogFirstWal implements Wal {
  private readonly recordEntriesMax: number;
  private readonly pendingEntriesMax: number;
  /** Batches not yet in a record: the open one and the closed ones. */
  private readonly batches: PendingBatches;
  /** The batch that took the latest entry: its promise settles after every earlier one. */
  private last: Batch | null = null;
  /** Records being written or applied, not yet acknowledged, oldest first. */
  private readonly unacknowledged: Logged[] = [];
  private writing = false;
  private failed: unknown = null;
  private fatal: FatalReport | null = null;
  private closed = false;
  private pendingEntries = 0;
  /** Position of the last record written (or recovered). */
  private position: number;
  /** Highest position LMDB has flushed, and who waits for a higher one. */
  private flushedPosition: number;
  // Stryker disable next-line ArrayDeclaration: equivalent: an element that is not a waiter has no position, so `noteFlushed` never takes or resolves it, and nothing else reads the list
  private readonly flushWaiters: { position: number; resolve: () => void }[] = [];
  private readonly counters = { batches: 0, commits: 0, entries: 0, events: 0, lastBatchEntries: 0, lastSyncMs: 0 };

  constructor(
    private readonly log: DurableLog,
    private readonly lmdb: LmdbGroupCommit,
    position: number,
    private readonly options: LogFirstOptions,
  ) {
    this.recordEntriesMax = options.recordEntriesMax ?? RECORD_ENTRIES_MAX;
    this.pendingEntriesMax = options.pendingEntriesMax ?? PENDING_ENTRIES_MAX;
    this.batches = new PendingBatches(this.recordEntriesMax, () => this.writeNext());
    this.position = position;
    this.flushedPosition = position;
  }

  /** The highest position LMDB has flushed (what a replicated node reports, so the log is trimmed only behind it). */
  get flushedTo(): number {
    return this.flushedPosition;
  }

  /** Resolves once LMDB has flushed every record up to `position` (the commit log's reuse waits for it). */
  whenApplied(position: number): Promise<void> {
    if (position <= this.flushedPosition) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push({ position, resolve }));
  }

  append(entry: WalEntry): Promise<void> {
    return this.appendSettled(entry);
  }

  appendSettled(entry: WalEntry, settled?: Settled): Promise<void> {
    return this.failed === null ? joined(this.add(entry), settled) : failedAppend(this.failed, settled);
  }

  private add(entry: WalEntry): Batch {
    assert(!this.closed, 'no append after the WAL was closed');
    this.last = this.batches.add(entry);
    this.pendingEntries++;
    return this.last;
  }

  flushed(): Promise<void> {
    return this.last?.promise ?? Promise.resolve();
  }

  /** A row reaches LMDB only once its commit-log record is synced. */
  readBarrier(): null {
    return null;
  }

  overloaded(): boolean {
    return this.pendingEntries >= this.pendingEntriesMax;
  }

  stats(): WalStats {
    return { ...this.counters, pendingEntries: this.pendingEntries };
  }

  async close(): Promise<void> {
    // Whatever is waiting is written first: the last reply goes out synced.
    await this.flushed();
    await this.lmdb.close();
    this.closed = true;
  }

  /** Writes everything waiting (up to a record's limit) as the next record, unless one is being written. */
  private writeNext(): void {
    if (this.writing || this.failed !== null || this.batches.empty) return;
    const logged: Logged = { batches: this.batches.take(this.recordEntriesMax), entries: 0, startedMs: performance.now() };
    const entries: WalEntry[] = [];
    for (const batch of logged.batches) {
      logged.entries += batch.entries.length;
      for (const entry of batch.entries) entries.push(entry);
    }
    const position = this.position + 1;
    let record: Buffer;
    try {
      if (!keysFit(entries)) throw new Error('a batch holds a key LMDB cannot store; it was not written to the commit log');
      record = encodeRecord(position, entries);
    } catch (error) {
      for (const batch of logged.batches) batch.reject(error);
      this.fail(error);
      return;
    }
    this.position = position;
    this.writing = true;
    this.unacknowledged.push(logged);
    this.log.append(position, record).then(
      () => {
        this.writing = false;
        if (this.failed !== null) return;
        this.counters.commits++;
        this.apply(position, entries, logged);
        this.writeNext();
      },
      (error: unknown) => this.fail(error),
    );
  }

  /** Hands a synced record to LMDB; its batches are acknowledged once LMDB has committed it. */
  private apply(position: number, entries: WalEntry[], logged: Logged): void {
    let committed: Promise<void>;
    try {
      committed = this.lmdb.appendTogether([...entries, appliedEntry(position)], () => this.noteFlushed(position));
    } catch (error) {
      this.fail(error);
      return;
    }
    committed.then(
      () => {
        if (this.failed !== null) return;
        const syncMs = performance.now() - logged.startedMs;
        let events = 0;
        for (const entry of entries) events += entry.events.length;
        this.pendingEntries -= logged.entries;
        this.counters.batches++;
        this.counters.entries += logged.entries;
        this.counters.events += events;
        this.counters.lastBatchEntries = logged.entries;
        this.counters.lastSyncMs = syncMs;
        this.options.onBatch?.(logged.entries, syncMs);
        if (this.unacknowledged[0] !== logged) {
          // A throw in this reaction would reject a promise nobody holds: the fail-stop path rejects every batch and stops the process.
          this.fail(new InvariantError('LMDB acknowledges commit-log records in order'));
          return;
        }
        this.unacknowledged.shift();
        for (const batch of logged.batches) batch.resolve();
      },
      (error: unknown) => this.fail(error),
    );
  }

  private noteFlushed(position: number): void {
    // Stryker disable next-line EqualityOperator: equivalent: at equal positions the assignment writes the value the field already holds
    if (position > this.flushedPosition) this.flushedPosition = position;
    for (let i = this.flushWaiters.length - 1; i >= 0; i--) {
      const waiter = this.flushWaiters[i]!;
      if (waiter.position <= this.flushedPosition) {
        this.flushWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  /**
   * Fail-stop: every entry not yet acknowledged is rejected (also records
   * already synced whose LMDB commit has not come back: nothing is
   * acknowledged after a failure), then `onFatal`. The LMDB group commit's
   * own failures come here too.
   */
  fail(error: unknown): void {
    if (this.failed !== null) {
      // Stryker disable next-line OptionalChaining: equivalent: `fatal` is set in the same synchronous step as `failed` (the listeners of the batches rejected in between never fail the WAL), so it is never null here
      this.fatal?.also(error);
      return;
    }
    this.failed = error;
    for (const logged of this.unacknowledged) for (const batch of logged.batches) batch.reject(error);
    this.batches.rejectAll(error);
    // LMDB's failed commit may reach here first, through a rejected batch:
    // the fatal report waits for lmdb-js to name the system error behind it.
    this.fatal = new FatalReport(error, (e) => this.options.onFatal(e));
  }
}
