/**
 * The group-commit batch every WAL shares: how entries join the open batch
 * and when a new one begins, that a batch settles once (its listeners
 * first, in order), what an append to a stopped WAL gets, and how pending
 * batches are taken oldest first within a record's or a commit's bound.
 */
import { describe, expect, it } from 'vitest';
import { addToOpenBatch, failedAppend, joined, newBatch, PendingBatches, type Batch } from '../../src/wal/batch.js';
import type { WalEntry } from '../../src/wal/index.js';
import { watch } from '../helpers/promise-state.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function entry(n: number): WalEntry {
  return { events: [], puts: [{ table: 'meta', key: `k${n}`, value: n }] };
}

/** The values of a batch's entries, to compare batches by what they hold. */
const values = (batch: Batch | undefined): unknown[] => batch?.entries.map((e) => e.puts[0]!.value) ?? [];


describe('addToOpenBatch', () => {
  it('starts a batch when there is none, fills it up to entriesMax, then closes it and starts the next', () => {
    const closed: Batch[] = [];
    const first = addToOpenBatch(null, closed, entry(1), 2);
    expect(values(first)).toEqual([1]);
    expect(addToOpenBatch(first, closed, entry(2), 2)).toBe(first);
    expect(closed).toEqual([]);
    const second = addToOpenBatch(first, closed, entry(3), 2);
    expect(second).not.toBe(first);
    expect(closed).toEqual([first]);
    expect([values(first), values(second)]).toEqual([[1, 2], [3]]);
  });
});

describe('newBatch', () => {
  it('tells its listeners, in order, before the promise reactions, and settles once', async () => {
    const batch = newBatch();
    const told: string[] = [];
    batch.listeners.push((error) => told.push(`a:${String(error)}`), (error) => told.push(`b:${String(error)}`));
    void batch.promise.then(() => told.push('reaction'));
    batch.resolve();
    expect(told).toEqual(['a:null', 'b:null']);
    batch.reject(new Error('late'));
    batch.resolve();
    await turn();
    expect(told).toEqual(['a:null', 'b:null', 'reaction']);
  });

  it('a rejected batch stays rejected with its first error; one rejected without an error gets one that says a commit failed', async () => {
    const batch = newBatch();
    const error = new Error('EIO');
    const told: unknown[] = [];
    batch.listeners.push((e) => told.push(e));
    batch.reject(error);
    batch.resolve();
    batch.reject(new Error('second'));
    await expect(batch.promise).rejects.toBe(error);
    expect(told).toEqual([error]);
    for (const nothing of [undefined, null]) {
      const bare = newBatch();
      bare.reject(nothing);
      await expect(bare.promise).rejects.toThrow(new Error('a commit failed'));
    }
  });

  it('a batch rejected with nobody waiting is no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', note);
    try {
      newBatch().reject(new Error('the process is stopping'));
      await turn();
      await turn();
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(unhandled).toEqual([]);
  });
});

describe('joined and failedAppend', () => {
  it('joined returns the batch’s promise and adds the listener only when there is one', () => {
    const batch = newBatch();
    const listener = (): void => {};
    expect(joined(batch, undefined)).toBe(batch.promise);
    expect(batch.listeners).toEqual([]);
    expect(joined(batch, listener)).toBe(batch.promise);
    expect(batch.listeners).toEqual([listener]);
  });

  it('failedAppend rejects with the error and tells the listener only after the caller has its promise', async () => {
    const error = new Error('stopped');
    const told: unknown[] = [];
    const promise = failedAppend(error, (e) => told.push(e));
    expect(told).toEqual([]);
    await expect(promise).rejects.toBe(error);
    expect(told).toEqual([error]);
    await expect(failedAppend(error)).rejects.toBe(error);
  });
});

describe('PendingBatches', () => {
  it('asks for onReady once at the end of the turn however many entries arrive, and again in a later turn', async () => {
    let ready = 0;
    const pending = new PendingBatches(10, () => ready++);
    pending.add(entry(1));
    pending.add(entry(2));
    pending.schedule();
    expect(ready).toBe(0);
    await turn();
    expect(ready).toBe(1);
    pending.add(entry(3));
    await turn();
    expect(ready).toBe(2);
    await turn();
    expect(ready).toBe(2);
  });

  it('keeps batches oldest first: full ones, then a pushed batch after the open one it closes', () => {
    const pending = new PendingBatches(2, () => {});
    expect(pending.empty).toBe(true);
    expect([pending.first(), pending.last()]).toEqual([undefined, undefined]);
    const open = pending.add(entry(1));
    expect(pending.empty).toBe(false);
    expect([pending.first(), pending.last()]).toEqual([open, open]);
    pending.add(entry(2));
    const next = pending.add(entry(3));
    expect([values(pending.first()), values(pending.last())]).toEqual([[1, 2], [3]]);
    const own = newBatch();
    own.entries.push(entry(9));
    pending.push(own);
    expect(pending.last()).toBe(own);
    expect(pending.take(100).map(values)).toEqual([[1, 2], [3], [9]]);
    expect(next.entries).toHaveLength(1);
    expect(pending.empty).toBe(true);
    pending.push(newBatch());
    expect(pending.empty).toBe(false);
  });

  it('takes the oldest batches while their entries stay within the bound and each is accepted; the first always goes', () => {
    const pending = new PendingBatches(3, () => {});
    for (let n = 1; n <= 8; n++) pending.add(entry(n));
    // Batches of 3, 3 and 2 entries.
    expect(pending.take(2).map(values)).toEqual([[1, 2, 3]]);
    expect(pending.take(4).map(values)).toEqual([[4, 5, 6]]);
    for (let n = 9; n <= 11; n++) pending.add(entry(n));
    // Batches of 3 and 2: exactly the bound.
    expect(pending.take(5).map(values)).toEqual([[7, 8, 9], [10, 11]]);
    for (let n = 16; n <= 21; n++) pending.add(entry(n));
    expect(pending.take(100, (b) => values(b)[0] !== 19).map(values)).toEqual([[16, 17, 18]]);
    expect(pending.take(100, () => false).map(values)).toEqual([[19, 20, 21]]);
    expect(pending.take(100)).toEqual([]);
  });

  it('rejectAll rejects the closed batches and the open one', async () => {
    const pending = new PendingBatches(1, () => {});
    const promises = [pending.add(entry(1)).promise, pending.add(entry(2)).promise];
    const states = promises.map(watch);
    const error = new Error('EIO');
    pending.rejectAll(error);
    await turn();
    expect(states).toEqual([{ state: 'rejected', error }, { state: 'rejected', error }]);
  });
});
