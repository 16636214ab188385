/**
 * What a replay reports: whether every invariant holds, the first broken
 * one (as a sentence and as a structured finding), what was examined, the
 * money moved, and the most per-order state held at once.
 */
import type { BrokenInvariant } from './finding.js';
import type { ReplayState } from './replay-state.js';

export interface VerifyReport {
  ok: boolean;
  /** A plain sentence naming the first broken invariant, or null when all hold. */
  firstBroken: string | null;
  /** The same finding, structured (for callers that act on it). */
  broken: BrokenInvariant | null;
  /** What was examined (up to the first failure, when there is one). */
  counts: { events: number; accounts: number; orders: number; idempotencyKeys: number };
  /**
   * Micro-credits, exact. BigInt because a sum over many wallets may leave
   * the safe-integer range even though each wallet stays inside it.
   * `credited` is the net of operator adjustments (negative adjustments
   * subtract), so Σ wallets = credited − debited + refunded.
   */
  totals: { credited: bigint; debited: bigint; refunded: bigint };
  /**
   * The most per-order state the replay held at once: open orders (placed,
   * still to move to the status their row ends in) and rows passed before
   * their placement. It follows the backlog, not the orders ever placed.
   */
  retained: { openOrdersPeak: number; passedRowsPeak: number };
}

/** The report of a replay that stopped at `broken`, or went through the whole log and tables when it is null. */
export function reportOf(state: ReplayState, broken: BrokenInvariant | null): VerifyReport {
  return {
    ok: broken === null,
    firstBroken: broken?.sentence ?? null,
    broken,
    counts: { ...state.counts },
    totals: { ...state.totals },
    retained: { openOrdersPeak: state.orders.peak, passedRowsPeak: state.rows.passedPeak },
  };
}
