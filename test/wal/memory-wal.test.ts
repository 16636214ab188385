/**
 * The fault controls of the in-memory WAL, beyond the shared contract: what
 * a crash loses, what a failed sync leaves, and that nothing happens unless
 * the simulation makes it happen.
 */
import { describe, expect, it } from 'vitest';
import type { WalEntry } from '../../src/wal/index.js';
import type { LogEvent } from '../../src/ledger/index.js';
import { MemoryWal, tableKeyString } from '../../src/wal/memory-wal.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function entry(amount: number): WalEntry {
  const event: LogEvent = { type: 'credits.adjusted', atMs: 1, account: 1, amount, reason: `r${amount}`, balance: amount };
  return { events: [event], puts: [{ table: 'wallets', key: 1, value: { id: 1, credits: amount } }] };
}

function watch(promise: Promise<void>): { state: string } {
  const w = { state: 'pending' };
  promise.then(
    () => {
      w.state = 'resolved';
    },
    () => {
      w.state = 'rejected';
    },
  );
  return w;
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

  it('rejects nonsense limits at construction', () => {
    expect(() => new MemoryWal({ onFatal: () => {}, batchEntriesMax: 0 })).toThrow(/batchEntriesMax/);
    expect(() => new MemoryWal({ onFatal: () => {}, pendingEntriesMax: 1.5 })).toThrow(/pendingEntriesMax/);
  });
});
