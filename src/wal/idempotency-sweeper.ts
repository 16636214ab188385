/**
 * Forgets Idempotency-Key records past their retention, so the table does
 * not grow without bound. Deletions go through the WAL, in order with every
 * other write, and each is conditional inside the commit: a key that was
 * used again since it was read is kept.
 */
import type { Clock } from '../clock.js';
import type { IdempotencyRecord } from '../ledger/index.js';
import type { Store } from './store.js';
import type { Wal } from './wal.js';

export interface SweepResult {
  scanned: number;
  removed: number;
}

export class IdempotencySweeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    private readonly retentionMs: number,
    /** Most records looked at in one run, so a sweep never stalls the event loop for long. */
    private readonly scanMax = 50_000,
  ) {}

  async runOnce(): Promise<SweepResult> {
    const cutoffMs = this.clock.wallMs() - this.retentionMs;
    const removes: { table: 'idempotency'; key: string; ifAtMsBefore: number }[] = [];
    let scanned = 0;
    for (const { key, value } of this.store.tables.idempotency.getRange({ limit: this.scanMax })) {
      scanned++;
      if ((value as IdempotencyRecord).atMs < cutoffMs) removes.push({ table: 'idempotency', key: key as string, ifAtMsBefore: cutoffMs });
    }
    if (removes.length > 0) await this.wal.append({ events: [], puts: [], removes });
    return { scanned, removed: removes.length };
  }

  start(intervalMs: number, onError: (error: unknown) => void): void {
    this.timer = setInterval(() => {
      this.runOnce().catch(onError);
    }, intervalMs);
    // The sweeper alone must not keep the process alive.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
