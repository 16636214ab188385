import { describe, expect, it } from 'vitest';
import { initialAllowance, nextAllowance, type AllowanceSample, type AllowanceSettings, type AllowanceState } from '../../src/webhooks/delivery-allowance.js';
import { ALLOWANCE_MAX, BUSY_PENDING_ENTRIES, TARGET_UTILISATION } from '../../src/webhooks/limits.js';

const settings: AllowanceSettings = { busyShare: 0.01, busyMinPerSecond: 50 };

/** Applies samples in turn; each starts what the allowance before it let start, at most `startable`. */
function run(samples: Partial<AllowanceSample>[], options: { settings?: AllowanceSettings; startable?: number; from?: AllowanceState } = {}): AllowanceState[] {
  let state = options.from ?? initialAllowance();
  let entries = 0;
  const states: AllowanceState[] = [];
  for (const s of samples) {
    entries += 1_000;
    const started = Math.min(state.allowance, options.startable ?? Infinity);
    state = nextAllowance(state, { utilisation: 0.1, entries, pendingEntries: 0, started, ...s }, options.settings ?? settings);
    states.push(state);
  }
  return states;
}

describe('the delivery allowance (deliveries take the spare capacity, the floor when there is none)', () => {
  it('starts with no limit and keeps none while the event loop is under the target', () => {
    expect(initialAllowance().allowance).toBe(ALLOWANCE_MAX);
    const states = run([{ utilisation: TARGET_UTILISATION }, { utilisation: 0.5 }, { utilisation: 0.7 }]);
    expect(states.map((s) => s.allowance)).toEqual([ALLOWANCE_MAX, ALLOWANCE_MAX, ALLOWANCE_MAX]);
  });

  it('over the target, halves what the last sample started, down to the floor: WEBHOOKS_BUSY_PERCENT of the entries committed, at least WEBHOOKS_BUSY_MIN_PER_SECOND', () => {
    // 1,000 entries a sample at 1% is 10 an attempt-sample; the floor of 50 a second is 5.
    const states = run(Array.from({ length: 6 }, () => ({ utilisation: 0.95 })), { startable: 150 });
    expect(states.map((s) => s.allowance)).toEqual([75, 37, 18, 10, 10, 10]);
    const floorOnly = run(Array.from({ length: 3 }, () => ({ utilisation: 0.95 })), { startable: 150, settings: { busyShare: 0, busyMinPerSecond: 50 } });
    expect(floorOnly.map((s) => s.allowance)).toEqual([75, 37, 18]);
    expect(run(Array.from({ length: 8 }, () => ({ utilisation: 0.95 })), { startable: 150, settings: { busyShare: 0, busyMinPerSecond: 50 } }).at(-1)!.allowance).toBe(5);
  });

  it('halves what was started, not the allowance: a server that sent little does not keep a large allowance into a busy spell', () => {
    const states = run([{ utilisation: 0.95 }], { startable: 12, settings: { busyShare: 0, busyMinPerSecond: 0 } });
    expect(states[0]!.allowance).toBe(6);
  });

  it('carries the floor in tenths, so a rate that is not a multiple of ten a second is kept exactly (15 a second: 1, 2, 1, 2 per sample)', () => {
    const states = run(Array.from({ length: 6 }, () => ({ utilisation: 0.95 })), { startable: 0, settings: { busyShare: 0, busyMinPerSecond: 15 } });
    expect(states.map((s) => s.allowance)).toEqual([1, 2, 1, 2, 1, 2]);
  });

  it('averages the last two samples: one busy sample after calm ones does not cut, two do, however calm it was before', () => {
    const states = run([{ utilisation: 0.1 }, { utilisation: 0.1 }, { utilisation: 0.95 }, { utilisation: 0.95 }], { startable: 100 });
    expect(states.map((s) => s.allowance)).toEqual([ALLOWANCE_MAX, ALLOWANCE_MAX, ALLOWANCE_MAX, 50]);
    // And a sample with no utilisation to read counts as full rather than as room.
    expect(run([{ utilisation: Number.NaN }], { startable: 100 })[0]!.allowance).toBe(50);
  });

  it('counts commits queueing past BUSY_PENDING_ENTRIES as full, whatever the event loop says', () => {
    const states = run([{ pendingEntries: BUSY_PENDING_ENTRIES - 1 }, { pendingEntries: BUSY_PENDING_ENTRIES }], { startable: 100 });
    expect(states.map((s) => s.allowance)).toEqual([ALLOWANCE_MAX, 50]);
  });

  it('under the target again, grows by a quarter plus one (so that a floor of 0 recovers) up to ALLOWANCE_MAX', () => {
    const [stopped] = run([{ utilisation: 0.95 }], { startable: 0, settings: { busyShare: 0, busyMinPerSecond: 0 } });
    expect(stopped!.allowance).toBe(0);
    const states = run(Array.from({ length: 60 }, () => ({ utilisation: 0.1 })), { from: stopped!, startable: 0 });
    expect(states.slice(0, 8).map((s) => s.allowance)).toEqual([1, 2, 3, 4, 6, 8, 11, 14]);
    expect(states.findIndex((s) => s.allowance >= 150)).toBeLessThan(20);
    expect(states.at(-1)!.allowance).toBe(ALLOWANCE_MAX);
  });

  it('settles near the target where deliveries make the load: not all or nothing', () => {
    // Orders alone keep the event loop at 30%; each attempt a sample adds 0.5 points; 150 can start a sample at most.
    // All-or-nothing (the rule before) swung between 150 and the floor, and so does doubling the allowance; here the
    // attempts stay within a factor of two around what fits under the target, (0.75 - 0.3) / 0.005 = 90 a sample.
    let state = initialAllowance();
    let entries = 0;
    let utilisation = 0.3;
    const started: number[] = [];
    for (let i = 0; i < 200; i++) {
      const n = Math.min(state.allowance, 150);
      utilisation = 0.3 + n * 0.005;
      entries += 1_000;
      state = nextAllowance(state, { utilisation, entries, pendingEntries: 0, started: n }, settings);
      if (i >= 100) started.push(n);
    }
    const mean = started.reduce((a, b) => a + b, 0) / started.length;
    expect(mean).toBeGreaterThan(60);
    expect(mean).toBeLessThan(110);
    expect(Math.max(...started)).toBeLessThan(130);
    expect(Math.min(...started)).toBeGreaterThan(45);
  });
});
