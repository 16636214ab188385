/**
 * Sync mode 'log' at the moments a crash can fall between its two writers:
 * after a record is synced in the commit log and before LMDB has it, the
 * restart applies it (exactly once); a torn last record is dropped; a
 * failed log write stops everything (fail-stop) and nothing after it is
 * acknowledged. Real LMDB and real files in a temp directory; the only
 * stand-ins hold or fail a step of the product's own pipeline.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appliedPosition,
  COMMIT_LOG_FILES,
  CommitLog,
  decodeEntries,
  decodeRecordAt,
  encodeRecord,
  LmdbGroupCommit,
  LOG_APPLIED_KEY,
  LogFirstWal,
  openStore,
  recoverCommitLog,
  type DurableLog,
  type Store,
  type WalEntry,
} from '../../src/wal/index.js';
import type { LogEvent } from '../../src/ledger/index.js';
import { LOG_FILE_BYTES, restartLogMode } from '../helpers/log-mode-restart.js';
import { watch } from '../helpers/promise-state.js';
import { waitFor } from '../helpers/wait-for.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function credit(account: number, amount: number): LogEvent {
  return { type: 'credits.adjusted', atMs: 1_000, account, amount, reason: 'test' } as LogEvent;
}

function entry(account: number, credits: number): WalEntry {
  return { events: [credit(account, credits)], puts: [{ table: 'wallets', key: account, value: { id: account, credits } }] };
}

/** An LMDB group commit that never applies what it is given: the process dies before LMDB has it. */
class HeldLmdb extends LmdbGroupCommit {
  readonly held: WalEntry[][] = [];
  override appendTogether(entries: WalEntry[]): Promise<void> {
    this.held.push(entries);
    return new Promise<void>(() => {});
  }
}

/** A commit log whose disk refuses the write from `failFrom` on. */
class FailingLog extends CommitLog {
  failFrom = Number.POSITIVE_INFINITY;
  override append(position: number, record: Buffer): Promise<void> {
    if (position >= this.failFrom) return Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
    return super.append(position, record);
  }
}


const restart = (dir: string) => restartLogMode(dir, (e) => expect.fail(String(e)));

/** A log-first WAL in a new directory whose LMDB side never applies anything. */
function heldWal(): { dir: string; store: Store; lmdb: HeldLmdb; log: CommitLog; wal: LogFirstWal } {
  const dir = mkdtempSync(join(tmpdir(), 'log-first-'));
  dirs.push(dir);
  const store = openStore(dir, { syncMode: 'log' });
  const lmdb = new HeldLmdb(store, { onFatal: (e) => expect.fail(String(e)) });
  const log = new CommitLog(dir, { fileBytes: LOG_FILE_BYTES, whenApplied: async () => {} });
  const wal = new LogFirstWal(log, lmdb, 0, { onFatal: (e) => expect.fail(String(e)) });
  return { dir, store, lmdb, log, wal };
}

function credits(store: Store): number[] {
  return [...store.log.getRange()].map(({ value }) => (value as { amount: number }).amount);
}

describe('sync mode log: recovery and fail-stop', () => {
  it('a crash after the log sync and before LMDB has the records: the restart applies them, once', async () => {
    const { dir, store, lmdb, log, wal } = heldWal();
    void wal.append(entry(1, 10));
    void wal.append(entry(2, 20));
    await waitFor('the first record synced and handed to LMDB', () => lmdb.held.length === 1);
    void wal.append(entry(1, 11));
    await waitFor('the second record synced and handed to LMDB', () => lmdb.held.length === 2);
    // Both records are synced and handed to LMDB, which never commits them: the crash.
    expect(wal.stats().pendingEntries).toBe(3);
    log.close();
    await store.close();

    const first = await restart(dir);
    expect({ replayed: first.replayed, position: first.position }).toEqual({ replayed: 2, position: 2 });
    expect(credits(first.store)).toEqual([10, 20, 11]);
    expect(first.store.tables.wallets.get(1)).toEqual({ id: 1, credits: 11 });
    expect(first.store.tables.wallets.get(2)).toEqual({ id: 2, credits: 20 });
    expect(appliedPosition(first.store)).toBe(2);
    await first.store.close();

    // A second restart finds LMDB at position 2 and applies nothing again.
    const second = await restart(dir);
    expect(second.replayed).toBe(0);
    expect(credits(second.store)).toEqual([10, 20, 11]);
    await second.store.close();
  });

  it('a torn last record (never acknowledged) is dropped, the records before it applied', async () => {
    const { dir, store, lmdb, log, wal } = heldWal();
    void wal.append(entry(1, 10));
    await waitFor('the first record synced and handed to LMDB', () => lmdb.held.length === 1);
    void wal.append(entry(1, 99));
    await waitFor('the second record synced and handed to LMDB', () => lmdb.held.length === 2);
    log.close();
    await store.close();
    // Cut the second record short: its last 8 bytes never reached the disk.
    const firstLength = new CommitLog(dir, { fileBytes: LOG_FILE_BYTES, whenApplied: async () => {} });
    const [one, two] = firstLength.records();
    firstLength.close();
    const fd = openSync(join(dir, COMMIT_LOG_FILES[0]), 'r+');
    writeSync(fd, Buffer.alloc(8), 0, 8, two!.end - 8);
    closeSync(fd);
    expect(one!.position).toBe(1);

    const restarted = await restart(dir);
    expect(restarted.replayed).toBe(1);
    expect(credits(restarted.store)).toEqual([10]);
    expect(restarted.store.tables.wallets.get(1)).toEqual({ id: 1, credits: 10 });
    await restarted.store.close();
  });

  it('a failed log write stops everything: its batch and all later ones rejected, onFatal once, nothing of it applied', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'log-first-'));
    dirs.push(dir);
    const store = openStore(dir, { syncMode: 'log' });
    const fatals: unknown[] = [];
    let wal: LogFirstWal | null = null;
    const lmdb = new LmdbGroupCommit(store, { onFatal: (e) => wal!.fail(e) });
    const log = new FailingLog(dir, { fileBytes: LOG_FILE_BYTES, whenApplied: (p) => wal!.whenApplied(p) });
    wal = new LogFirstWal(log, lmdb, 0, { onFatal: (e) => fatals.push(e) });
    await wal.append(entry(1, 10));
    expect(store.tables.wallets.get(1)).toEqual({ id: 1, credits: 10 });
    log.failFrom = 2;
    const failed = wal.append(entry(1, 20));
    await expect(failed).rejects.toThrow('EIO');
    expect(fatals).toHaveLength(1);
    await expect(wal.append(entry(1, 30))).rejects.toBe(fatals[0]);
    await expect(wal.flushed()).rejects.toBe(fatals[0]);
    expect(fatals).toHaveLength(1);
    log.close();
    await store.close();
    const restarted = await restart(dir);
    expect(credits(restarted.store)).toEqual([10]);
    await restarted.store.close();
  });
});

/** A durable log whose appends wait until the test releases or refuses them, one record at a time. */
class HeldLog implements DurableLog {
  readonly records: { position: number; entries: WalEntry[]; release: () => void; refuse: (error: unknown) => void }[] = [];
  append(position: number, record: Buffer): Promise<void> {
    return new Promise<void>((release, refuse) => this.records.push({ position, entries: decodeEntries(decodeRecordAt(record, 0)!.payload), release, refuse }));
  }
}

/** A durable log that takes every record at once and keeps what it was given. */
class InstantLog implements DurableLog {
  readonly records: { position: number; entries: WalEntry[] }[] = [];
  append(position: number, record: Buffer): Promise<void> {
    this.records.push({ position, entries: decodeEntries(decodeRecordAt(record, 0)!.payload) });
    return Promise.resolve();
  }
}

/** An LMDB group commit whose commits and flushes happen when the test says. */
class ControlledLmdb extends LmdbGroupCommit {
  readonly commits: { entries: WalEntry[]; flush: () => void; commit: () => void; refuse: (error: unknown) => void }[] = [];
  refuseAtOnce: Error | null = null;
  override appendTogether(entries: WalEntry[], onFlushed: () => void): Promise<void> {
    if (this.refuseAtOnce !== null) throw this.refuseAtOnce;
    return new Promise<void>((commit, refuse) => this.commits.push({ entries, flush: onFlushed, commit, refuse }));
  }
}

/** A store in sync mode 'log' in a new temp directory. */
function logModeStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'log-first-'));
  dirs.push(dir);
  return openStore(dir, { syncMode: 'log' });
}


/** A log-first WAL with record 1 synced and in LMDB (not committed) and record 2 being written to the log. */
async function twoRecordsInFlight() {
  const fatals: unknown[] = [];
  const log = new HeldLog();
  const lmdb = new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) });
  const wal = new LogFirstWal(log, lmdb, 0, { onFatal: (e) => fatals.push(e) });
  const inLmdb = watch(wal.append(entry(1, 1)));
  await waitFor('record 1 written to the log', () => log.records.length === 1);
  log.records[0]!.release();
  await waitFor('record 1 handed to LMDB', () => lmdb.commits.length === 1);
  const inLog = watch(wal.append(entry(1, 2)));
  await waitFor('record 2 written to the log', () => log.records.length === 2);
  return { fatals, log, lmdb, wal, inLmdb, inLog };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A log-first WAL over a log that takes every record at once and an LMDB the test commits, with the fatal errors it reports. */
function controlledWal(): { fatals: unknown[]; lmdb: ControlledLmdb; wal: LogFirstWal } {
  const fatals: unknown[] = [];
  const lmdb = new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) });
  const wal = new LogFirstWal(new InstantLog(), lmdb, 0, { onFatal: (e) => fatals.push(e) });
  return { fatals, lmdb, wal };
}

describe('sync mode log: records, positions and acknowledgements', () => {
  it('writes at most recordEntriesMax entries a record, each one position after the last, and counts what LMDB committed', async () => {
    const store = logModeStore();
    const log = new InstantLog();
    const batches: number[] = [];
    const syncsMs: number[] = [];
    const startedMs = performance.now();
    const wal = new LogFirstWal(log, new LmdbGroupCommit(store, { onFatal: (e) => expect.fail(String(e)) }), 7, {
      recordEntriesMax: 2,
      onFatal: (e) => expect.fail(String(e)),
      onBatch: (entries, syncMs) => {
        batches.push(entries);
        syncsMs.push(syncMs);
      },
    });
    await Promise.all([1, 2, 3, 4, 5].map((n) => wal.append(entry(n, n * 10))));
    // A record's sync time is the time from its write to its acknowledgement: within this test's own.
    const elapsedMs = performance.now() - startedMs;
    expect(syncsMs.every((ms) => ms >= 0 && ms <= elapsedMs)).toBe(true);
    expect(wal.stats().lastSyncMs).toBe(syncsMs.at(-1));
    expect(log.records.map((r) => [r.position, r.entries.length])).toEqual([[8, 2], [9, 2], [10, 1]]);
    expect(log.records.flatMap((r) => r.entries.map((e) => (e.events[0] as { amount: number }).amount))).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([2, 2, 1]);
    expect(appliedPosition(store)).toBe(10);
    expect(credits(store)).toEqual([10, 20, 30, 40, 50]);
    expect(wal.stats()).toEqual({ batches: 3, commits: 3, entries: 5, events: 5, lastBatchEntries: 1, lastSyncMs: expect.any(Number), pendingEntries: 0 });
    expect(wal.readBarrier()).toBeNull();
    await wal.close();
    expect(() => wal.append(entry(1, 1))).toThrow('invariant: no append after the WAL was closed');
  });

  it('writes one record at a time: what arrives while a record is being written waits for its sync, then goes as the next record', async () => {
    const log = new HeldLog();
    const lmdb = new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) });
    const wal = new LogFirstWal(log, lmdb, 0, { onFatal: (e) => expect.fail(String(e)) });
    void wal.append(entry(1, 1));
    await waitFor('record 1 written to the log', () => log.records.length === 1);
    void wal.append(entry(1, 2));
    await turn();
    void wal.append(entry(1, 3));
    await turn();
    await turn();
    expect(log.records).toHaveLength(1);
    log.records[0]!.release();
    await waitFor('record 2 written to the log', () => log.records.length === 2);
    expect(log.records[1]!.position).toBe(2);
    expect(log.records[1]!.entries).toEqual([entry(1, 2), entry(1, 3)]);
  });

  it('is overloaded from pendingEntriesMax entries waiting until LMDB has committed them', async () => {
    const lmdb = new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) });
    const wal = new LogFirstWal(new InstantLog(), lmdb, 0, { pendingEntriesMax: 2, onFatal: (e) => expect.fail(String(e)) });
    await wal.flushed();
    const first = wal.append(entry(1, 1));
    expect(wal.overloaded()).toBe(false);
    const second = wal.append(entry(1, 2));
    expect(wal.overloaded()).toBe(true);
    await waitFor('the record handed to LMDB', () => lmdb.commits.length === 1);
    expect(wal.overloaded()).toBe(true);
    lmdb.commits[0]!.commit();
    await Promise.all([first, second]);
    expect(wal.overloaded()).toBe(false);
    expect(wal.stats().pendingEntries).toBe(0);
  });

  it('whenApplied resolves at once up to the flushed position, else once LMDB has flushed that far; flushedTo never goes back', async () => {
    const lmdb = new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) });
    const wal = new LogFirstWal(new InstantLog(), lmdb, 3, { onFatal: (e) => expect.fail(String(e)) });
    const at3 = watch(wal.whenApplied(3));
    const at4 = watch(wal.whenApplied(4));
    const at5 = watch(wal.whenApplied(5));
    const at6 = watch(wal.whenApplied(6));
    await turn();
    expect([at3.state, at4.state, at5.state, at6.state, wal.flushedTo]).toEqual(['resolved', 'pending', 'pending', 'pending', 3]);
    const appended = [wal.append(entry(1, 1))];
    await waitFor('record 4 handed to LMDB', () => lmdb.commits.length === 1);
    appended.push(wal.append(entry(1, 2)));
    await waitFor('record 5 handed to LMDB', () => lmdb.commits.length === 2);
    expect(lmdb.commits.map((c) => c.entries.at(-1)!.puts)).toEqual([[{ table: 'meta', key: LOG_APPLIED_KEY, value: 4 }], [{ table: 'meta', key: LOG_APPLIED_KEY, value: 5 }]]);
    lmdb.commits[1]!.flush();
    await turn();
    expect([at4.state, at5.state, at6.state, wal.flushedTo]).toEqual(['resolved', 'resolved', 'pending', 5]);
    lmdb.commits[0]!.flush();
    expect(wal.flushedTo).toBe(5);
    for (const c of lmdb.commits) c.commit();
    await Promise.all(appended);
    expect(at6.state).toBe('pending');
  });

  it('acknowledges a record only once LMDB has committed it, in log order', async () => {
    const lmdb = new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) });
    const wal = new LogFirstWal(new InstantLog(), lmdb, 0, { onFatal: (e) => expect.fail(String(e)) });
    const first = watch(wal.append(entry(1, 1)));
    await waitFor('record 1 handed to LMDB', () => lmdb.commits.length === 1);
    const second = watch(wal.append(entry(1, 2)));
    await waitFor('record 2 handed to LMDB', () => lmdb.commits.length === 2);
    await turn();
    expect([first.state, second.state]).toEqual(['pending', 'pending']);
    lmdb.commits[0]!.commit();
    await turn();
    expect([first.state, second.state]).toEqual(['resolved', 'pending']);
    expect(wal.stats()).toMatchObject({ batches: 1, commits: 2, entries: 1, pendingEntries: 1 });
    lmdb.commits[1]!.commit();
    await turn();
    expect(second.state).toBe('resolved');
  });

  it('a record LMDB commits before an earlier one is a broken invariant: everything unacknowledged is rejected', async () => {
    const { fatals, lmdb, wal } = controlledWal();
    const first = watch(wal.append(entry(1, 1)));
    await waitFor('record 1 handed to LMDB', () => lmdb.commits.length === 1);
    const second = watch(wal.append(entry(1, 2)));
    await waitFor('record 2 handed to LMDB', () => lmdb.commits.length === 2);
    lmdb.commits[1]!.commit();
    await turn();
    expect(fatals).toHaveLength(1);
    expect((fatals[0] as Error).message).toBe('invariant: LMDB acknowledges commit-log records in order');
    expect([first.state, second.state]).toEqual(['rejected', 'rejected']);
    expect(first.error).toBe(fatals[0]);
  });

  it('a batch holding a key LMDB cannot store is refused before the log: nothing written, the WAL stops', async () => {
    const fatals: unknown[] = [];
    const log = new InstantLog();
    const wal = new LogFirstWal(log, new LmdbGroupCommit(logModeStore(), { onFatal: (e) => expect.fail(String(e)) }), 0, { onFatal: (e) => fatals.push(e) });
    const long = { ...entry(1, 1), puts: [{ table: 'meta' as const, key: 'k'.repeat(3_000), value: 1 }] };
    const refused = watch(wal.append(long));
    await waitFor('the batch refused', () => refused.state !== 'pending');
    expect((refused.error as Error).message).toBe('a batch holds a key LMDB cannot store; it was not written to the commit log');
    expect(fatals).toEqual([refused.error]);
    expect(log.records).toEqual([]);
    await expect(wal.append(entry(1, 2))).rejects.toBe(refused.error);
  });

  it('LMDB failing the commit of a synced record stops the WAL with that error: its batch rejected, onFatal once', async () => {
    const { fatals, lmdb, wal } = controlledWal();
    const appended = watch(wal.append(entry(1, 1)));
    await waitFor('record 1 handed to LMDB', () => lmdb.commits.length === 1);
    const error = new Error('MDB_PANIC: the commit failed');
    lmdb.commits[0]!.refuse(error);
    await turn();
    expect([appended.state, appended.error]).toEqual(['rejected', error]);
    expect(fatals).toEqual([error]);
    await expect(wal.append(entry(1, 2))).rejects.toBe(error);
  });

  it('a failure in the turn a batch arrives writes nothing of it to the log', async () => {
    const fatals: unknown[] = [];
    const log = new InstantLog();
    const wal = new LogFirstWal(log, new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) }), 0, { onFatal: (e) => fatals.push(e) });
    const appended = watch(wal.append(entry(1, 1)));
    const failure = new Error('the replica stopped answering');
    wal.fail(failure);
    await turn();
    await turn();
    expect([appended.state, appended.error]).toEqual(['rejected', failure]);
    expect(log.records).toEqual([]);
    expect(fatals).toEqual([failure]);
  });

  it('LMDB refusing a record as it is handed over stops the WAL with that error', async () => {
    const fatals: unknown[] = [];
    const lmdb = new ControlledLmdb(logModeStore(), { onFatal: (e) => expect.fail(String(e)) });
    lmdb.refuseAtOnce = new Error('MDB_MAP_FULL');
    const wal = new LogFirstWal(new InstantLog(), lmdb, 0, { onFatal: (e) => fatals.push(e) });
    await expect(wal.append(entry(1, 1))).rejects.toBe(lmdb.refuseAtOnce);
    expect(fatals).toEqual([lmdb.refuseAtOnce]);
  });

  it('after a failure, neither a record the log syncs later nor a commit LMDB finishes later acknowledges anything, and a second failure is not reported again', async () => {
    const { fatals, log, lmdb, wal, inLmdb: committing, inLog: logging } = await twoRecordsInFlight();
    const failure = new Error('the replica stopped answering');
    wal.fail(failure);
    wal.fail(new Error('a second failure'));
    log.records[1]!.release();
    lmdb.commits[0]!.commit();
    await turn();
    expect(fatals).toEqual([failure]);
    expect([committing.state, logging.state]).toEqual(['rejected', 'rejected']);
    expect(lmdb.commits).toHaveLength(1);
    expect(wal.stats()).toMatchObject({ batches: 0, commits: 1, entries: 0, pendingEntries: 2 });
  });

  it('a refused log write rejects every batch not yet acknowledged, also one already in LMDB', async () => {
    const { fatals, log, wal, inLmdb, inLog } = await twoRecordsInFlight();
    const waiting = watch(wal.append(entry(1, 3)));
    const error = new Error('EIO');
    log.records[1]!.refuse(error);
    await turn();
    expect([inLmdb.state, inLog.state, waiting.state]).toEqual(['rejected', 'rejected', 'rejected']);
    expect(fatals).toEqual([error]);
    await turn();
    expect(log.records).toHaveLength(2);
  });
});

describe('sync mode log: recovery', () => {
  it('applies, in position order, the records after the one LMDB holds, up to the first gap', async () => {
    const store = logModeStore();
    store.tables.meta.putSync(LOG_APPLIED_KEY, 2);
    const record = (position: number) => ({ position, payload: decodeRecordAt(encodeRecord(position, [entry(1, position)]), 0)!.payload });
    const log = { records: () => [record(5), record(2), record(3), record(1), record(4), record(7)] };
    const result = await recoverCommitLog(store, log, new LmdbGroupCommit(store, { onFatal: (e) => expect.fail(String(e)) }));
    expect(result).toEqual({ position: 5, replayed: 3 });
    expect(credits(store)).toEqual([3, 4, 5]);
    expect(appliedPosition(store)).toBe(5);
  });

  it('with nothing after the position LMDB holds, applies nothing and goes on from it', async () => {
    const store = logModeStore();
    expect(appliedPosition(store)).toBe(0);
    store.tables.meta.putSync(LOG_APPLIED_KEY, 4);
    const payload = decodeRecordAt(encodeRecord(4, [entry(1, 4)]), 0)!.payload;
    const result = await recoverCommitLog(store, { records: () => [{ position: 4, payload }] }, new LmdbGroupCommit(store, { onFatal: (e) => expect.fail(String(e)) }));
    expect(result).toEqual({ position: 4, replayed: 0 });
    expect(credits(store)).toEqual([]);
  });
});
