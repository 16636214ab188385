/**
 * Forgets Idempotency-Key records past their retention, so the table does
 * not grow without bound.
 *
 * It reads the expiry index (`idempotencyExpiry`, keyed by [atMs, record
 * key] and written in the same commit as each record), oldest first, so it
 * finds every expired record whatever its key and never reads a fresh one:
 * the work is proportional to what is removed, not to the table. Each step
 * removes at most `stepMax` index entries and their records in one commit
 * and runs alone, so no step holds the write lock or the event loop for
 * long; a sweep runs steps back to back until nothing expired is left.
 *
 * Deletions go through the WAL, in order with every other write, as plain
 * removes: a step decides on the event loop, in the turn that appends it,
 * which records are still expired, and its commit reads nothing. A record
 * is removed only if its durable copy is older than the cutoff and its
 * wallet actor holds no newer one not yet durable (`keyPending`): a key
 * used again since (a new record, with its own newer index entry) is kept,
 * whether its commit has landed or is still on its way, and a key used
 * again after the step is written after the step's removes. Index entries
 * older than the cutoff are removed outright: nothing writes one again.
 *
 * Deciding on the event loop, before the append, keeps every batch on one
 * commit path: a remove that read the row inside the commit would need an
 * LMDB transaction callback run apart from the queued write blocks. What a
 * sweep costs the orders beside it is its deletes
 * (`node dist/bench/storage/sweep-stall.js`; bench/RESULTS.md, "Idempotency-Key
 * sweep"): a step of 5,000 records takes keyed orders from about 20,000 to
 * 3,000 a second while it runs; steps of 1,000 (the default) keep about
 * 7,700 and halve the worst latency, and the sweep takes twice as long.
 */
import type { Clock } from '../platform/index.js';
import type { IdempotencyRecord } from '../ledger/index.js';
import type { WalEntry } from './entry.js';
import { STRUCTURES_KEY, type Store } from './store.js';
import type { Wal } from './wal.js';
import { SWEEP_STEP_ENTRIES_MAX } from './limits.js';

export interface SweepResult {
  /**
   * Expiry-index entries older than the cutoff removed, each with its record
   * unless that key was used again since (then only the stale entry goes).
   */
  removed: number;
  /** Steps (commits) it took. */
  steps: number;
}

export interface IdempotencyTableStats {
  records: number;
  /** Age of the oldest record in the index, in milliseconds (0 when there is none). */
  oldestAgeMs: number;
}

type Remove = NonNullable<WalEntry['removes']>[number];

export class IdempotencySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepResult> | null = null;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    private readonly retentionMs: number,
    /**
     * Whether the wallet actor of a record's key (`account:key`) holds a
     * record for it that is not yet durable (Registry.idempotencyKeyPending).
     */
    private readonly keyPending: (tableKey: string) => boolean,
    /** Most index entries (and records) removed in one step and commit: the step reads them on the event loop. */
    private readonly stepMax = SWEEP_STEP_ENTRIES_MAX,
  ) {}

  /** One bounded step: removes up to `stepMax` expired entries. `more` says whether expired ones may remain. */
  async step(): Promise<{ removed: number; more: boolean }> {
    const cutoffMs = this.clock.wallMs() - this.retentionMs;
    const removes: Remove[] = [];
    let entries = 0;
    for (const key of this.store.tables.idempotencyExpiry.getKeys({ end: [cutoffMs], limit: this.stepMax })) {
      const [, tableKey] = key as [number, string];
      entries++;
      removes.push({ table: 'idempotencyExpiry', key: key as [number, string] });
      if (this.expired(tableKey, cutoffMs)) removes.push({ table: 'idempotency', key: tableKey });
    }
    if (entries > 0) await this.wal.append({ events: [], puts: [], removes });
    return { removed: entries, more: entries === this.stepMax };
  }

  /**
   * Whether a record may go: its durable copy is older than the cutoff, and
   * no newer one is on its way to the disk (that one would be written before
   * this step's removes, which are appended after it).
   */
  private expired(tableKey: string, cutoffMs: number): boolean {
    const record = this.store.tables.idempotency.get(tableKey) as IdempotencyRecord | undefined;
    return record !== undefined && record.atMs < cutoffMs && !this.keyPending(tableKey);
  }

  /** Steps until nothing expired is left (one sweep at a time). */
  runOnce(): Promise<SweepResult> {
    this.running ??= this.sweep().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async sweep(): Promise<SweepResult> {
    const result: SweepResult = { removed: 0, steps: 0 };
    for (;;) {
      const { removed, more } = await this.step();
      result.removed += removed;
      result.steps++;
      if (!more || this.stopped) return result;
    }
  }

  /** Records in the table and the age of the oldest (for /metrics and stats). */
  stats(): IdempotencyTableStats {
    const table = this.store.tables.idempotency;
    // LMDB's count includes the table's shared-structures entry, if any.
    const records = (table.getStats() as { entryCount: number }).entryCount - (table.doesExist(STRUCTURES_KEY) ? 1 : 0);
    let oldestAgeMs = 0;
    for (const key of this.store.tables.idempotencyExpiry.getKeys({ limit: 1 })) {
      oldestAgeMs = Math.max(0, this.clock.wallMs() - (key as [number, string])[0]);
    }
    return { records, oldestAgeMs };
  }

  start(intervalMs: number, onError: (error: unknown) => void): void {
    this.timer = setInterval(() => {
      this.runOnce().catch(onError);
    }, intervalMs);
    // The sweeper alone must not keep the process alive.
    this.timer.unref();
  }

  /** No new sweep starts and a running one ends after its step; resolves once it has (its errors were reported by `start`'s caller). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }
}
