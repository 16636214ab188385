/**
 * A lazy token bucket in exact integer arithmetic. Tokens are stored scaled
 * by the number of milliseconds in a minute, so that a limit of L requests
 * per minute refills exactly L scaled units per millisecond: no fractions, no
 * floats. The burst equals the per-minute limit.
 *
 * Pure: the caller passes the monotonic time in; nothing here reads a clock.
 */
import { MS_PER_SECOND } from '../platform/units.js';
import { RATE_WINDOW_MS } from './limits.js';

/** Cost of one request in scaled units. */
const COST = RATE_WINDOW_MS;

export interface BucketState {
  /** Scaled tokens (requests × 60,000). */
  tokens: number;
  /** Monotonic milliseconds when `tokens` was last computed. */
  atMs: number;
}

export interface BucketVerdict {
  allowed: boolean;
  /** Whole requests left after this one. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetS: number;
  /** Seconds to wait before one request is allowed (at least 1), when refused. */
  retryAfterS: number;
}

export function fullBucket(limitPerMinute: number, nowMs: number): BucketState {
  return { tokens: limitPerMinute * RATE_WINDOW_MS, atMs: nowMs };
}

/** Tokens at `nowMs`, refilled lazily and capped at the (possibly new) capacity. */
function refill(bucket: BucketState, limitPerMinute: number, nowMs: number): number {
  const capacity = limitPerMinute * RATE_WINDOW_MS;
  // A full window refills any bucket, so the product below stays far inside
  // the safe-integer range even for the largest limit.
  const elapsedMs = Math.min(Math.max(0, nowMs - bucket.atMs), RATE_WINDOW_MS);
  return Math.min(capacity, bucket.tokens + elapsedMs * limitPerMinute);
}

/** Takes one token if there is one. Returns the new state and the verdict. */
export function takeToken(
  bucket: BucketState,
  limitPerMinute: number,
  nowMs: number,
): { bucket: BucketState; verdict: BucketVerdict } {
  const capacity = limitPerMinute * RATE_WINDOW_MS;
  const perSecond = limitPerMinute * MS_PER_SECOND;
  let tokens = refill(bucket, limitPerMinute, nowMs);
  const allowed = tokens >= COST;
  if (allowed) tokens -= COST;
  const verdict: BucketVerdict = {
    allowed,
    remaining: Math.floor(tokens / COST),
    resetS: Math.ceil((capacity - tokens) / perSecond),
    retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((COST - tokens) / perSecond)),
  };
  return { bucket: { tokens, atMs: Math.max(nowMs, bucket.atMs) }, verdict };
}
