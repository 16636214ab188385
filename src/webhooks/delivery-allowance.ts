/**
 * How many delivery attempts may start in the next load sample (100 ms),
 * from what the last sample saw: deliveries take the order path's spare
 * capacity, and only a floor of it when there is none.
 *
 * The rule is increase-by-a-quarter/halve on the event loop's utilisation,
 * averaged over the last two samples. While the order path is over
 * TARGET_UTILISATION (or its commits are queueing past BUSY_PENDING_ENTRIES),
 * the allowance halves from what the last sample actually started, down to
 * the operator's floor (WEBHOOKS_BUSY_PERCENT of the entries committed, at
 * least WEBHOOKS_BUSY_MIN_PER_SECOND). Below it, the allowance grows by a
 * quarter (GROWTH) plus one, up to ALLOWANCE_MAX, which no receiver reaches
 * in practice: from nothing to 150 a sample in under 2 s. Doubling instead
 * overshot: where the deliveries themselves make the load, it swung between
 * the concurrency limit and a quarter of it; a quarter's growth keeps the
 * swing within about a factor of two around what fits under the target
 * (test/webhooks/delivery-allowance.test.ts).
 *
 * Why it grows and shrinks rather than switching between all and the
 * floor: the deliveries' own work makes the next sample look busy, so an
 * all-or-nothing rule swings between the two and falls behind even at an
 * eighth of the saturated order rate (at 1,000 orders a second such a rule
 * ended two runs about 1,950 messages behind, where this one keeps up;
 * `npm run bench:http -- --rate 1000 --webhooks`, bench/RESULTS.md,
 * "Webhooks on against off"). Measured against the deliveries' own load,
 * the order path is only "busy" when its orders alone keep the event loop
 * over the target.
 *
 * Pure, so that the dispatcher applies it to live samples and the tests to
 * samples they choose.
 */
import { ALLOWANCE_MAX, BUSY_PENDING_ENTRIES, TARGET_UTILISATION } from './limits.js';

/** The allowance's growth per sample with room under the target (plus one, so that an allowance of 0 recovers). */
export const GROWTH = 1.25;

export interface AllowanceSettings {
  /**
   * WEBHOOKS_BUSY_PERCENT / 100: while the order path has no spare
   * capacity, attempts per sample at least, as a share of the entries
   * committed in the sample before. Each delivery costs the shared cores
   * two or three orders' worth of work (docs/DECISIONS.md, "What webhooks
   * cost the order path"), so this floor is what a saturated order path
   * gives up to its notifications.
   */
  busyShare: number;
  /**
   * WEBHOOKS_BUSY_MIN_PER_SECOND: while the order path has no spare
   * capacity, attempts a second at least, whatever the share, so that a
   * saturated server still notifies (0: none until it has room, which is
   * what costs the order path least; see docs/DECISIONS.md).
   */
  busyMinPerSecond: number;
}

export interface AllowanceState {
  /** Attempts that may start in the coming sample. */
  allowance: number;
  /** The event loop's utilisation in the last sample (null before the first). */
  lastUtilisation: number | null;
  /** The WAL's entry count at the last sample (null before the first). */
  entries: number | null;
  /** The floor's attempts owed, in tenths of one (so that 15 a second is 1, then 2, per sample). */
  floorOwedTenths: number;
}

export interface AllowanceSample {
  /** Event-loop utilisation over the sample, 0–1. */
  utilisation: number;
  /** The WAL's entries committed in all, and waiting for their commit, at the sample's end. */
  entries: number;
  pendingEntries: number;
  /** Attempts started during the sample. */
  started: number;
}

/** Before any sample: no limit (a server starts idle). */
export function initialAllowance(): AllowanceState {
  return { allowance: ALLOWANCE_MAX, lastUtilisation: null, entries: null, floorOwedTenths: 0 };
}

export function nextAllowance(state: AllowanceState, sample: AllowanceSample, settings: AllowanceSettings): AllowanceState {
  const committed = state.entries === null ? 0 : Math.max(0, sample.entries - state.entries);
  // A sample with no utilisation to read (a zero-length interval) counts as full: it cannot show room.
  const utilisation = Number.isFinite(sample.utilisation) ? sample.utilisation : 1;
  // The mean of this sample and the last: one sample's spike (a GC, a burst) does not cut the allowance, two do.
  const smoothed = state.lastUtilisation === null ? utilisation : (state.lastUtilisation + utilisation) / 2;
  const full = smoothed > TARGET_UTILISATION || sample.pendingEntries >= BUSY_PENDING_ENTRIES;
  if (!full) {
    // Growth does not wait for use: a server that was idle sends a backlog (a restart, a replay) at once, up to
    // the concurrency limit, and the next samples halve it if the order path fills.
    return { allowance: Math.min(ALLOWANCE_MAX, Math.floor(state.allowance * GROWTH) + 1), lastUtilisation: utilisation, entries: sample.entries, floorOwedTenths: 0 };
  }
  // A sample is a tenth of a second.
  const owed = state.floorOwedTenths + settings.busyMinPerSecond;
  const floor = Math.floor(owed / 10);
  const least = Math.max(floor, Math.floor(committed * settings.busyShare));
  const halved = Math.floor(Math.min(state.allowance, sample.started) / 2);
  return { allowance: Math.max(least, halved), lastUtilisation: utilisation, entries: sample.entries, floorOwedTenths: owed - floor * 10 };
}
