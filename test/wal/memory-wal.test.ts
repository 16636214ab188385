/**
 * The fault controls of the in-memory WAL, beyond the shared contract: what
 * a crash loses, what a failed sync leaves, and that nothing happens unless
 * the simulation makes it happen.
 */
import { describe, expect, it } from 'vitest';
import type { WalEntry } from '../../src/wal/index.js';
import type { LogEvent } from '../../src/ledger/index.js';
import { MemoryWal, tableKeyString, type DurableImage } from '../../src/wal/memory-wal.js';
import { watch } from '../helpers/promise-state.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function entry(amount: number): WalEntry {
  const event: LogEvent = { type: 'credits.adjusted', atMs: 1, account: 1, amount, reason: `r${amount}`, balance: amount };
  return { events: [event], puts: [{ table: 'wallets', key: 1, value: { id: 1, credits: amount } }] };
}


/** The message of what `fn` throws. */
function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return 'nothing thrown';
}

const amounts = (wal: MemoryWal): number[] => wal.durableImage().events.map((e) => (e as { amount: number }).amount);

describe('MemoryWal faults', () => {
  it('no sync without the simulation: an appended entry stays pending across event-loop turns', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    const w = watch(wal.append(entry(1)));
    for (let i = 0; i < 10; i++) await turn();
    expect(w.state).toBe('pending');
    expect(wal.durableImage().events).toEqual([]);
    expect(wal.step()).toBe(1);
    await turn();
    expect(w.state).toBe('resolved');
    expect(wal.step()).toBe(0);
  });

  it('crash: every unsynced batch is lost, its promise never settles, and the instance refuses appends', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    const synced = watch(wal.append(entry(1)));
    wal.seal();
    const lostSealed = watch(wal.append(entry(2)));
    // The oldest batch syncs first; the second stays unsynced.
    expect(wal.step()).toBe(1);
    wal.seal();
    const lostOpen = watch(wal.append(entry(3)));
    expect(wal.unsyncedBatches).toBe(2);
    expect(wal.crash()).toBe(2);
    for (let i = 0; i < 5; i++) await turn();
    expect([synced.state, lostSealed.state, lostOpen.state]).toEqual(['resolved', 'pending', 'pending']);
    expect(wal.crashed).toBe(true);
    expect(amounts(wal)).toEqual([1]);
    expect(() => wal.append(entry(4))).toThrow(/crashed/);
    expect(wal.syncAll()).toBe(0);
  });

  it('crash before any sync loses everything appended, and the lost promises stay pending', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    const lost = watch(wal.append(entry(1)));
    wal.crash();
    for (let i = 0; i < 5; i++) await turn();
    expect(lost.state).toBe('pending');
    expect(wal.durableImage().events).toEqual([]);
  });

  it('dropUnsynced: a power cut under a live WAL loses the tail but later appends still work', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    const lost = watch(wal.append(entry(1)));
    expect(wal.dropUnsynced()).toBe(1);
    expect(wal.stats().pendingEntries).toBe(0);
    const kept = watch(wal.append(entry(2)));
    wal.syncAll();
    await turn();
    expect([lost.state, kept.state]).toEqual(['pending', 'resolved']);
    expect(amounts(wal)).toEqual([2]);
  });

  it('failed sync (not durable): the batch and every later one reject, onFatal runs once, nothing lands', async () => {
    const fatals: unknown[] = [];
    const wal = new MemoryWal({ onFatal: (e) => fatals.push(e) });
    wal.append(entry(1));
    wal.syncAll();
    const failing = watch(wal.append(entry(2)));
    wal.seal();
    const later = watch(wal.append(entry(3)));
    const error = new Error('EIO');
    wal.failNextCommit(error);
    expect(wal.syncAll()).toBe(0);
    await turn();
    expect([failing.state, later.state]).toEqual(['rejected', 'rejected']);
    expect(fatals).toEqual([error]);
    expect(wal.failure).toBe(error);
    await expect(wal.append(entry(4))).rejects.toBe(error);
    await expect(wal.flushed()).rejects.toBe(error);
    expect(amounts(wal)).toEqual([1]);
  });

  it('failed sync (durable): the batch reached the disk but nobody is told', async () => {
    const fatals: unknown[] = [];
    const wal = new MemoryWal({ onFatal: (e) => fatals.push(e) });
    const w = watch(wal.append(entry(1)));
    wal.failNextCommit(new Error('fsync reported EIO'), { durable: true });
    wal.step();
    await turn();
    expect(w.state).toBe('rejected');
    expect(fatals).toHaveLength(1);
    expect(amounts(wal)).toEqual([1]);
  });

  it('the durable image is a deep copy, both ways', () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    const e = entry(5);
    wal.append(e);
    // Mutating after append changes nothing durable.
    (e.puts[0]!.value as { credits: number }).credits = 999;
    wal.syncAll();
    const image = wal.durableImage();
    expect(image.tables.wallets.get(tableKeyString(1))).toEqual({ id: 1, credits: 5 });
    (image.tables.wallets.get(tableKeyString(1)) as { credits: number }).credits = 7;
    image.events.length = 0;
    expect(wal.get('wallets', 1)).toEqual({ id: 1, credits: 5 });
    expect(wal.durableEvents).toBe(1);
  });

  it('a restart from a durable image continues the log after it', async () => {
    const first = new MemoryWal({ onFatal: () => {} });
    first.append(entry(1));
    first.syncAll();
    first.append(entry(2));
    first.crash();
    const second = new MemoryWal({ onFatal: () => {}, initial: first.durableImage() });
    expect(amounts(second)).toEqual([1]);
    expect(second.get('wallets', 1)).toEqual({ id: 1, credits: 1 });
    second.append(entry(3));
    second.syncAll();
    expect(amounts(second)).toEqual([1, 3]);
    // The first instance's image is not shared with the second.
    expect(amounts(first)).toEqual([1]);
  });

  it('batchEntriesMax splits a full batch: each batch has its own promise and its own sync', async () => {
    const wal = new MemoryWal({ onFatal: () => {}, batchEntriesMax: 2 });
    const ps = [wal.append(entry(1)), wal.append(entry(2)), wal.append(entry(3))];
    expect(ps[1]).toBe(ps[0]);
    expect(ps[2]).not.toBe(ps[0]);
    const third = watch(ps[2]!);
    expect(wal.step()).toBe(2);
    await turn();
    expect(third.state).toBe('pending');
    expect(wal.step()).toBe(1);
    await turn();
    expect(third.state).toBe('resolved');
    expect(wal.stats()).toMatchObject({ batches: 2, entries: 3, events: 3, lastBatchEntries: 1, pendingEntries: 0 });
  });

  it('rejects nonsense limits at construction, and takes 1', () => {
    expect(thrown(() => new MemoryWal({ onFatal: () => {}, batchEntriesMax: 0 }))).toBe('invariant: batchEntriesMax must be a positive integer; got 0');
    expect(thrown(() => new MemoryWal({ onFatal: () => {}, batchEntriesMax: 1.5 }))).toBe('invariant: batchEntriesMax must be a positive integer; got 1.5');
    expect(thrown(() => new MemoryWal({ onFatal: () => {}, pendingEntriesMax: 1.5 }))).toBe('invariant: pendingEntriesMax must be a positive integer; got 1.5');
    expect(thrown(() => new MemoryWal({ onFatal: () => {}, pendingEntriesMax: 0 }))).toBe('invariant: pendingEntriesMax must be a positive integer; got 0');
    const wal = new MemoryWal({ onFatal: () => {}, batchEntriesMax: 1, pendingEntriesMax: 1 });
    const [a, b] = [wal.append(entry(1)), wal.append(entry(2))];
    expect(b).not.toBe(a);
    expect(wal.overloaded()).toBe(true);
  });

  it('counts what waits for a sync: entries, batches (the open one too), and a seal with nothing open adds none', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    wal.seal();
    expect([wal.unsyncedEntries, wal.unsyncedBatches, wal.crashed, wal.failure]).toEqual([0, 0, false, null]);
    const first = watch(wal.append(entry(1)));
    void wal.append(entry(2));
    expect([wal.unsyncedEntries, wal.unsyncedBatches]).toEqual([2, 1]);
    wal.seal();
    wal.seal();
    expect([wal.unsyncedEntries, wal.unsyncedBatches]).toEqual([2, 1]);
    const flushed = watch(wal.flushed());
    expect(wal.step()).toBe(2);
    await turn();
    expect([first.state, flushed.state]).toEqual(['resolved', 'resolved']);
    expect(wal.stats()).toEqual({ batches: 1, commits: 1, entries: 2, events: 2, lastBatchEntries: 2, lastSyncMs: 0, pendingEntries: 0 });
    await wal.flushed();
  });

  it('flushed() waits for the last batch, sealed or open', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    void wal.append(entry(1));
    wal.seal();
    const afterSealed = watch(wal.flushed());
    void wal.append(entry(2));
    const afterOpen = watch(wal.flushed());
    expect(wal.step()).toBe(1);
    await turn();
    expect([afterSealed.state, afterOpen.state]).toEqual(['resolved', 'pending']);
    expect(wal.step()).toBe(1);
    await turn();
    expect(afterOpen.state).toBe('resolved');
  });

  it('close() waits for what was appended and then refuses appends; a crashed WAL refuses them with its own sentence', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    void wal.append(entry(1));
    const closing = watch(wal.close());
    await turn();
    expect(closing.state).toBe('pending');
    wal.syncAll();
    await turn();
    expect(closing.state).toBe('resolved');
    expect(thrown(() => wal.append(entry(2)))).toBe('invariant: no append after the WAL was closed');
    const crashed = new MemoryWal({ onFatal: () => {} });
    crashed.crash();
    expect(thrown(() => crashed.append(entry(1)))).toBe('invariant: no append after the simulated process crashed');
  });

  it('a failed sync rejects the open batch too, and tells the listener of an append after it', async () => {
    const fatals: unknown[] = [];
    const wal = new MemoryWal({ onFatal: (e) => fatals.push(e) });
    const failing = watch(wal.append(entry(1)));
    wal.seal();
    const sealed = watch(wal.append(entry(2)));
    wal.seal();
    const open = watch(wal.append(entry(3)));
    const error = new Error('EIO');
    wal.failNextCommit(error);
    expect(wal.step()).toBe(0);
    await turn();
    expect([failing.state, sealed.state, open.state]).toEqual(['rejected', 'rejected', 'rejected']);
    expect(wal.unsyncedBatches).toBe(0);
    const told: unknown[] = [];
    await expect(wal.appendSettled(entry(4), (e) => told.push(e))).rejects.toBe(error);
    expect(told).toEqual([error]);
    expect(wal.step()).toBe(0);
    expect(fatals).toEqual([error]);
  });

  it('keeps the number 1 and the string "1" apart as keys, and reads a missing row as undefined', () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    void wal.append({ events: [], puts: [{ table: 'meta', key: 1, value: 'number' }, { table: 'meta', key: '1', value: 'string' }, { table: 'meta', key: [1, 'a'], value: 'array' }] });
    wal.syncAll();
    expect([wal.get('meta', 1), wal.get('meta', '1'), wal.get('meta', [1, 'a']), wal.get('meta', 2)]).toEqual(['number', 'string', 'array', undefined]);
    expect([tableKeyString(1), tableKeyString('1'), tableKeyString([1, 'a'])]).toEqual(['1', '"1"', '[1,"a"]']);
  });

  it('starts from an image that lacks a table with that table empty', () => {
    const partial = { events: [], tables: { wallets: new Map([[tableKeyString(1), { id: 1, credits: 3 }]]) } } as unknown as DurableImage;
    const wal = new MemoryWal({ onFatal: () => {}, initial: partial });
    expect([wal.get('wallets', 1), wal.get('orders', 'x')]).toEqual([{ id: 1, credits: 3 }, undefined]);
    expect(wal.durableImage().tables.orders).toEqual(new Map());
  });
});

describe('MemoryWal syncs', () => {
  it('flushed() waits for the newest of several sealed batches, and syncAll returns the entries it synced', async () => {
    const wal = new MemoryWal({ onFatal: () => {} });
    void wal.append(entry(1));
    void wal.append(entry(2));
    wal.seal();
    void wal.append(entry(3));
    wal.seal();
    const flushed = watch(wal.flushed());
    await turn();
    expect(flushed.state).toBe('pending');
    expect(wal.step()).toBe(2);
    await turn();
    expect(flushed.state).toBe('pending');
    void wal.append(entry(4));
    expect(wal.syncAll()).toBe(2);
    await turn();
    expect(flushed.state).toBe('resolved');
    expect(amounts(wal)).toEqual([1, 2, 3, 4]);
  });

  it('has no read barrier: nothing is visible before its batch is acknowledged', () => {
    expect(new MemoryWal({ onFatal: () => {} }).readBarrier()).toBeNull();
  });
});
