/**
 * Finding a time in the log. Events are appended in the order they are
 * decided and stamped with the wall clock then, so their times grow along
 * the log (a wall clock stepped back leaves a few out of order, which a
 * look-up by time may then place a little early or late). The log's keys
 * run 1, 2, 3, … without a gap (verify's log-sequence check), so a time is
 * found by bisecting the keys: about 25 reads for a log of tens of
 * millions of events, not a walk.
 */
import type { Database, Transaction } from 'lmdb';
import type { LogEvent } from '../ledger/index.js';

/**
 * The key of the last event written (as `transaction` sees the log, when
 * given), 0 when the log is empty. lmdb-js reads an undefined transaction
 * as none given.
 */
export function lastLogSeq(log: Database<LogEvent, number>, transaction?: Transaction): number {
  for (const key of log.getKeys({ reverse: true, limit: 1, transaction })) return key;
  return 0;
}

/** The key of the first event stamped at or after `atMs`, or one past the last event when none is. */
export function firstSeqAtOrAfter(log: Database<LogEvent, number>, atMs: number): number {
  let lo = 1;
  let hi = lastLogSeq(log) + 1;
  // The answer is in [lo, hi]: every key before lo is earlier than atMs, and hi is at or after it (or past the end).
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const event = log.get(mid);
    if (event !== undefined && event.atMs < atMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
