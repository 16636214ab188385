/**
 * Failed authentications are limited per client address (an IPv6 client per
 * /64: see address-key.ts), so guessing keys costs an attacker time. A /64
 * also counts against its /48, the block one site is normally given, with
 * SITE_FACTOR times the allowance: otherwise a /48 would hold 65,536 fresh
 * /64 allowances for one attacker to rotate through, while one site's
 * several networks keep room for their own typos. The tables are bounded;
 * each map is kept in order of last failure, and when it is full one of its
 * oldest buckets is forgotten (see evictOne), which at worst gives that
 * address a fresh bucket.
 */
import { takeToken, fullBucket, type BucketState } from '../../ledger/index.js';
import type { Clock } from '../../platform/index.js';
import { siteKey } from './address-key.js';
import { AUTH_EVICTION_SAMPLE, AUTH_FAILURE_ADDRESSES_MAX, SITE_FACTOR } from '../limits.js';

export class AuthFailureLimiter {
  private readonly addresses: BucketTable;
  private readonly sites: BucketTable;

  constructor(clock: Clock, failuresPerMinute: number, ipsMax = AUTH_FAILURE_ADDRESSES_MAX) {
    this.addresses = new BucketTable(clock, failuresPerMinute, ipsMax);
    this.sites = new BucketTable(clock, failuresPerMinute * SITE_FACTOR, ipsMax);
  }

  /** False while no failure is remembered: then no address needs checking. */
  get tracking(): boolean {
    return this.addresses.size > 0 || this.sites.size > 0;
  }

  /** Seconds to wait when this address key (or its IPv6 /48) has used up its failures, else 0. */
  blockedForS(key: string): number {
    const site = siteKey(key);
    return Math.max(this.addresses.blockedForS(key), site === null ? 0 : this.sites.blockedForS(site));
  }

  recordFailure(key: string): void {
    this.addresses.recordFailure(key);
    const site = siteKey(key);
    if (site !== null) this.sites.recordFailure(site);
  }
}

/** Token buckets of failures by key, at most `keysMax` of them. */
class BucketTable {
  private readonly buckets = new Map<string, BucketState>();

  constructor(
    private readonly clock: Clock,
    private readonly failuresPerMinute: number,
    private readonly keysMax: number,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

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
    if (this.buckets.size >= this.keysMax) this.evictOne(now);
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
      if (++seen === AUTH_EVICTION_SAMPLE || most >= this.failuresPerMinute - 1) break;
    }
    if (victim !== undefined) this.buckets.delete(victim);
  }
}
