/**
 * Pacing: at most `concurrency` attempts in flight, and, once load samples
 * come, at most the sample's allowance started until the next; the
 * allowance follows the rule in delivery-allowance.ts, fed with the
 * attempts the pacing itself counted. The sampling timer runs on fake
 * timers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WalStats } from '../../src/wal/index.js';
import { initialAllowance, nextAllowance } from '../../src/webhooks/delivery-allowance.js';
import { ALLOWANCE_MAX, LOAD_SAMPLE_MS } from '../../src/webhooks/limits.js';
import { Pacing, type PacingSettings } from '../../src/webhooks/pacing.js';

const settings: PacingSettings = { concurrency: 4, busyShare: 0, busyMinPerSecond: 50 };
const busy = (entries: number) => ({ utilisation: 0.95, wal: { entries, pendingEntries: 0 } });
const idle = (entries: number) => ({ utilisation: 0.1, wal: { entries, pendingEntries: 0 } });

/** Starts attempts while the pacing allows, up to `most`; returns how many started. */
function startAll(pacing: Pacing, most = 100): number {
  let n = 0;
  while (n < most && pacing.canStart()) {
    pacing.begin();
    n++;
  }
  return n;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('pacing', () => {
  it('keeps at most `concurrency` attempts in flight; an ending attempt frees its slot', () => {
    const pacing = new Pacing(settings);
    expect(pacing.allowedPerSecond()).toBe(ALLOWANCE_MAX * 10);
    expect(startAll(pacing)).toBe(4);
    expect(pacing.inFlight).toBe(4);
    pacing.end();
    expect(pacing.inFlight).toBe(3);
    expect(startAll(pacing)).toBe(1);
  });

  it('after a sample, starts at most its allowance until the next, however many slots are free', () => {
    const pacing = new Pacing({ ...settings, concurrency: 1_000 });
    // Full, with no earlier sample: the floor, 50 a second, is 5 a sample.
    pacing.apply(busy(1_000));
    expect(pacing.allowedPerSecond()).toBe(50);
    expect(startAll(pacing)).toBe(5);
    for (let i = 0; i < 5; i++) pacing.end();
    expect(pacing.canStart()).toBe(false);
    // Room again: the next allowance grows from the last.
    pacing.apply(idle(1_100));
    expect(startAll(pacing)).toBe(7);
  });

  it('hands the rule the attempts it started in the sample', () => {
    const floorless: PacingSettings = { ...settings, concurrency: 1_000, busyMinPerSecond: 0 };
    const pacing = new Pacing(floorless);
    let expected = initialAllowance();
    const samples = [idle(100), busy(200), busy(300)];
    const started = [0, 3, 2];
    for (const [i, sample] of samples.entries()) {
      expect(startAll(pacing, started[i])).toBe(started[i]);
      pacing.apply(sample);
      expected = nextAllowance(expected, { utilisation: sample.utilisation, entries: sample.wal.entries, pendingEntries: 0, started: started[i]! }, floorless);
      expect(pacing.allowedPerSecond()).toBe(expected.allowance * 10);
    }
    // Two busy samples in a row: half of the 2 started in the second is 1.
    expect(expected.allowance).toBe(1);
  });

  it('samples the load every LOAD_SAMPLE_MS once started when it yields, and not at all when it does not', () => {
    vi.useFakeTimers();
    const stats = { entries: 1_000, pendingEntries: 0 } as WalStats;
    const sampled = vi.fn();
    const quiet = new Pacing(settings);
    quiet.start(false, () => stats, sampled);
    vi.advanceTimersByTime(LOAD_SAMPLE_MS * 3);
    expect(sampled).not.toHaveBeenCalled();
    quiet.stop();

    const pacing = new Pacing(settings);
    pacing.start(true, () => stats, sampled);
    vi.advanceTimersByTime(LOAD_SAMPLE_MS);
    expect(sampled).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(LOAD_SAMPLE_MS * 2);
    expect(sampled).toHaveBeenCalledTimes(3);
    pacing.stop();
    vi.advanceTimersByTime(LOAD_SAMPLE_MS * 5);
    expect(sampled).toHaveBeenCalledTimes(3);
  });

  it('does not count attempts started before it starts (a test’s set-up) in the first sample', () => {
    const pacing = new Pacing({ ...settings, concurrency: 1_000, busyMinPerSecond: 0 });
    expect(startAll(pacing, 40)).toBe(40);
    pacing.start(false, () => ({}) as WalStats, () => {});
    // Counted, the 40 would leave half of them, 20, to the busy sample that follows.
    pacing.apply(busy(1_000));
    expect(pacing.allowedPerSecond()).toBe(0);
  });
});
