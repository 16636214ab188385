/**
 * Failed authentications are limited per client address (an IPv6 client per
 * /64: see address-key.ts), so guessing keys costs an attacker time. The table is bounded; the map is kept in order of
 * last failure, and when it is full one of its oldest buckets is forgotten
 * (see evictOne), which at worst gives that address a fresh bucket.
 */
import { takeToken, fullBucket, type BucketState } from '../ledger/index.js';
import type { Clock } from '../clock.js';

/** How many of the oldest buckets are compared when one must be forgotten. */
const EVICTION_SAMPLE = 32;

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

  /** Seconds to wait when this address key has used up its failures, else 0. */
  blockedForS(key: string): number {
    const bucket = this.buckets.get(key);
    if (bucket === undefined) return 0;
    const { verdict } = takeToken(bucket, this.failuresPerMinute, this.clock.monotonicMs());
    // A bucket that has refilled completely carries no memory: forget it, so
    // the table (and the per-request check) shrinks back once attacks stop.
    if (verdict.allowed && verdict.remaining >= this.failuresPerMinute - 1) this.buckets.delete(key);
    return verdict.allowed ? 0 : verdict.retryAfterS;
  }

  recordFailure(key: string): void {
    const now = this.clock.monotonicMs();
    const bucket = this.buckets.get(key) ?? fullBucket(this.failuresPerMinute, now);
    this.buckets.delete(key);
    if (this.buckets.size >= this.ipsMax) this.evictOne(now);
    this.buckets.set(key, takeToken(bucket, this.failuresPerMinute, now).bucket);
  }

  /**
   * Forgets the bucket with the most failures left among the oldest few: a
   * refilled one if there is one (harmless), never a blocked one while a
   * less used one is at hand, so that a flood of fresh addresses cannot
   * flush a blocked address back to a full allowance. Looking at a few only
   * keeps a failure's cost constant however full the table is.
   */
  private evictOne(now: number): void {
    let victim: string | undefined;
    let most = -1;
    let seen = 0;
    for (const [key, bucket] of this.buckets) {
      const left = takeToken(bucket, this.failuresPerMinute, now).verdict.remaining;
      if (left > most) [victim, most] = [key, left];
      if (++seen === EVICTION_SAMPLE || most >= this.failuresPerMinute - 1) break;
    }
    if (victim !== undefined) this.buckets.delete(victim);
  }
}
