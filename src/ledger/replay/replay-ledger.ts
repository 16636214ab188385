/**
 * The ledger check: replays an event log in seq order and checks that the
 * log and the tables tell the same, self-consistent story about money. It
 * stops at the first broken invariant and names it in a plain sentence with
 * the seq, account and order involved, so an operator can go straight to the
 * event. An event that makes a rule throw is reported the same way: verify
 * never crashes on what a log holds.
 *
 * What is checked, in log order and then over the tables:
 *   (log)      seqs are integers 1, 2, 3, … without gaps (a gap is a lost event)
 *              and every event is of a known type (an unknown one could move
 *              money in a way this replay cannot see; see `known-events.ts`);
 *   (a)        per account: account.created opens at 0, credits.adjusted adds its
 *              amount, order.placed takes its debit, order.status adds its refund;
 *              the running balance never goes negative and equals the `balance`
 *              each event carries; events only name accounts created before them;
 *              every plan.granted is one the actor makes: 1 to PLAN_MONTHS_MAX
 *              months at planPriceInr, ending where planExpiryAfter puts it;
 *   (b)        every `wallets` row's credits equal the replayed balance and its
 *              unlimited window the one its grants leave, and wallets and
 *              account.created events match one to one;
 *   (c)        every order.placed has charge = chargeFor(quantity, rate, runs)
 *              and debit 0 if isUnlimited at its time, the charge otherwise,
 *              and its `orders` row agrees on account, service, type, charge,
 *              debit, rate, quantity, extras, number and its unlimited flag;
 *              order.placed and `orders` rows match one to one;
 *   (d)        status only moves forward, a final state never moves again, the
 *              refund is the debit on `canceled`, remains × rate on `partial`
 *              (0 when the debit was 0) and 0 otherwise; each `orders` row's
 *              status and remains equal the last order.status event; the status
 *              index and the counts row hold as many orders per status as the
 *              log leaves there;
 *   (e)        every `idempotency` row that names an order names an existing
 *              order of the account in its key (`${accountId}:${key}`), and
 *              one that names a subscription names one that account placed;
 *   (f)        order.progress, order.cancel_requested, refill.requested and
 *              refill.status move no money (they carry no amount, refund or
 *              balance), name an order of their account, and are what the
 *              actor's lifecycle rules accept at that point of the log (one
 *              cancel request per order, one open refill, a refill moving from
 *              the status it is in; see `lifecycle-events.ts`). A drip-feed
 *              order's charge is quantity × rate × runs (c); a customer's
 *              cancel is an order.status like any other, so (d) checks its
 *              refund is the whole debit, once;
 *   (g)        a claim (order.status pending to processing naming its worker)
 *              sets a lease within the bounds; order.lease_extended and
 *              order.released (cause released) come from the worker holding
 *              the processing order while its lease runs, an expiry
 *              (order.released, cause expired) only once it has ended, and
 *              each orders row's worker and lease equal what the log leaves
 *              (see `lease-events.ts`); (g') the lease index holds exactly
 *              the processing orders under a lease, at their lease's end;
 *   (h)        every subscription event follows the subscription rules and
 *              each subscription's row is what the log leaves (see
 *              `subscription-events.ts`).
 *
 * Memory does not grow with the number of orders (see `ReplayState`). The
 * replay walks the log and the `orders` table (in storage-key order, which
 * is creation order) side by side, so an order's fixed fields and its final status come from its row
 * instead of a record kept per order. What it keeps:
 *   - one small record per account;
 *   - the open orders: placed, but whose replayed status is not yet the
 *     status their row ends in (an order awaiting its moves). Every other
 *     order is, at this point of the log, exactly as its row says. In a log
 *     where orders are processed as they come, that is the processing
 *     backlog, not the orders ever placed; `retained` reports the peak;
 *   - rows the side-by-side walk passed before their order.placed (orders
 *     placed out of key order, as after a wall-clock step back): normally
 *     none.
 * Only a failure pays more: naming the seq of an earlier placement scans the
 * log again.
 *
 * The replay is pure: no clock reads, no writes, no I/O of its own. It reads
 * through a `LedgerSource`, so the same code checks an LMDB store (verify,
 * snapshots, the CLI) and the simulator's in-memory image.
 */
import { InvariantError } from '../../platform/index.js';
import { Broken, fail, type BrokenInvariant } from './finding.js';
import { applyEvent, invariantOfType } from './known-events.js';
import type { LedgerSource } from './ledger-source.js';
import { asRaw, isInt } from './raw.js';
import { newReplayState, type ReplayState } from './replay-state.js';
import { reportOf, type VerifyReport } from './report.js';
import { checkTables } from './table-checks.js';

/**
 * Replays the source's whole log and checks every invariant above, stopping
 * at the first one that breaks. Synchronous and read-only: run it where a
 * long loop blocks nobody (a child process, the CLI, the simulator).
 */
export function replayLedger(source: LedgerSource): VerifyReport {
  const state = newReplayState(source);
  let broken: BrokenInvariant | null = null;
  try {
    replayLog(state);
    checkTables(state);
  } catch (error) {
    if (!(error instanceof Broken)) throw error;
    broken = error.finding;
  }
  return reportOf(state, broken);
}

/** Applies every event of the log in seq order, checking the seqs run 1, 2, 3, … without a gap. */
function replayLog(state: ReplayState): void {
  let expectedSeq = 1;
  for (const { key, value } of state.source.events()) {
    const seq = key as unknown;
    if (!isInt(seq) || seq !== expectedSeq) {
      fail(
        'log-sequence',
        isInt(seq) ? seq : null,
        null,
        null,
        `expected seq ${expectedSeq} but found ${String(seq)}; a gap or a foreign key means events are missing or the log was altered.`,
      );
    }
    expectedSeq++;
    state.counts.events++;
    try {
      applyEvent(state, seq, value);
    } catch (error) {
      if (error instanceof Broken || !isValueError(error)) throw error;
      // A rule that throws on a value no check above caught is still a
      // finding at this seq: verify names the event, it does not crash.
      // Anything else (a read that failed, a bug here) is not the log's
      // fault and fails the verification as an error, not a finding.
      const e = asRaw(value);
      const detail = `${String(e.type)} cannot be replayed: ${error.message}.`;
      fail(invariantOfType(e.type), seq, isInt(e.account) ? e.account : null, typeof e.order === 'string' ? e.order : null, detail);
    }
  }
}

/**
 * An error a ledger rule throws on a value it cannot take (an `InvariantError`),
 * or JavaScript's own on a value of the wrong kind (a BigInt where a number
 * belongs): what a malformed event makes replay throw.
 */
function isValueError(error: unknown): error is Error {
  return error instanceof TypeError || error instanceof RangeError || error instanceof InvariantError;
}
