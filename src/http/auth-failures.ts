/**
 * Failed authentications are limited per client IP, checked before any key
 * lookup, so guessing keys costs an attacker time. The table is bounded: when
 * full, the oldest IP is forgotten (insertion order), which at worst gives
 * that IP a fresh bucket.
 */
import { takeToken, fullBucket, type BucketState } from '../ledger/index.js';
import type { Clock } from '../clock.js';

export class AuthFailureLimiter {
  private readonly buckets = new Map<string, BucketState>();

  constructor(
    private readonly clock: Clock,
    private readonly failuresPerMinute: number,
    private readonly ipsMax = 100_000,
  ) {}

  /** False while no failure is remembered: then no address needs checking. */
  get tracking(): boolean {
    return this.buckets.size > 0;
  }

  /** Seconds to wait when this IP has used up its failures, else 0. */
  blockedForS(ip: string): number {
    const bucket = this.buckets.get(ip);
    if (bucket === undefined) return 0;
    const { verdict } = takeToken(bucket, this.failuresPerMinute, this.clock.monotonicMs());
    // A bucket that has refilled completely carries no memory: forget it, so
    // the table (and the per-request check) shrinks back once attacks stop.
    if (verdict.allowed && verdict.remaining >= this.failuresPerMinute - 1) this.buckets.delete(ip);
    return verdict.allowed ? 0 : verdict.retryAfterS;
  }

  recordFailure(ip: string): void {
    const now = this.clock.monotonicMs();
    const bucket = this.buckets.get(ip) ?? fullBucket(this.failuresPerMinute, now);
    this.buckets.delete(ip);
    if (this.buckets.size >= this.ipsMax) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    this.buckets.set(ip, takeToken(bucket, this.failuresPerMinute, now).bucket);
  }
}
