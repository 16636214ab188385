import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RATE_LIMIT_MAX, RATE_WINDOW_MS } from '../../src/ledger/limits.js';
import { fullBucket, takeToken, type BucketState, type BucketVerdict } from '../../src/ledger/token-bucket.js';
import { ManualClock } from '../../src/platform/clock.js';

/** Takes `n` tokens at one instant; returns the final state and every verdict. */
function takeMany(bucket: BucketState, limit: number, nowMs: number, n: number): { bucket: BucketState; verdicts: BucketVerdict[] } {
  const verdicts: BucketVerdict[] = [];
  for (let i = 0; i < n; i++) {
    const r = takeToken(bucket, limit, nowMs);
    bucket = r.bucket;
    verdicts.push(r.verdict);
  }
  return { bucket, verdicts };
}

/** An empty bucket (all of its minute spent) at `atMs`. */
function emptyBucket(atMs: number): BucketState {
  return { tokens: 0, atMs };
}

describe('burst', () => {
  it.each([1, 2, 7, 60, 61, 1000, 5000])('a fresh key with limit %d may spend exactly its limit at once, then is refused', (limit) => {
    const clock = new ManualClock();
    const t = clock.monotonicMs();
    const { bucket, verdicts } = takeMany(fullBucket(limit, t), limit, t, limit);
    expect(verdicts.every((v) => v.allowed)).toBe(true);
    // remaining counts down limit-1, limit-2, ..., 0.
    expect(verdicts.map((v) => v.remaining)).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
    const next = takeToken(bucket, limit, t).verdict;
    expect(next.allowed).toBe(false);
    expect(next.remaining).toBe(0);
    expect(next.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(next.retryAfterS)).toBe(true);
  });

  it('allowed verdicts carry retryAfterS 0', () => {
    const { verdict } = takeToken(fullBucket(60, 0), 60, 0);
    expect(verdict).toEqual({ allowed: true, remaining: 59, resetS: 1, retryAfterS: 0 });
  });

  it('a fresh key at the largest limit starts with its whole minute (no precision loss)', () => {
    const limit = RATE_LIMIT_MAX;
    expect(limit).toBeGreaterThanOrEqual(100_000_000);
    const { verdict } = takeToken(fullBucket(limit, 0), limit, 0);
    expect(verdict.allowed).toBe(true);
    expect(verdict.remaining).toBe(limit - 1);
    expect(verdict.resetS).toBe(1);
  });

  it('for every limit from 1 to 100,000,000 one request from a fresh bucket leaves exactly limit - 1 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: RATE_LIMIT_MAX }), fc.integer({ min: 0, max: 1e12 }), (limit, t) => {
        const { verdict } = takeToken(fullBucket(limit, t), limit, t);
        expect(verdict.allowed).toBe(true);
        expect(verdict.remaining).toBe(limit - 1);
        // One request costs 60/limit seconds of refill, rounded up.
        expect(verdict.resetS).toBe(Math.ceil(60 / limit));
      }),
      { numRuns: 500 },
    );
  });
});

describe('refill', () => {
  it('at limit 60, after 1 s exactly one more request is allowed', () => {
    const clock = new ManualClock();
    let { bucket } = takeMany(fullBucket(60, clock.monotonicMs()), 60, clock.monotonicMs(), 60);
    expect(takeToken(bucket, 60, clock.monotonicMs()).verdict.allowed).toBe(false);

    clock.advance(999);
    const early = takeToken(bucket, 60, clock.monotonicMs());
    expect(early.verdict.allowed).toBe(false);
    expect(early.verdict.retryAfterS).toBe(1);
    // Refusals do not reset the refill: the refused call's state may be kept.
    bucket = early.bucket;

    clock.advance(1);
    const one = takeToken(bucket, 60, clock.monotonicMs());
    expect(one.verdict.allowed).toBe(true);
    expect(one.verdict.remaining).toBe(0);
    const two = takeToken(one.bucket, 60, clock.monotonicMs());
    expect(two.verdict.allowed).toBe(false);
  });

  it('refills at limit/60 per second: limit 120 gives 2 per second, limit 30 one every 2 s', () => {
    let b = takeMany(fullBucket(120, 0), 120, 0, 120).bucket;
    const r = takeMany(b, 120, 1000, 3);
    expect(r.verdicts.map((v) => v.allowed)).toEqual([true, true, false]);

    b = takeMany(fullBucket(30, 0), 30, 0, 30).bucket;
    const at1 = takeToken(b, 30, 1000);
    expect(at1.verdict.allowed).toBe(false);
    expect(at1.verdict.retryAfterS).toBe(1);
    const at2 = takeToken(at1.bucket, 30, 2000);
    expect(at2.verdict.allowed).toBe(true);
  });

  it('never holds more than the burst however long the key was idle', () => {
    const limit = 10;
    const b = takeMany(fullBucket(limit, 0), limit, 0, limit).bucket;
    const later = 10 * 24 * 3600 * 1000;
    const r = takeMany(b, limit, later, limit + 1);
    expect(r.verdicts.filter((v) => v.allowed)).toHaveLength(limit);
    expect(r.verdicts[limit]!.allowed).toBe(false);
  });

  it('retryAfterS is the whole seconds until one request is available, at least 1', () => {
    // limit 1: one request per minute.
    const r1 = takeToken(takeToken(fullBucket(1, 0), 1, 0).bucket, 1, 0);
    expect(r1.verdict.allowed).toBe(false);
    expect(r1.verdict.retryAfterS).toBe(60);
    const r2 = takeToken(r1.bucket, 1, 59_500);
    expect(r2.verdict.allowed).toBe(false);
    expect(r2.verdict.retryAfterS).toBe(1);
    expect(takeToken(r2.bucket, 1, 60_000).verdict.allowed).toBe(true);
    // Large limit: refused only for a fraction of a second, still told 1 s.
    const big = takeToken(emptyBucket(0), RATE_LIMIT_MAX, 0);
    expect(big.verdict.allowed).toBe(false);
    expect(big.verdict.retryAfterS).toBe(1);
  });

  it('waiting retryAfterS seconds after a refusal is always enough (property)', () => {
    fc.assert(
      // A bucket holding less than one request (one request costs RATE_WINDOW_MS scaled units).
      fc.property(fc.integer({ min: 1, max: RATE_LIMIT_MAX }), fc.integer({ min: 0, max: RATE_WINDOW_MS - 1 }), (limit, tokens) => {
        const r = takeToken({ tokens, atMs: 0 }, limit, 0);
        expect(r.verdict.allowed).toBe(false);
        expect(r.verdict.retryAfterS).toBeGreaterThanOrEqual(1);
        expect(takeToken(r.bucket, limit, r.verdict.retryAfterS * 1000).verdict.allowed).toBe(true);
        // ...and not much more than needed: one second earlier is not enough unless the wait is the 1 s floor.
        if (r.verdict.retryAfterS > 1) {
          expect(takeToken(r.bucket, limit, (r.verdict.retryAfterS - 1) * 1000).verdict.allowed).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('refills exactly for limits up to 100,000,000 (property, BigInt reference)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: RATE_LIMIT_MAX }), fc.integer({ min: 0, max: RATE_WINDOW_MS }), (limit, elapsed) => {
        // From empty, after `elapsed` ms the bucket holds floor(limit × elapsed / 60000) whole requests.
        const available = BigInt(limit) * BigInt(elapsed) / 60_000n;
        const r = takeToken(emptyBucket(0), limit, elapsed);
        expect(r.verdict.allowed).toBe(available >= 1n);
        const expectedRemaining = available >= 1n ? available - 1n : 0n;
        expect(r.verdict.remaining).toBe(Number(expectedRemaining));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('remaining and resetS', () => {
  it('at limit 60 after spending 30: remaining 30, full again in 30 s', () => {
    const { verdicts, bucket } = takeMany(fullBucket(60, 0), 60, 0, 30);
    expect(verdicts[29]).toEqual({ allowed: true, remaining: 30, resetS: 30, retryAfterS: 0 });
    // 10 s later 10 have refilled: taking one leaves 39, 21 s to full.
    expect(takeToken(bucket, 60, 10_000).verdict).toEqual({ allowed: true, remaining: 39, resetS: 21, retryAfterS: 0 });
  });

  it('an empty bucket at limit 60 is full again in 60 s', () => {
    const { verdicts } = takeMany(fullBucket(60, 0), 60, 0, 61);
    expect(verdicts[59]!.resetS).toBe(60);
    expect(verdicts[60]).toEqual({ allowed: false, remaining: 0, resetS: 60, retryAfterS: 1 });
  });

  it('resetS rounds partial seconds up', () => {
    // limit 1, half a minute after the only request: 30 s to go; at 30.001 s, 30 s (ceil of 29.999).
    const b = takeToken(fullBucket(1, 0), 1, 0).bucket;
    expect(takeToken(b, 1, 30_000).verdict.resetS).toBe(30);
    expect(takeToken(b, 1, 30_001).verdict.resetS).toBe(30);
    expect(takeToken(b, 1, 29_999).verdict.resetS).toBe(31);
  });
});

describe('time', () => {
  it('time going backwards does not mint tokens', () => {
    const limit = 60;
    let b = takeMany(fullBucket(limit, 100_000), limit, 100_000, limit).bucket;
    // The clock jumps back 30 s: nothing is allowed, nothing refills.
    const back = takeToken(b, limit, 70_000);
    expect(back.verdict.allowed).toBe(false);
    b = back.bucket;
    // Forward again to the original time: still nothing.
    const same = takeToken(b, limit, 100_000);
    expect(same.verdict.allowed).toBe(false);
    // 1 s after the latest time seen: exactly one.
    const r = takeMany(same.bucket, limit, 101_000, 2);
    expect(r.verdicts.map((v) => v.allowed)).toEqual([true, false]);
  });

  it('a backwards jump followed by a return does not count the jump twice', () => {
    const limit = 60;
    const b = takeMany(fullBucket(limit, 100_000), limit, 100_000, limit).bucket;
    const back = takeToken(b, limit, 0).bucket; // jump back 100 s
    // Returning to 100 s + 500 ms must not look like 100.5 s of idleness.
    expect(takeToken(back, limit, 100_500).verdict.allowed).toBe(false);
  });
});

describe('properties over random request sequences', () => {
  const limitArb = fc.oneof(
    fc.integer({ min: 1, max: 10 }),
    fc.integer({ min: 1, max: 300 }),
    fc.integer({ min: 1, max: RATE_LIMIT_MAX }),
    fc.constant(RATE_LIMIT_MAX),
  );
  const stepArb = fc.record({
    elapsedMs: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 120_000 }), fc.integer({ min: -5000, max: 0 })),
    take: fc.integer({ min: 0, max: 8 }),
  });

  it('allowed requests in any window never exceed limit + elapsed × limit / 60000, and nothing goes negative', () => {
    fc.assert(
      fc.property(limitArb, fc.array(stepArb, { minLength: 1, maxLength: 60 }), (limit, steps) => {
        let t = 1_000_000;
        let maxSeen = t;
        let bucket = fullBucket(limit, t);
        // Per step: effective time (the latest time any call has carried; a clock going back grants
        // nothing) and how many requests were allowed.
        const times: number[] = [];
        const allowed: number[] = [];
        for (const step of steps) {
          t += step.elapsedMs;
          // The bucket only learns the time from a call, so only steps with calls move it.
          if (step.take > 0) maxSeen = Math.max(maxSeen, t);
          let n = 0;
          for (let i = 0; i < step.take; i++) {
            const r = takeToken(bucket, limit, t);
            bucket = r.bucket;
            const v = r.verdict;
            expect(bucket.tokens).toBeGreaterThanOrEqual(0);
            expect(bucket.tokens).toBeLessThanOrEqual(limit * RATE_WINDOW_MS);
            expect(v.remaining).toBeGreaterThanOrEqual(0);
            expect(v.remaining).toBeLessThanOrEqual(limit - 1);
            expect(v.resetS).toBeGreaterThanOrEqual(0);
            expect(v.resetS).toBeLessThanOrEqual(60);
            if (v.allowed) n++;
            else expect(v.retryAfterS).toBeGreaterThanOrEqual(1);
          }
          times.push(maxSeen);
          allowed.push(n);
        }
        for (let i = 0; i < steps.length; i++) {
          let count = 0;
          for (let j = i; j < steps.length; j++) {
            count += allowed[j]!;
            const elapsed = times[j]! - times[i]!;
            // count ≤ limit + elapsed × limit / 60000, in exact integers.
            expect(BigInt(count) * 60_000n).toBeLessThanOrEqual(BigInt(limit) * 60_000n + BigInt(elapsed) * BigInt(limit));
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a client that stays within its limit is never refused', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 1, maxLength: 40 }),
        (limit, gaps) => {
          let t = 0;
          let bucket = fullBucket(limit, t);
          for (const gap of gaps) {
            t += gap;
            // What refilled since the last step, capped by the burst and kept small for speed.
            const earned = Math.min(limit, Math.floor((gap * limit) / 60_000), 50);
            const r = takeMany(bucket, limit, t, earned);
            expect(r.verdicts.every((v) => v.allowed)).toBe(true);
            bucket = r.bucket;
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
