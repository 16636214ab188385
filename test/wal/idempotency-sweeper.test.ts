/**
 * The Idempotency-Key sweep on the real LMDB store and group commit, with an
 * injected clock: it keeps the table bounded at the highest keyed order rate
 * measured (bench: 15,500–17,400 keyed orders/s), in bounded steps. (Expired
 * keys behind fresh ones, against the real server, are in
 * test/http/idempotency.test.ts.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { IdempotencyRecord } from '../../src/ledger/index.js';
import { IdempotencySweeper, idempotencyExpiryKey, LmdbGroupCommit, STRUCTURES_KEY, type TablePut } from '../../src/wal/index.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempStores } from '../helpers/temp-store.js';

const { open, cleanup } = tempStores('credit-order-api-sweep');
afterEach(cleanup);

const record = (atMs: number): IdempotencyRecord => ({ fingerprint: 'f', status: 201, body: '{}', order: null, atMs });

describe('Idempotency-Key sweep', () => {
  it('keeps the table bounded at 17,500 keyed orders/s for 12 simulated seconds, in steps of at most 2,000', async () => {
    const { store } = open();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const clock = new ManualClock();
    const retentionMs = 2_000;
    const stepMax = 2_000;
    const sweeper = new IdempotencySweeper(store, wal, clock, retentionMs, () => false, stepMax);
    const perTick = 1_750; // 17,500/s in ticks of 100 ms
    const table = store.tables.idempotency;
    let written = 0;
    let removed = 0;
    let steps = 0;
    let largest = 0;
    for (let tick = 1; tick <= 120; tick++) {
      clock.advance(100);
      const puts: TablePut[] = [];
      for (let i = 0; i < perTick; i++) {
        // Keys in an order that has nothing to do with time, accounts mixed.
        const key = `${(written * 7919) % 50}:k${written}`;
        puts.push({ table: 'idempotency', key, value: record(clock.wallMs()) });
        puts.push({ table: 'idempotencyExpiry', key: idempotencyExpiryKey(clock.wallMs(), key), value: 1 });
        written++;
      }
      await wal.append({ events: [], puts });
      if (tick % 10 === 0) {
        // The server sweeps every minute of wall time; here every simulated second.
        const before = table.getCount();
        const swept = await sweeper.runOnce();
        removed += swept.removed;
        steps += swept.steps;
        expect(swept.steps).toBeGreaterThanOrEqual(Math.ceil(swept.removed / stepMax));
        // Everything older than the retention is gone; what is left is at
        // most retention × rate (the ticks in [now − retention, now]).
        const left = table.getCount();
        largest = Math.max(largest, before);
        expect(left).toBe(Math.min(tick, retentionMs / 100 + 1) * perTick);
        let oldest = Infinity;
        for (const { value } of table.getRange()) oldest = Math.min(oldest, (value as IdempotencyRecord).atMs);
        expect(oldest).toBeGreaterThanOrEqual(clock.wallMs() - retentionMs);
        expect(sweeper.stats()).toEqual({ records: left, oldestAgeMs: clock.wallMs() - oldest });
      }
    }
    expect(written).toBe(210_000);
    // Retention plus one sweep interval of records at most, ever.
    expect(largest).toBe(((retentionMs + 1_000) / 100 + 1) * perTick);
    expect(removed).toBe(written - table.getCount());
    expect(steps).toBeGreaterThan(written / 10 / stepMax);
    await wal.close();
  }, 120_000);

  it('keeps a record used again, whether its new copy is durable or still pending in its wallet, and removes only stale index entries', async () => {
    const { store } = open();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const clock = new ManualClock();
    const put = (key: string): TablePut[] => [
      { table: 'idempotency', key, value: record(clock.wallMs()) },
      { table: 'idempotencyExpiry', key: idempotencyExpiryKey(clock.wallMs(), key), value: 1 },
    ];
    await wal.append({ events: [], puts: [...put('1:old'), ...put('1:durable'), ...put('2:pending')] });
    clock.advance(2_000);
    // '1:durable' was used again and its new record landed; '2:pending' was used again and its wallet holds the new record, not yet durable.
    await wal.append({ events: [], puts: put('1:durable') });
    const asked: string[] = [];
    const sweeper = new IdempotencySweeper(store, wal, clock, 1_000, (key) => (asked.push(key), key === '2:pending'));
    expect(await sweeper.runOnce()).toEqual({ removed: 3, steps: 1 });
    expect([...store.tables.idempotency.getKeys()].sort()).toEqual(['1:durable', '2:pending']);
    expect([...store.tables.idempotencyExpiry.getKeys()].map((k) => (k as [number, string])[1])).toEqual(['1:durable']);
    // The durable copy already shows '1:durable' is fresh: its wallet is not asked.
    expect(asked.sort()).toEqual(['1:old', '2:pending']);
    await wal.close();
  });
});

describe('Idempotency-Key sweep: its bounds', () => {
  /** A store and sweeper with records written at the given times (ms after the clock's start). */
  async function swept(atMs: number[], options: { retentionMs: number; stepMax: number; nowMs: number }) {
    const { store } = open();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const clock = new ManualClock();
    const start = clock.wallMs();
    const puts: TablePut[] = atMs.flatMap((at, i) => [
      { table: 'idempotency' as const, key: `1:k${i}`, value: record(start + at) },
      { table: 'idempotencyExpiry' as const, key: idempotencyExpiryKey(start + at, `1:k${i}`), value: 1 },
    ]);
    if (puts.length > 0) await wal.append({ events: [], puts });
    clock.advance(options.nowMs);
    const sweeper = new IdempotencySweeper(store, wal, clock, options.retentionMs, () => false, options.stepMax);
    const keys = (): string[] => [...store.tables.idempotency.getKeys()].map(String).sort();
    return { store, wal, clock, sweeper, keys };
  }

  it('keeps a record exactly as old as the retention and removes one a millisecond older', async () => {
    const { sweeper, keys, wal } = await swept([0, 1, 2], { retentionMs: 1_000, stepMax: 10, nowMs: 1_001 });
    expect(await sweeper.runOnce()).toEqual({ removed: 1, steps: 1 });
    expect(keys()).toEqual(['1:k1', '1:k2']);
    await wal.close();
  });

  it('a step takes at most stepMax entries and says more may remain only when it took that many; nothing expired writes nothing', async () => {
    const { sweeper, keys, wal } = await swept([0, 0, 0, 0, 0, 50], { retentionMs: 10, stepMax: 3, nowMs: 20 });
    expect(await sweeper.step()).toEqual({ removed: 3, more: true });
    expect(await sweeper.step()).toEqual({ removed: 2, more: false });
    expect(keys()).toEqual(['1:k5']);
    const commits = wal.stats().commits;
    expect(await sweeper.step()).toEqual({ removed: 0, more: false });
    expect(await sweeper.runOnce()).toEqual({ removed: 0, steps: 1 });
    expect(wal.stats().commits).toBe(commits);
    await wal.close();
  });

  it('a sweep steps until a step takes fewer than stepMax, and one sweep runs at a time', async () => {
    const { sweeper, keys, wal } = await swept([0, 0, 0, 0, 0, 0], { retentionMs: 10, stepMax: 3, nowMs: 20 });
    const first = sweeper.runOnce();
    expect(sweeper.runOnce()).toBe(first);
    expect(await first).toEqual({ removed: 6, steps: 3 });
    expect(sweeper.runOnce()).not.toBe(first);
    expect(keys()).toEqual([]);
    await wal.close();
  });

  it('a stopped sweeper ends a running sweep after its step', async () => {
    const { sweeper, keys, wal } = await swept([0, 0, 0, 0, 0], { retentionMs: 10, stepMax: 2, nowMs: 20 });
    const running = sweeper.runOnce();
    await sweeper.stop();
    expect(await running).toEqual({ removed: 2, steps: 1 });
    expect(keys()).toEqual(['1:k2', '1:k3', '1:k4']);
    await wal.close();
  });

  it('runs on its interval once started, and stops', async () => {
    const { sweeper, keys, wal } = await swept([0], { retentionMs: 10, stepMax: 2, nowMs: 20 });
    const errors: unknown[] = [];
    sweeper.start(1, (e) => errors.push(e));
    await waitFor('the started sweeper removing the expired record', () => keys().length === 0);
    await sweeper.stop();
    expect(errors).toEqual([]);
    await wal.close();
  });

  it('counts the records without the table’s shared structures, and the age of the oldest, never below 0', async () => {
    const { sweeper, store, clock, wal } = await swept([5, 7], { retentionMs: 1_000, stepMax: 2, nowMs: 0 });
    const structures = store.tables.idempotency.doesExist(STRUCTURES_KEY);
    expect((store.tables.idempotency.getStats() as { entryCount: number }).entryCount).toBe(structures ? 3 : 2);
    expect(sweeper.stats()).toEqual({ records: 2, oldestAgeMs: 0 });
    clock.advance(15);
    expect(sweeper.stats()).toEqual({ records: 2, oldestAgeMs: 10 });
    await wal.close();
    const empty = await swept([], { retentionMs: 1_000, stepMax: 2, nowMs: 50 });
    expect(empty.sweeper.stats()).toEqual({ records: 0, oldestAgeMs: 0 });
  });
});

describe('Idempotency-Key sweep: edges', () => {
  it('removes an index entry whose record is gone, keeps a record used again exactly at the cutoff, and writes no log event', async () => {
    const { store } = open();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const clock = new ManualClock();
    const start = clock.wallMs();
    await wal.append({
      events: [],
      puts: [
        { table: 'idempotencyExpiry', key: idempotencyExpiryKey(start, '1:gone'), value: 1 },
        { table: 'idempotency', key: '1:again', value: record(start + 1_000) },
        { table: 'idempotencyExpiry', key: idempotencyExpiryKey(start, '1:again'), value: 1 },
      ],
    });
    clock.advance(2_000);
    const logBefore = [...store.log.getKeys()].length;
    const sweeper = new IdempotencySweeper(store, wal, clock, 1_000, () => false);
    expect(await sweeper.runOnce()).toEqual({ removed: 2, steps: 1 });
    expect([...store.tables.idempotency.getKeys()]).toEqual(['1:again']);
    expect([...store.tables.idempotencyExpiry.getKeys()]).toEqual([]);
    expect([...store.log.getKeys()].length).toBe(logBefore);
    await wal.close();
  });

  it('stop clears its interval', async () => {
    const { store } = open();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const sweeper = new IdempotencySweeper(store, wal, new ManualClock(), 1_000, () => false);
      sweeper.start(60_000, (e) => expect.fail(String(e)));
      expect(vi.getTimerCount()).toBe(1);
      await sweeper.stop();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    await wal.close();
  });
});
