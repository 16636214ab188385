/**
 * Finding a time in the log: the last key written, and the first event
 * stamped at or after a time, by bisecting the keys. The logs are written
 * into a real store with times chosen so that every answer can be read off
 * the list by eye.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/ledger/index.js';
import { firstSeqAtOrAfter, lastLogSeq, type Store } from '../../src/wal/index.js';
import { tempStores } from '../helpers/temp-store.js';

const { open, cleanup } = tempStores('credit-order-api-log-times');
afterEach(cleanup);

function event(atMs: number): LogEvent {
  return { type: 'credits.adjusted', atMs, account: 1, amount: 1, reason: 'test', balance: 1 };
}

/** A store whose log holds one event per entry of `times`, at keys 1, 2, 3, … (or at `keys` when given). */
function logOf(times: number[], keys: number[] = times.map((_, i) => i + 1)): Store {
  const { store } = open();
  times.forEach((atMs, i) => store.log.putSync(keys[i]!, event(atMs)));
  return store;
}

describe('lastLogSeq', () => {
  it('is 0 for an empty log and the highest key otherwise', () => {
    expect(lastLogSeq(logOf([]).log)).toBe(0);
    expect(lastLogSeq(logOf([10, 20, 30]).log)).toBe(3);
  });

  it('reads the log as a transaction opened earlier sees it, not the events written since', () => {
    const store = logOf([10, 20]);
    const transaction = store.root.useReadTransaction();
    try {
      store.log.putSync(3, event(30));
      expect(lastLogSeq(store.log, transaction)).toBe(2);
      expect(lastLogSeq(store.log)).toBe(3);
    } finally {
      transaction.done();
    }
  });
});

describe('firstSeqAtOrAfter', () => {
  it('is 1 for an empty log: one past its last event', () => {
    expect(firstSeqAtOrAfter(logOf([]).log, 5)).toBe(1);
  });

  it('finds the first event at or after each time, and one past the end after the last', () => {
    const { log } = logOf([10, 20, 30, 40, 50]);
    const found = [5, 10, 11, 19, 20, 21, 30, 31, 40, 41, 49, 50, 51, 1000].map((atMs) => firstSeqAtOrAfter(log, atMs));
    expect(found).toEqual([1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 5, 6, 6]);
  });

  it('finds the first of several events stamped at the same time', () => {
    const { log } = logOf([10, 20, 20, 20, 20, 30, 30]);
    expect(firstSeqAtOrAfter(log, 20)).toBe(2);
    expect(firstSeqAtOrAfter(log, 21)).toBe(6);
    expect(firstSeqAtOrAfter(log, 30)).toBe(6);
    expect(firstSeqAtOrAfter(log, 31)).toBe(8);
  });

  it('finds every key of a log of one, two and an odd number of events', () => {
    expect([9, 10, 11].map((t) => firstSeqAtOrAfter(logOf([10]).log, t))).toEqual([1, 1, 2]);
    expect([9, 10, 11, 20, 21].map((t) => firstSeqAtOrAfter(logOf([10, 20]).log, t))).toEqual([1, 1, 2, 2, 3]);
    const times = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
    const { log } = logOf(times.map((t) => t * 100));
    expect(times.map((t) => firstSeqAtOrAfter(log, t * 100))).toEqual(times);
    expect(times.map((t) => firstSeqAtOrAfter(log, t * 100 - 1))).toEqual(times);
    expect(times.map((t) => firstSeqAtOrAfter(log, t * 100 + 1))).toEqual(times.map((t) => t + 1));
  });

  it('takes a missing key as at or after the time: the answer is no later than a gap it meets', () => {
    // Keys 1, 2, 4, 5: the bisection of [1, 6) looks at key 3 first, finds nothing, and keeps to its left.
    const { log } = logOf([10, 20, 40, 50], [1, 2, 4, 5]);
    expect(firstSeqAtOrAfter(log, 45)).toBe(3);
    expect(firstSeqAtOrAfter(log, 15)).toBe(2);
  });
});
