/**
 * The WAL contract, one suite run against every implementation of `Wal`:
 * the LMDB group commit in both of its sync modes (verified by closing and
 * reopening the store, as a restart would) and the in-memory simulation WAL
 * (verified through its durable image).
 *
 * Each implementation supplies a small adapter; the cases below only talk to
 * the adapter and to the `Wal` interface.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CommitLog,
  LmdbGroupCommit,
  LogFirstWal,
  openStore,
  type Store,
  type SyncMode,
  type TableName,
  type Wal,
  type WalEntry,
} from '../../src/wal/index.js';
import { type LogEvent } from '../../src/ledger/index.js';
import { MemoryWal, type TableKey } from '../../src/wal/memory-wal.js';
import { LOG_FILE_BYTES, restartLogMode } from '../helpers/log-mode-restart.js';
import { watch } from '../helpers/promise-state.js';
import { waitFor } from '../helpers/wait-for.js';

interface DurableView {
  /** The log as a restarted process reads it: sequence number and event, in key order. */
  events: { seq: number; event: LogEvent }[];
  get(table: TableName, key: TableKey): unknown;
}

interface Subject {
  wal: Wal;
  fatals: unknown[];
  /** Lets the implementation complete every sync that is pending. */
  sync(): Promise<void>;
  /** Makes entries appended from now on go to a later batch than those before. */
  cut(): Promise<void>;
  /** Returns an entry whose commit will fail (arming the fault when the implementation needs it). */
  failing(entry: WalEntry): WalEntry;
  /** Reads what is durable now, without a restart (callable inside a promise callback). */
  peek(): DurableView;
  /** Stops the WAL, restarts from disk and returns what is durable. */
  reopenDurable(): Promise<DurableView>;
  dispose(): Promise<void>;
}

interface Implementation {
  name: string;
  make(options: { pendingEntriesMax?: number }): Subject;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function lmdbView(store: Store): DurableView {
  return {
    events: [...store.log.getRange()].map(({ key, value }) => ({ seq: Number(key), event: value })),
    get: (table, key) => store.tables[table].get(key),
  };
}

function lmdb(syncMode: SyncMode): Implementation {
  return {
    name: `LmdbGroupCommit (${syncMode} sync)`,
    make({ pendingEntriesMax }) {
      const dir = mkdtempSync(join(tmpdir(), 'wal-contract-'));
      let store = openStore(dir, { syncMode });
      const fatals: unknown[] = [];
      const wal = new LmdbGroupCommit(store, { onFatal: (e) => fatals.push(e), ...(pendingEntriesMax === undefined ? {} : { pendingEntriesMax }) });
      return {
        wal,
        fatals,
          ...lmdbControls(wal, fatals),
        // Reads what is committed: with 'commit' sync that is what is synced;
        // with 'overlapping' sync the group commit awaits \`flushed\` before it
        // resolves, so a committed read is the best a test can observe.
        peek: () => lmdbView(store),
        async reopenDurable() {
          await wal.close().catch(() => {});
          await store.close();
          store = openStore(dir, { syncMode });
          return lmdbView(store);
        },
        async dispose() {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

/** sync, cut and failing for a WAL over LMDB (the group commit alone, or the commit log in front of it). */
function lmdbControls(wal: Wal, fatals: unknown[]): Pick<Subject, 'sync' | 'cut' | 'failing'> {
  return {
    async sync() {
      // The group commit writes on its own after setImmediate.
      await waitFor('every pending entry synced, or a fatal error', () => wal.stats().pendingEntries === 0 || fatals.length > 0, undefined, () => `${wal.stats().pendingEntries} entries pending`);
      await turn();
    },
    // The writer takes the open batch at the next turn, unless a write is
    // in progress: then the open batch keeps growing until that write is
    // done. Waiting for every pending sync is the sure way to start anew.
    async cut() {
      await this.sync();
    },
    failing(entry) {
      // A key beyond LMDB's 1,978-byte limit makes the put throw inside the transaction.
      return { ...entry, puts: [...entry.puts, { table: 'meta', key: 'k'.repeat(3_000), value: 1 }] };
    },
  };
}

/**
 * The commit log first, LMDB behind it (sync mode 'log'). A restart replays
 * the log's tail into LMDB, as the server does at start-up.
 */
const logFirst: Implementation = {
  name: 'LogFirstWal (commit log, then LMDB)',
  make({ pendingEntriesMax }) {
    const dir = mkdtempSync(join(tmpdir(), 'wal-contract-log-'));
    let store = openStore(dir, { syncMode: 'log' });
    const fatals: unknown[] = [];
    let wal: LogFirstWal | null = null;
    const lmdb = new LmdbGroupCommit(store, { onFatal: (e) => wal!.fail(e) });
    const log = new CommitLog(dir, { fileBytes: LOG_FILE_BYTES, whenApplied: (p) => wal!.whenApplied(p) });
    wal = new LogFirstWal(log, lmdb, 0, { onFatal: (e) => fatals.push(e), ...(pendingEntriesMax === undefined ? {} : { pendingEntriesMax }) });
    const subject = wal;
    return {
      wal: subject,
      fatals,
      ...lmdbControls(subject, fatals),
      // A batch resolves once its rows are committed in LMDB, after its record is synced in the log.
      peek: () => lmdbView(store),
      async reopenDurable() {
        await subject.close().catch(() => {});
        log.close();
        await store.close();
        store = (await restartLogMode(dir, (e) => fatals.push(e))).store;
        return lmdbView(store);
      },
      async dispose() {
        log.close();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const memory: Implementation = {
  name: 'MemoryWal',
  make({ pendingEntriesMax }) {
    const fatals: unknown[] = [];
    const wal = new MemoryWal({ onFatal: (e) => fatals.push(e), ...(pendingEntriesMax === undefined ? {} : { pendingEntriesMax }) });
    const view = (): DurableView => {
      const image = wal.durableImage();
      return {
        events: image.events.map((event, i) => ({ seq: i + 1, event })),
        get: (table, key) => image.tables[table].get(JSON.stringify(key)),
      };
    };
    return {
      wal,
      fatals,
      async sync() {
        wal.syncAll();
        await turn();
      },
      async cut() {
        wal.seal();
      },
      failing(entry) {
        wal.failNextCommit(new Error('simulated: the disk refused the write'));
        return entry;
      },
      peek: view,
      async reopenDurable() {
        // A restart starts from the durable image and nothing else.
        const image = wal.durableImage();
        wal.crash();
        const restarted = new MemoryWal({ onFatal: () => {}, initial: image });
        return {
          events: restarted.durableImage().events.map((event, i) => ({ seq: i + 1, event })),
          get: (table, key) => restarted.get(table, key),
        };
      },
      async dispose() {},
    };
  },
};

let counter = 0;
function credit(account: number, amount: number): LogEvent {
  counter++;
  return { type: 'credits.adjusted', atMs: counter, account, amount, reason: `r${counter}`, balance: amount };
}

function entry(account: number, amount: number, extra: Partial<WalEntry> = {}): WalEntry {
  return {
    events: [credit(account, amount)],
    puts: [{ table: 'wallets', key: account, value: { id: account, credits: amount } }],
    ...extra,
  };
}


const IMPLEMENTATIONS: Implementation[] = [lmdb('commit'), lmdb('overlapping'), logFirst, memory];

describe.each(IMPLEMENTATIONS)('WAL contract: $name', (impl) => {
  const subjects: Subject[] = [];
  const make = (options: { pendingEntriesMax?: number } = {}): Subject => {
    const s = impl.make(options);
    subjects.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of subjects.splice(0)) await s.dispose();
  });

  it('append resolves only after its entry is durable', async () => {
    const s = make();
    const p = s.wal.append(entry(1, 100));
    let durableAtResolve: number | null = null;
    p.then(() => {
      durableAtResolve = s.peek().events.length;
    });
    const w = watch(p);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(w.state).toBe('pending');
    await s.sync();
    await p;
    // When the promise resolved, the entry was already readable as durable.
    expect(durableAtResolve).toBe(1);
    const view = await s.reopenDurable();
    expect(view.events.map((e) => e.event.type)).toEqual(['credits.adjusted']);
    expect(view.get('wallets', 1)).toEqual({ id: 1, credits: 100 });
  });

  it('entries appended in the same turn share one commit and one promise, in order', async () => {
    const s = make();
    const p1 = s.wal.append(entry(1, 1));
    const p2 = s.wal.append(entry(2, 2));
    const p3 = s.wal.append(entry(1, 3));
    expect(p2).toBe(p1);
    expect(p3).toBe(p1);
    await s.sync();
    await p1;
    expect(s.wal.stats()).toMatchObject({ batches: 1, entries: 3, events: 3, lastBatchEntries: 3, pendingEntries: 0 });
    const view = await s.reopenDurable();
    expect(view.events.map((e) => (e.event as { amount: number }).amount)).toEqual([1, 2, 3]);
    // The later put of the same key wins.
    expect(view.get('wallets', 1)).toEqual({ id: 1, credits: 3 });
  });

  it('events keep append order across batches, with increasing sequence numbers', async () => {
    const s = make();
    const promises: Promise<void>[] = [];
    const resolvedOrder: number[] = [];
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 2; i++) {
        const amount = batch * 10 + i;
        const p = s.wal.append({ events: [credit(1, amount), credit(2, amount)], puts: [] });
        p.then(() => resolvedOrder.push(amount));
        promises.push(p);
      }
      await s.cut();
    }
    expect(promises[0]).not.toBe(promises[2]);
    expect(promises[2]).not.toBe(promises[4]);
    await s.sync();
    await Promise.all(promises);
    expect(resolvedOrder).toEqual([0, 1, 10, 11, 20, 21]);
    const view = await s.reopenDurable();
    expect(view.events.map((e) => (e.event as { amount: number }).amount)).toEqual([0, 0, 1, 1, 10, 10, 11, 11, 20, 20, 21, 21]);
    const seqs = view.events.map((e) => e.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
  });

  it('the puts and removes of one entry land together (removes first, then puts)', async () => {
    const s = make();
    const pendingKey = ['pending', 1_000, 1, 'o1'];
    const doneKey = ['completed', 1_000, 1, 'o1'];
    const placed = s.wal.append({
      events: [credit(1, -5)],
      puts: [
        { table: 'orders', key: 'o1', value: { id: 'o1', status: 'pending' } },
        { table: 'orderIndex', key: pendingKey, value: 1 },
      ],
    });
    await s.sync();
    await placed;
    expect(s.peek().get('orderIndex', pendingKey)).toBe(1);
    const moved = s.wal.append({
      events: [credit(1, 5)],
      removes: [
        { table: 'orderIndex', key: pendingKey },
        // Removed and put again in the same entry: the put wins.
        { table: 'meta', key: 'marker' },
      ],
      puts: [
        { table: 'orders', key: 'o1', value: { id: 'o1', status: 'completed' } },
        { table: 'orderIndex', key: doneKey, value: 1 },
        { table: 'meta', key: 'marker', value: 'kept' },
      ],
    });
    await s.sync();
    await moved;
    const view = await s.reopenDurable();
    expect(view.get('orderIndex', pendingKey)).toBeUndefined();
    expect(view.get('orderIndex', doneKey)).toBe(1);
    expect(view.get('orders', 'o1')).toEqual({ id: 'o1', status: 'completed' });
    expect(view.get('meta', 'marker')).toBe('kept');
    // Number and string keys stay distinct.
    expect(view.get('orders', 1 as unknown as string)).toBeUndefined();
  });

  it('a failed commit rejects its whole batch, calls onFatal once, and nothing later is acknowledged', async () => {
    const s = make();
    const before = s.wal.append(entry(1, 10));
    await s.sync();
    await before;
    const good = watch(s.wal.append(entry(1, 20)));
    const bad = watch(s.wal.append(s.failing(entry(1, 30))));
    await s.sync();
    expect(good.state).toBe('rejected');
    expect(bad.state).toBe('rejected');
    expect(s.fatals).toHaveLength(1);
    expect(good.error).toBe(s.fatals[0]);
    const later = watch(s.wal.append(entry(1, 40)));
    const flushed = watch(s.wal.flushed());
    await s.sync();
    await turn();
    expect(later.state).toBe('rejected');
    expect(flushed.state).toBe('rejected');
    expect(s.fatals).toHaveLength(1);
    const view = await s.reopenDurable();
    // What was acknowledged before the failure stays durable; what came after it never lands.
    expect(view.events[0]?.event).toMatchObject({ amount: 10 });
    expect(view.events.some((e) => (e.event as { amount: number }).amount === 40)).toBe(false);
  });

  it('appendSettled tells its listener once, from the batch settlement, after it returns and before the promise reactions', async () => {
    const s = make();
    const heard: string[] = [];
    const p = s.wal.appendSettled(entry(1, 10), (error) => heard.push(`durable:${error === null}`));
    void p.then(() => heard.push('reaction'));
    const alongside = s.wal.append(entry(2, 10));
    expect(alongside).toBe(p);
    expect(heard).toEqual([]);
    await s.sync();
    await p;
    expect(heard).toEqual(['durable:true', 'reaction']);
    const failed: unknown[] = [];
    const bad = watch(s.wal.appendSettled(s.failing(entry(1, 30)), (error) => failed.push(error)));
    await s.sync();
    expect(bad.state).toBe('rejected');
    expect(failed).toEqual([s.fatals[0]]);
    // After the failure a listener still hears the error, never before its append has returned.
    const late: unknown[] = [];
    const after = watch(s.wal.appendSettled(entry(1, 40), (error) => late.push(error)));
    expect(late).toEqual([]);
    await turn();
    expect(after.state).toBe('rejected');
    expect(late).toEqual([s.fatals[0]]);
  });

  // lmdb-js `transaction(callback)` commits whatever the callback wrote
  // before it threw (half an entry could land), so the group commit writes
  // such a batch in a child transaction.
  it('a failed commit leaves nothing of its batch durable, not even half an entry', async () => {
    const s = make();
    const before = s.wal.append(entry(1, 10));
    await s.sync();
    await before;
    const good = watch(s.wal.append(entry(1, 20)));
    const bad = watch(
      s.wal.append(
        s.failing({
          events: [credit(1, 30)],
          removes: [{ table: 'wallets', key: 1 }],
          puts: [{ table: 'orders', key: 'o9', value: { id: 'o9' } }],
        }),
      ),
    );
    await s.sync();
    expect([good.state, bad.state]).toEqual(['rejected', 'rejected']);
    const view = await s.reopenDurable();
    expect(view.events.map((e) => (e.event as { amount: number }).amount)).toEqual([10]);
    expect(view.get('wallets', 1)).toEqual({ id: 1, credits: 10 });
    expect(view.get('orders', 'o9')).toBeUndefined();
  });

  it('flushed() resolves once everything appended so far is durable', async () => {
    const s = make();
    await s.wal.flushed(); // Nothing pending: resolves at once.
    const a = s.wal.append(entry(1, 1));
    // One turn: LMDB starts writing the first batch, so the second may go to
    // a batch of its own (the in-memory WAL keeps both in one until a sync).
    await turn();
    const b = s.wal.append(entry(2, 2));
    let durableAtFlushed = -1;
    const f = s.wal.flushed().then(() => {
      durableAtFlushed = s.peek().events.length;
    });
    await s.sync();
    await f;
    expect(durableAtFlushed).toBe(2);
    await Promise.all([a, b]);
  });

  it('close() waits for what was appended before it', async () => {
    const s = make();
    const a = watch(s.wal.append(entry(1, 1)));
    const closing = s.wal.close();
    await s.sync();
    await closing;
    expect(a.state).toBe('resolved');
    const view = await s.reopenDurable();
    expect(view.events).toHaveLength(1);
  });

  it('overloaded() once the pending limit is reached, and not after the sync', async () => {
    const s = make({ pendingEntriesMax: 3 });
    const ps = [s.wal.append(entry(1, 1)), s.wal.append(entry(1, 2))];
    expect(s.wal.overloaded()).toBe(false);
    ps.push(s.wal.append(entry(1, 3)));
    expect(s.wal.overloaded()).toBe(true);
    expect(s.wal.stats().pendingEntries).toBe(3);
    await s.sync();
    await Promise.all(ps);
    expect(s.wal.overloaded()).toBe(false);
    expect(s.wal.stats().pendingEntries).toBe(0);
  });
});
