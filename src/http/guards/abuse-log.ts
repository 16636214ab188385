/**
 * Rate-limit abuse is logged once per key per one-minute window, with the
 * number of refused requests, never once per request: a client hammering
 * at 100,000 requests a second must not turn the log into the bottleneck.
 */
import type { Logger } from 'pino';
import { MS_PER_SECOND, type Clock } from '../../platform/index.js';
import { ABUSE_ACCOUNTS_MAX, ABUSE_WINDOW_MS } from '../limits.js';

interface Window {
  startMs: number;
  refused: number;
}

export class AbuseLog {
  private readonly windows = new Map<number, Window>();

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly windowMs = ABUSE_WINDOW_MS,
    private readonly accountsMax = ABUSE_ACCOUNTS_MAX,
  ) {}

  refused(account: number, limitPerMinute: number): void {
    const now = this.clock.monotonicMs();
    const window = this.windows.get(account);
    if (window !== undefined && now - window.startMs < this.windowMs) {
      window.refused++;
      return;
    }
    if (window !== undefined) {
      this.log.warn({ account, refused: window.refused, windowS: this.windowMs / MS_PER_SECOND }, 'rate limit abuse in the last window');
      this.windows.delete(account);
    } else if (this.windows.size >= this.accountsMax) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    this.windows.set(account, { startMs: now, refused: 1 });
    this.log.warn({ account, limitPerMinute }, 'rate limit exceeded; further refusals in this window are counted, not logged');
  }
}
