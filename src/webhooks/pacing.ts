/**
 * How many delivery attempts may start: at most `concurrency` in flight,
 * and, when the dispatcher yields to the order path, at most the allowance
 * of the current load sample (delivery-allowance.ts). Every 100 ms a sample
 * of the event loop's utilisation and the WAL's counters sets the attempts
 * that may start until the next one.
 */
import { performance } from 'node:perf_hooks';
import { MS_PER_SECOND } from '../platform/index.js';
import type { WalStats } from '../wal/index.js';
import { initialAllowance, nextAllowance, type AllowanceSettings } from './delivery-allowance.js';
import { LOAD_SAMPLE_MS } from './limits.js';

/** One load sample: the event loop's utilisation over the interval, and the WAL's counters at its end. */
export interface LoadSample {
  utilisation: number;
  wal: Pick<WalStats, 'entries' | 'pendingEntries'>;
}

export interface PacingSettings extends AllowanceSettings {
  /** WEBHOOKS_CONCURRENCY: most attempts in flight in total. */
  concurrency: number;
}

export class Pacing {
  /** The allowance rule's state (delivery-allowance.ts). */
  private allowance = initialAllowance();
  /** Attempts that may still start in this load sample (no limit before the first sample, or without sampling). */
  private budget = Infinity;
  /** Attempts started in this load sample. */
  private started = 0;
  /** Attempts in flight. */
  private active = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly settings: PacingSettings) {}

  canStart(): boolean {
    return this.active < this.settings.concurrency && this.budget > 0;
  }

  /** An attempt starts. */
  begin(): void {
    this.active++;
    this.budget--;
    this.started++;
  }

  /** An attempt has its result. */
  end(): void {
    this.active--;
  }

  get inFlight(): number {
    return this.active;
  }

  /** Attempts the order path leaves room for, a second (the last sample's allowance × 10; ALLOWANCE_MAX × 10 means no limit). */
  allowedPerSecond(): number {
    return this.allowance.allowance * (MS_PER_SECOND / LOAD_SAMPLE_MS);
  }

  /** The yield rule, applied to one load sample: sets the attempts that may start until the next. */
  apply(sample: LoadSample): void {
    this.allowance = nextAllowance(
      this.allowance,
      { utilisation: sample.utilisation, entries: sample.wal.entries, pendingEntries: sample.wal.pendingEntries, started: this.started },
      this.settings,
    );
    this.budget = this.allowance.allowance;
    this.started = 0;
  }

  /**
   * Starts sampling when `yieldWhenBusy` (every LOAD_SAMPLE_MS, then calls
   * `sampled`); attempts started before (a test's set-up) are not the first
   * sample's either way.
   */
  start(yieldWhenBusy: boolean, walStats: () => WalStats, sampled: () => void): void {
    this.started = 0;
    if (!yieldWhenBusy) return;
    let last = performance.eventLoopUtilization();
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      this.apply({ utilisation: performance.eventLoopUtilization(now, last).utilization, wal: walStats() });
      last = now;
      sampled();
    }, LOAD_SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
