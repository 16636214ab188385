/**
 * What only the LMDB group commit does: several batches queued to LMDB's
 * write thread at once, the chain version that keeps a batch from landing
 * after one that did not, and the choice between the queued way and the
 * child-transaction way of writing a batch.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHAIN_KEY, LmdbGroupCommit, openStore, ORDER_COUNTS_KEY, type Store, type WalEntry, type WalStats } from '../../src/wal/index.js';
import { type LogEvent } from '../../src/ledger/index.js';
import { keysFit, queueable } from '../../src/wal/group-commit.js';
import { KEY_CHARS_MAX, LMDB_KEY_BYTES_MAX } from '../../src/wal/limits.js';
import { watch } from '../helpers/promise-state.js';
import { tempStores } from '../helpers/temp-store.js';
import { waitFor } from '../helpers/wait-for.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let counter = 0;
function entry(account: number, amount: number): WalEntry {
  counter++;
  const event: LogEvent = { type: 'credits.adjusted', atMs: counter, account, amount, reason: `r${counter}`, balance: amount };
  return { events: [event], puts: [{ table: 'wallets', key: account, value: { id: account, credits: amount } }] };
}

function amounts(store: Store): number[] {
  return [...store.log.getRange({})].map(({ value }) => (value as { amount: number }).amount);
}

const { open, cleanup } = tempStores('group-commit');

/**
 * Holds LMDB's write lock on `dir` from another process (an empty write
 * transaction that waits for a byte on its stdin), so that this process's
 * write thread waits for it: batches queue behind the lock whatever the
 * disk's speed, and `release` lets them through.
 */
async function holdWriteLock(dir: string): Promise<{ release(): Promise<void> }> {
  const script = `
    import { open } from 'lmdb';
    import { readSync } from 'node:fs';
    const env = open({ path: ${JSON.stringify(dir)}, maxDbs: 32 });
    env.transactionSync(() => { process.stdout.write('locked\\n'); readSync(0, Buffer.alloc(1)); });
    await env.close();`;
  const holder = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => holder.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    void exited.then((code) => reject(new Error(`the lock holder exited (${String(code)}) before taking the lock`)));
  });
  return {
    async release() {
      holder.stdin.end('x');
      expect(await exited).toBe(0);
    },
  };
}

/** A group commit on the store, with the fatal errors it reports. */
function groupCommit(store: Store): { wal: LmdbGroupCommit; fatals: unknown[] } {
  const fatals: unknown[] = [];
  return { wal: new LmdbGroupCommit(store, { onFatal: (e) => fatals.push(e) }), fatals };
}

/**
 * After a first commit (which writes the log's record structures, a
 * synchronous write the lock would block), appends five entries in each of
 * 50 turns while another process holds the write lock, then releases it.
 * Checks that nothing landed under the lock and that the 250 entries were
 * acknowledged in append order; returns the stats before, the order, and
 * the pending entries while the lock was held.
 */
async function turnsBehindLock(wal: LmdbGroupCommit, dir: string): Promise<{ before: WalStats; acknowledged: number[]; pendingUnderLock: number }> {
  await wal.append(entry(7, -1));
  const before = wal.stats();
  const lock = await holdWriteLock(dir);
  const acknowledged: number[] = [];
  const all: Promise<void>[] = [];
  for (let t = 0; t < 50; t++) {
    for (let i = 0; i < 5; i++) {
      const amount = t * 5 + i;
      all.push(wal.append(entry(1 + (amount % 7), amount)).then(() => void acknowledged.push(amount)));
    }
    await turn();
  }
  // Nothing can have landed while another process holds the write lock.
  expect(acknowledged).toEqual([]);
  const pendingUnderLock = wal.stats().pendingEntries;
  await lock.release();
  await Promise.all(all);
  expect(acknowledged).toEqual(Array.from({ length: 250 }, (_, i) => i));
  return { before, acknowledged, pendingUnderLock };
}

afterEach(cleanup);

describe('LMDB group commit', () => {
  it('queues batches from many turns while earlier ones are being written, acknowledges them in order, and is idle only once none is in flight', async () => {
    const { store, dir } = open();
    const fatals: unknown[] = [];
    const pendingWhenIdle: number[] = [];
    const wal: LmdbGroupCommit = new LmdbGroupCommit(store, { onFatal: (e) => fatals.push(e), onIdle: () => pendingWhenIdle.push(wal.stats().pendingEntries) });
    const { before, acknowledged } = await turnsBehindLock(wal, dir);
    expect(fatals).toEqual([]);
    // Idle after the first commit and after the last of the 50: never while one of them was still in flight.
    expect(pendingWhenIdle.length).toBeGreaterThanOrEqual(2);
    expect(pendingWhenIdle.every((pending) => pending === 0)).toBe(true);
    const stats = wal.stats();
    expect(stats.batches - before.batches).toBe(50);
    expect(stats.entries - before.entries).toBe(250);
    // LMDB's write thread took the waiting batches into one commit (two if it had begun one with the first batch alone).
    expect(stats.commits - before.commits).toBeLessThanOrEqual(2);
    await store.close();
    const reopened = open(dir).store;
    expect(amounts(reopened)).toEqual([-1, ...acknowledged]);
    expect(reopened.chain.getEntry(CHAIN_KEY)?.version).toBe(51);
  });

  it('while every commit slot is taken, the entries of every later turn wait in one open batch and go as one commit, acknowledged in order', async () => {
    const { store, dir } = open();
    const fatals: unknown[] = [];
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => fatals.push(e), commitsInFlightMax: 1 });
    const { before, acknowledged, pendingUnderLock } = await turnsBehindLock(wal, dir);
    // The first turn's batch is in flight; the other 49 turns share the open batch.
    expect(pendingUnderLock).toBe(250);
    expect(fatals).toEqual([]);
    const stats = wal.stats();
    expect(stats.batches - before.batches).toBe(2);
    expect(stats.entries - before.entries).toBe(250);
    expect(stats.lastBatchEntries).toBe(245);
    expect(stats.commits - before.commits).toBe(2);
    await store.close();
    const reopened = open(dir).store;
    expect(amounts(reopened)).toEqual([-1, ...acknowledged]);
    expect(reopened.chain.getEntry(CHAIN_KEY)?.version).toBe(3);
  });

  it('a batch whose predecessor did not land writes nothing, stops the WAL, and nothing after it is acknowledged', async () => {
    const { store, dir } = open();
    const { wal, fatals } = groupCommit(store);
    await wal.append(entry(1, 10));
    // As if the commit before the next one had failed: the chain version is
    // not the one the next batch was queued after.
    store.chain.putSync(CHAIN_KEY, 99, 99);
    const lost = wal.append(entry(1, 20));
    await expect(lost).rejects.toThrow(/did not land/);
    expect(fatals).toHaveLength(1);
    await expect(wal.append(entry(1, 30))).rejects.toBe(fatals[0]);
    await store.close();
    const reopened = open(dir).store;
    expect(amounts(reopened)).toEqual([10]);
    expect(reopened.tables.wallets.get(1)).toEqual({ id: 1, credits: 10 });
  });

  it('a restart continues the chain where the last commit left it', async () => {
    const { store, dir } = open();
    const first = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    await first.append(entry(1, 1));
    await turn();
    await first.append(entry(1, 2));
    await first.close();
    await store.close();
    const { store: again } = open(dir);
    const { wal: second, fatals } = groupCommit(again);
    await second.append(entry(1, 3));
    expect(fatals).toEqual([]);
    expect(amounts(again)).toEqual([1, 2, 3]);
    expect(again.chain.getEntry(CHAIN_KEY)?.version).toBe(3);
  });

  // lmdb-js throws while queueing a put with a key like [] after the puts
  // before it were queued: such a batch must go the child-transaction way,
  // or the first half of it would land.
  it('a batch with a key that could throw while queued is written whole or not at all', async () => {
    const { store, dir } = open();
    const { wal, fatals } = groupCommit(store);
    await wal.append(entry(1, 10));
    const bad: WalEntry = { ...entry(1, 20), puts: [{ table: 'wallets', key: 1, value: { id: 1, credits: 20 } }, { table: 'meta', key: [] as unknown as string, value: 1 }] };
    await expect(wal.append(bad)).rejects.toThrow();
    expect(fatals).toHaveLength(1);
    await store.close();
    const reopened = open(dir).store;
    expect(amounts(reopened)).toEqual([10]);
    expect(reopened.tables.wallets.get(1)).toEqual({ id: 1, credits: 10 });
  });

  it('a batch written by a callback (a long key) waits for the queued ones, runs alone, and the later ones follow in order', async () => {
    const { store, dir } = open();
    const { wal, fatals } = groupCommit(store);
    const acknowledged: string[] = [];
    const track = (name: string, p: Promise<void>): Promise<void> => p.then(() => void acknowledged.push(name));
    const all: Promise<void>[] = [];
    // 700 characters: LMDB takes it, but it is beyond the shapes queued as a block.
    const long = `1:${'k'.repeat(700)}`;
    all.push(track('t1', wal.append({ events: [], puts: [{ table: 'idempotency', key: '1:a', value: { atMs: 10 } }, { table: 'idempotency', key: '1:b', value: { atMs: 10 } }] })));
    await turn();
    // Turn 2, while turn 1 may still be in flight.
    const removes = [{ table: 'idempotency' as const, key: '1:a' }, { table: 'idempotency' as const, key: '1:b' }];
    all.push(track('callback', wal.append({ events: [], puts: [{ table: 'idempotency', key: long, value: { atMs: 20 } }], removes })));
    await turn();
    // Turn 3, queued behind it: it writes the removed key again.
    all.push(track('t3', wal.append({ events: [], puts: [{ table: 'idempotency', key: '1:a', value: { atMs: 30 } }] })));
    await Promise.all(all);
    expect(fatals).toEqual([]);
    expect(acknowledged).toEqual(['t1', 'callback', 't3']);
    await store.close();
    const reopened = open(dir).store;
    expect(reopened.tables.idempotency.get(long)).toEqual({ atMs: 20 });
    expect(reopened.tables.idempotency.get('1:a')).toEqual({ atMs: 30 });
    expect(reopened.tables.idempotency.get('1:b')).toBeUndefined();
  });

  it('keeps the orders-by-status counts row in the same commits as the orders, and counts the index when a directory has none', async () => {
    const { store, dir } = open();
    // A directory with orders in its index but no counts row yet.
    store.root.transactionSync(() => {
      store.tables.orderIndex.put(['pending', 1, 1, 'a'], 1);
      store.tables.orderIndex.put(['completed', 1, 2, 'b'], 1);
    });
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    expect(store.tables.meta.get(ORDER_COUNTS_KEY)).toMatchObject({ pending: 1, completed: 1, canceled: 0 });
    const placed: LogEvent = {
      type: 'order.placed', atMs: 1, account: 1, order: 'c', service: 1, quantity: 1, rate: 1, charge: 1, debit: 1, balance: 0, channel: 'api', idempotencyKey: null,
    };
    const moved: LogEvent = { type: 'order.status', atMs: 2, account: 1, order: 'a', from: 'pending', to: 'canceled', remains: null, refund: 1, balance: 1 };
    wal.append({ events: [placed], puts: [] });
    await turn();
    await wal.append({ events: [moved], puts: [] });
    await wal.close();
    await store.close();
    const reopened = open(dir).store;
    expect(reopened.tables.meta.get(ORDER_COUNTS_KEY)).toEqual({ pending: 1, processing: 0, in_progress: 0, completed: 1, partial: 0, canceled: 1 });
  });

  it('only batches whose keys surely fit are queued', () => {
    const plain = entry(1, 1);
    expect(queueable([plain])).toBe(true);
    expect(queueable([{ ...plain, puts: [{ table: 'orderIndex', key: ['pending', 1, 2, 'id'], value: 1 }] }])).toBe(true);
    expect(queueable([{ ...plain, puts: [{ table: 'meta', key: 'k'.repeat(3_000), value: 1 }] }])).toBe(false);
    expect(queueable([{ ...plain, puts: [{ table: 'meta', key: '', value: 1 }] }])).toBe(false);
    expect(queueable([{ ...plain, puts: [{ table: 'meta', key: [] as unknown as string, value: 1 }] }])).toBe(false);
    expect(queueable([{ ...plain, puts: [{ table: 'meta', key: Number.NaN, value: 1 }] }])).toBe(false);
    expect(queueable([{ ...plain, removes: [{ table: 'idempotency', key: '1:a' }] }])).toBe(true);
    expect(queueable([plain, { ...plain, removes: [{ table: 'idempotency', key: 'k'.repeat(700) }] }])).toBe(false);
  });

  it('takes a key up to its bounds and refuses one past them: characters, parts of an array, non-finite numbers, empty parts', () => {
    const withKey = (key: unknown): WalEntry[] => [{ ...entry(1, 1), puts: [{ table: 'meta', key: key as string, value: 1 }] }];
    expect(queueable(withKey('k'.repeat(KEY_CHARS_MAX)))).toBe(true);
    expect(queueable(withKey('k'.repeat(KEY_CHARS_MAX + 1)))).toBe(false);
    expect(queueable(withKey(Number.POSITIVE_INFINITY))).toBe(false);
    expect(queueable(withKey(0))).toBe(true);
    expect(queueable(withKey(true))).toBe(false);
    expect(queueable(withKey([1, 2, 3, 4, 5, 6, 7, 8]))).toBe(true);
    expect(queueable(withKey([1, 2, 3, 4, 5, 6, 7, 8, 9]))).toBe(false);
    // The characters of every part count together.
    expect(queueable(withKey(['a'.repeat(KEY_CHARS_MAX / 2), 'b'.repeat(KEY_CHARS_MAX / 2)]))).toBe(true);
    expect(queueable(withKey(['a'.repeat(KEY_CHARS_MAX / 2), 'b'.repeat(KEY_CHARS_MAX / 2 + 1)]))).toBe(false);
    expect(queueable(withKey(['a', Number.NaN]))).toBe(false);
    expect(queueable(withKey(['a', '']))).toBe(false);
    expect(queueable(withKey(['a', null]))).toBe(false);
    // A remove's key is checked like a put's.
    expect(queueable([{ ...entry(1, 1), removes: [{ table: 'idempotency', key: ['a', ''] as unknown as string }] }])).toBe(false);
  });

  it('the commit log checks a binary key against LMDB\'s byte limit: empty and too long refused', () => {
    const withKey = (key: unknown): WalEntry[] => [{ ...entry(1, 1), puts: [{ table: 'meta', key: key as string, value: 1 }] }];
    expect(keysFit(withKey(Buffer.alloc(LMDB_KEY_BYTES_MAX, 1)))).toBe(true);
    expect(keysFit(withKey(Buffer.alloc(LMDB_KEY_BYTES_MAX + 1, 1)))).toBe(false);
    expect(keysFit(withKey(Buffer.alloc(0)))).toBe(false);
    expect(keysFit(withKey('k'.repeat(KEY_CHARS_MAX)))).toBe(true);
    expect(keysFit([{ ...entry(1, 1), removes: [{ table: 'idempotency', key: Buffer.alloc(0) as unknown as string }] }])).toBe(false);
  });

  it('counts what it synced (batches, entries, events, the last batch) and reports each batch, then idle, once all is acknowledged', async () => {
    const { store } = open();
    const batches: number[] = [];
    const syncsMs: number[] = [];
    let idle = 0;
    const startedMs = performance.now();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; }, onBatch: (entries, syncMs) => { syncsMs.push(syncMs); batches.push(entries); }, onIdle: () => idle++ });
    const first = [wal.append(entry(1, 1)), wal.append({ ...entry(2, 2), events: [...entry(2, 2).events, ...entry(2, 3).events] })];
    await Promise.all(first);
    expect(idle).toBeGreaterThan(0);
    const idleAfterFirst = idle;
    await wal.append(entry(3, 4));
    expect(batches).toEqual([2, 1]);
    // A batch's sync time runs from its queueing to its acknowledgement: within this test's own.
    const elapsedMs = performance.now() - startedMs;
    expect(syncsMs.every((ms) => ms >= 0 && ms <= elapsedMs)).toBe(true);
    expect(wal.stats().lastSyncMs).toBe(syncsMs[1]);
    expect(idle).toBeGreaterThan(idleAfterFirst);
    expect(wal.stats()).toMatchObject({ batches: 2, entries: 3, events: 4, lastBatchEntries: 1, pendingEntries: 0 });
    expect(wal.stats().commits).toBeGreaterThanOrEqual(2);
    await wal.close();
  });

  it('batchEntriesMax caps the entries of a commit: five appends in one turn under a cap of 2 are synced as 2, 2 and 1', async () => {
    const { store } = open();
    const batches: number[] = [];
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; }, batchEntriesMax: 2, onBatch: (entries) => batches.push(entries) });
    await Promise.all([1, 2, 3, 4, 5].map((n) => wal.append(entry(n, n))));
    expect(batches).toEqual([2, 2, 1]);
    expect(amounts(store)).toEqual([1, 2, 3, 4, 5]);
    await wal.close();
  });

  it('an append after close, and a plain append in sync mode log, are broken invariants', async () => {
    const { store } = open();
    const { wal } = groupCommit(store);
    await wal.close();
    const closed = 'invariant: no append after the WAL was closed';
    expect(() => wal.append(entry(1, 1))).toThrow(closed);
    expect(() => wal.appendTogether([entry(1, 1)], () => {})).toThrow(closed);
    const { wal: logMode } = groupCommit(logModeStore().store);
    expect(() => logMode.append(entry(1, 1))).toThrow("invariant: in sync mode 'log' entries reach LMDB only through the commit log (appendTogether)");
  });

  it('a read waits for the flush only where a commit is visible before it is synced (overlapping sync)', async () => {
    const { store } = open();
    const commit = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    expect(commit.readBarrier()).toBeNull();
    await commit.close();
    await store.close();
    const dir = mkdtempSync(join(tmpdir(), 'group-commit-overlapping-'));
    const overlapping = openStore(dir, { syncMode: 'overlapping' });
    try {
      const wal = new LmdbGroupCommit(overlapping, { onFatal: (e) => { throw e; } });
      const appended = wal.append(entry(1, 5));
      const barrier = wal.readBarrier();
      expect(barrier).not.toBeNull();
      await barrier;
      await appended;
      expect(amounts(overlapping)).toEqual([5]);
      await wal.close();
    } finally {
      await overlapping.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("counts appendTogether's entries as pending until their commit is acknowledged, and the pending limit refuses more at that count", async () => {
    const { store } = logModeStore();
    const fatals: unknown[] = [];
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => fatals.push(e), pendingEntriesMax: 3 });
    const landed = wal.appendTogether([entry(1, 1), entry(2, 1)], () => {});
    expect(wal.stats().pendingEntries).toBe(2);
    expect(wal.overloaded()).toBe(false);
    const more = wal.appendTogether([entry(3, 1)], () => {});
    expect(wal.stats().pendingEntries).toBe(3);
    expect(wal.overloaded()).toBe(true);
    await Promise.all([landed, more]);
    expect(wal.stats().pendingEntries).toBe(0);
    expect(wal.overloaded()).toBe(false);
    expect(fatals).toEqual([]);
  });
});

/** A store in sync mode 'log' (the commit log's LMDB side) in a new temp directory, closed and removed after the test. */
function logModeStore(): { store: Store; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'group-commit-log-'));
  const store = openStore(dir, { syncMode: 'log' });
  logStores.push({ store, dir });
  return { store, dir };
}
const logStores: { store: Store; dir: string }[] = [];
afterEach(async () => {
  for (const { store, dir } of logStores.splice(0)) {
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
});

/** An entry whose row msgpack cannot encode (an integer beyond 64 bits): its batch fails as it is queued. */
function unencodable(account: number): WalEntry {
  return { events: [], puts: [{ table: 'wallets', key: account, value: { id: account, credits: 2n ** 70n } }] };
}

describe('LMDB group commit after a failure', () => {
  it('a later appendTogether rejects with the failure at once', async () => {
    const { store } = open();
    const { wal, fatals } = groupCommit(store);
    await expect(wal.append({ ...entry(1, 1), puts: [{ table: 'meta', key: [] as unknown as string, value: 1 }] })).rejects.toThrow();
    expect(fatals).toHaveLength(1);
    const flushes: number[] = [];
    const late = watch(wal.appendTogether([entry(1, 2)], () => flushes.push(2)));
    await turn();
    expect([late.state, late.error]).toEqual(['rejected', fatals[0]]);
    expect(flushes).toEqual([]);
  });

  it('a commit rejected twice (its write and its flush) reports the failure once', async () => {
    const { store } = logModeStore();
    const { wal, fatals } = groupCommit(store);
    // A key beyond LMDB's limit: the child transaction's put throws, which rejects the write and its flush.
    const refused = watch(wal.appendTogether([{ ...entry(1, 1), puts: [{ table: 'meta', key: 'k'.repeat(3_000), value: 1 }] }], () => {}));
    await waitFor('the commit refused', () => refused.state !== 'pending');
    await turn();
    await turn();
    expect(fatals).toEqual([refused.error]);
  });

  it('a commit still in flight that lands after the failure is neither acknowledged, counted nor reported, and its flush is not passed on', async () => {
    const { store, dir } = logModeStore();
    const fatals: unknown[] = [];
    const heard: string[] = [];
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => fatals.push(e), onBatch: () => heard.push('batch'), onIdle: () => heard.push('idle') });
    // The first commit saves the rows' msgpack structures, a synchronous write the lock would block.
    await wal.appendTogether([entry(1, 1)], () => heard.push('flushed 1'));
    await waitFor('the first commit flushed', () => heard.includes('flushed 1'));
    expect(heard).toEqual(['batch', 'idle', 'flushed 1']);
    const lock = await holdWriteLock(dir);
    const landing = watch(wal.appendTogether([entry(1, 2)], () => heard.push('flushed 2')));
    await turn();
    const refused = watch(wal.appendTogether([unencodable(1)], () => heard.push('flushed 3')));
    await waitFor('the unencodable batch refused', () => refused.state !== 'pending');
    expect(fatals).toEqual([refused.error]);
    expect([landing.state, landing.error]).toEqual(['rejected', refused.error]);
    const stats = wal.stats();
    await lock.release();
    await waitFor('the commit in flight to land', () => store.chain.getEntry(CHAIN_KEY)?.version === 2);
    await store.root.flushed;
    await turn();
    await turn();
    expect(store.tables.wallets.get(1)).toEqual({ id: 1, credits: 2 });
    expect(heard).toEqual(['batch', 'idle', 'flushed 1']);
    expect({ ...wal.stats(), commits: stats.commits }).toEqual(stats);
    expect(fatals).toHaveLength(1);
  });
});
