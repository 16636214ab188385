/**
 * This node's hold on the group's lease once it has taken it: renewed every
 * RENEW_EVERY_MS, and trusted only as long as this node's own clock says the
 * last renewal (measured from the moment it was sent) has time left. While
 * it has not, the node answers 503 (a renewal may still come back: PostgreSQL
 * failing over, a slow round trip). A renewal that finds another node's
 * epoch is the end: `onLost` stops the process.
 */
import { connectionTrouble, type GroupDb } from './group-db.js';
import { LEASE_MARGIN_MS, LEASE_MS, RENEW_EVERY_MS } from './limits.js';

export interface LeadershipOptions {
  leaseMs?: number;
  /** The lease was taken by another node: this node must stop. */
  onLost: (error: Error) => void;
  /** A renewal failed on the connection (logged; the next one retries). */
  onTrouble?: (error: unknown) => void;
  now?: () => number;
}

export class Leadership {
  private validUntilMs: number;
  private timer: NodeJS.Timeout | null = null;
  private renewing = false;
  private readonly leaseMs: number;
  private readonly now: () => number;

  constructor(
    private readonly db: GroupDb,
    readonly epoch: number,
    acquiredAtMs: number,
    private readonly options: LeadershipOptions,
  ) {
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.now = options.now ?? (() => performance.now());
    this.validUntilMs = acquiredAtMs + this.leaseMs - LEASE_MARGIN_MS;
  }

  /** Whether this node may serve now: its lease, by its own clock, has not run out. */
  valid(): boolean {
    return this.now() < this.validUntilMs;
  }

  start(): void {
    this.timer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    const sentMs = this.now();
    try {
      if (await this.db.renew(this.epoch, this.leaseMs)) {
        this.validUntilMs = Math.max(this.validUntilMs, sentMs + this.leaseMs - LEASE_MARGIN_MS);
      } else {
        this.stop();
        this.validUntilMs = 0;
        this.options.onLost(new Error(`node ${this.db.node} lost the lease of epoch ${this.epoch} to another node`));
      }
    } catch (error) {
      if (connectionTrouble(error)) this.options.onTrouble?.(error);
      else {
        this.stop();
        this.validUntilMs = 0;
        this.options.onLost(error as Error);
      }
    } finally {
      this.renewing = false;
    }
  }
}
