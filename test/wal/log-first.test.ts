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
  LmdbGroupCommit,
  LogFirstWal,
  openStore,
  type Store,
  type WalEntry,
} from '../../src/wal/index.js';
import type { LogEvent } from '../../src/ledger/index.js';
import { LOG_FILE_BYTES, restartLogMode } from '../helpers/log-mode-restart.js';
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
