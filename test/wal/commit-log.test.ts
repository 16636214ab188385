/**
 * The commit log's files (sync mode 'log'): what recovery reads back from
 * them. A record is taken only whole, intact and in unbroken position
 * order: a record torn by a crash mid-write, one whose bytes were damaged,
 * and records left from a file's earlier use are not.
 */
import fs, { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMIT_LOG_FILES, CommitLog, commitLogPresent, encodeRecord, RECORD_HEADER_BYTES, decodeEntries, decodeRecordAt, removeCommitLog, type WalEntry } from '../../src/wal/index.js';
import { waitFor } from '../helpers/wait-for.js';

const dirs: string[] = [];
const logs: CommitLog[] = [];

afterEach(() => {
  for (const log of logs.splice(0)) log.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'commit-log-'));
  dirs.push(dir);
  return dir;
}

function openLog(dir: string, fileBytes: number, whenApplied: (position: number) => Promise<void> = async () => {}): CommitLog {
  const log = new CommitLog(dir, { fileBytes, whenApplied });
  logs.push(log);
  return log;
}

function entry(n: number, padding = 0): WalEntry {
  return { events: [{ type: 'credits.adjusted', atMs: n, account: 1, amount: n, reason: 'x'.repeat(padding) } as never], puts: [{ table: 'wallets', key: 1, value: { id: 1, credits: n } }] };
}

/** Overwrites `bytes` at `offset` of a log file, as a crash or a bad sector could leave it. */
function overwrite(path: string, offset: number, bytes: Buffer): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

describe('commit log', () => {
  it('creates both files 0600, zero-filled to their size', () => {
    const dir = newDir();
    openLog(dir, 64 * 1024);
    for (const name of COMMIT_LOG_FILES) {
      const stat = statSync(join(dir, name));
      expect(stat.size).toBe(64 * 1024);
      expect(stat.mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dir, name)).every((b) => b === 0)).toBe(true);
    }
  });

  it('fills a file left shorter than its size (a crash during creation) with zeros up to exactly its size', () => {
    const dir = newDir();
    const [first, second] = COMMIT_LOG_FILES;
    writeFileSync(join(dir, first), Buffer.alloc(1_000), { mode: 0o600 });
    writeFileSync(join(dir, second), Buffer.alloc(64 * 1024 - 1), { mode: 0o600 });
    openLog(dir, 64 * 1024);
    for (const name of COMMIT_LOG_FILES) {
      expect(statSync(join(dir, name)).size).toBe(64 * 1024);
      expect(readFileSync(join(dir, name)).every((b) => b === 0)).toBe(true);
    }
  });

  it('reads back every record appended, in order, with its entries', async () => {
    const dir = newDir();
    const log = openLog(dir, 64 * 1024);
    for (let p = 1; p <= 3; p++) await log.append(p, encodeRecord(p, [entry(p), entry(p * 10)]));
    log.close();
    const records = openLog(dir, 64 * 1024).records();
    expect(records.map((r) => r.position)).toEqual([1, 2, 3]);
    expect(decodeEntries(records[2]!.payload)).toEqual([entry(3), entry(30)]);
  });

  it('drops a last record torn by a crash mid-write (only its first part reached the disk)', async () => {
    const dir = newDir();
    const log = openLog(dir, 64 * 1024);
    const sizes: number[] = [];
    for (let p = 1; p <= 3; p++) {
      const record = encodeRecord(p, [entry(p, 200)]);
      sizes.push(record.length);
      await log.append(p, record);
    }
    log.close();
    const third = sizes[0]! + sizes[1]!;
    // The third record's second half is still the preallocated zeros.
    overwrite(join(dir, COMMIT_LOG_FILES[0]), third + Math.floor(sizes[2]! / 2), Buffer.alloc(sizes[2]! - Math.floor(sizes[2]! / 2)));
    expect(openLog(dir, 64 * 1024).records().map((r) => r.position)).toEqual([1, 2]);
  });

  it('drops a last record whose bytes were damaged, and one with only its header written', async () => {
    const dir = newDir();
    const log = openLog(dir, 64 * 1024);
    let offset = 0;
    const offsets: number[] = [];
    for (let p = 1; p <= 3; p++) {
      const record = encodeRecord(p, [entry(p, 50)]);
      offsets.push(offset);
      offset += record.length;
      await log.append(p, record);
    }
    log.close();
    const file = join(dir, COMMIT_LOG_FILES[0]);
    overwrite(file, offsets[2]! + RECORD_HEADER_BYTES + 5, Buffer.from([0xff ^ readFileSync(file)[offsets[2]! + RECORD_HEADER_BYTES + 5]!]));
    expect(openLog(dir, 64 * 1024).records().map((r) => r.position)).toEqual([1, 2]);
    // A header whose payload never arrived (zeros) does not pass either.
    const header = readFileSync(file).subarray(offsets[1]!, offsets[1]! + RECORD_HEADER_BYTES);
    overwrite(file, offsets[1]! + RECORD_HEADER_BYTES, Buffer.alloc(offsets[2]! - offsets[1]! - RECORD_HEADER_BYTES));
    expect(header.length).toBe(RECORD_HEADER_BYTES);
    expect(openLog(dir, 64 * 1024).records().map((r) => r.position)).toEqual([1]);
  });

  it('moves to the other file when one is full, and never takes what a file held before it was reused', async () => {
    const dir = newDir();
    const log = openLog(dir, 4096);
    // Records of about 1 KB: three fill a file.
    for (let p = 1; p <= 10; p++) await log.append(p, encodeRecord(p, [entry(p, 900)]));
    log.close();
    // File 0 holds 1-3, then 7-9 over them; file 1 holds 4-6, then 10 over 4
    // (5 and 6 still after it, from its first use): recovery finds 7-10 only.
    expect(openLog(dir, 4096).records().map((r) => r.position)).toEqual([7, 8, 9, 10]);
  });

  it('waits, before overwriting a file, until LMDB has applied everything in it', async () => {
    const dir = newDir();
    const asked: number[] = [];
    let release!: () => void;
    const log = openLog(dir, 4096, (position) => {
      asked.push(position);
      return position === 0 ? Promise.resolve() : new Promise<void>((resolve) => (release = resolve));
    });
    for (let p = 1; p <= 6; p++) await log.append(p, encodeRecord(p, [entry(p, 900)]));
    expect(asked).toEqual([0]); // file 1 was never used: nothing to wait for.
    let done = false;
    const seventh = log.append(7, encodeRecord(7, [entry(7, 900)])).then(() => (done = true));
    await waitFor('the log to ask for the sync of file 0 before writing it again', () => asked.length >= 2);
    expect(asked).toEqual([0, 3]);
    expect(done).toBe(false);
    release();
    await seventh;
    expect(done).toBe(true);
  });
});

describe('commit log: the bounds of a file', () => {
  const FILE_BYTES = 4096;

  /** A record of exactly `bytes` bytes (its entry padded to size: each character of padding adds a byte, its length's varint a few). */
  function recordOf(position: number, bytes: number): Buffer {
    const unpadded = encodeRecord(position, [entry(position)]).length;
    for (let padding = Math.max(0, bytes - unpadded - 4); padding <= bytes - unpadded; padding++) {
      const record = encodeRecord(position, [entry(position, padding)]);
      if (record.length === bytes) return record;
    }
    throw new Error(`no record of ${bytes} bytes`);
  }

  it('takes a record as large as a file, and refuses one a byte larger with a sentence', async () => {
    const dir = newDir();
    const log = openLog(dir, FILE_BYTES);
    await log.append(1, recordOf(1, FILE_BYTES));
    await expect(log.append(2, recordOf(2, FILE_BYTES + 1))).rejects.toThrow(new Error(`a commit-log record of ${FILE_BYTES + 1} bytes does not fit in a ${FILE_BYTES}-byte log file`));
    log.close();
    expect(openLog(dir, FILE_BYTES).records().map((r) => r.position)).toEqual([1]);
  });

  it('fills a file to its last byte before it moves to the other one', async () => {
    const dir = newDir();
    const asked: number[] = [];
    const log = openLog(dir, FILE_BYTES, async (position) => void asked.push(position));
    const first = recordOf(1, 1_000);
    await log.append(1, first);
    await log.append(2, recordOf(2, FILE_BYTES - first.length));
    expect(asked).toEqual([]);
    await log.append(3, recordOf(3, 1_000));
    expect(asked).toEqual([0]);
    log.close();
    // File 0 holds 1 and 2 to its last byte, file 1 holds 3.
    const file0 = readFileSync(join(dir, COMMIT_LOG_FILES[0]));
    expect(decodeRecordAt(file0, first.length)).toMatchObject({ position: 2, end: FILE_BYTES });
    expect(openLog(dir, FILE_BYTES).records().map((r) => r.position)).toEqual([1, 2, 3]);
  });

  it('refuses an append after it was closed, naming the broken rule', async () => {
    const log = openLog(newDir(), FILE_BYTES);
    log.close();
    await expect(log.append(1, encodeRecord(1, [entry(1)]))).rejects.toMatchObject({ name: 'InvariantError', message: 'invariant: no append after the commit log was closed' });
  });
});

/**
 * Replaces `name` of node:fs, for this process's named imports too
 * (syncBuiltinESMExports), while `body` runs: a disk that writes in part or
 * fails, or a record of the syncs asked for.
 */
async function withFs<K extends 'write' | 'fsyncSync'>(name: K, replacement: (original: (typeof fs)[K]) => (typeof fs)[K], body: () => Promise<void>): Promise<void> {
  const exports = fs as unknown as Record<K, (typeof fs)[K]>;
  const original = exports[name];
  exports[name] = replacement(original);
  syncBuiltinESMExports();
  try {
    await body();
  } finally {
    exports[name] = original;
    syncBuiltinESMExports();
  }
}

describe('commit log: the disk takes part of a write, fails it, and syncs the directory', () => {
  it('finishes a record the disk took in parts, each part where it belongs', async () => {
    const dir = newDir();
    const log = openLog(dir, 64 * 1024);
    await log.append(1, encodeRecord(1, [entry(1, 300)]));
    const parts: number[] = [];
    await withFs('write', (write) => ((fd: number, buffer: Buffer, offset: number, length: number, position: number, callback: (error: Error | null, written: number) => void) => {
      // At most 100 bytes a call: the record of about 400 bytes goes in five parts.
      parts.push(length);
      write(fd, buffer, offset, Math.min(length, 100), position, callback);
    }) as unknown as typeof fs.write, () => log.append(2, encodeRecord(2, [entry(2, 300)])));
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.slice(1).every((length, i) => length === parts[i]! - 100)).toBe(true);
    log.close();
    const records = openLog(dir, 64 * 1024).records();
    expect(records.map((r) => r.position)).toEqual([1, 2]);
    expect(decodeEntries(records[1]!.payload)).toEqual([entry(2, 300)]);
  });

  it('rejects an append whose write fails, and one whose write makes no progress', async () => {
    const log = openLog(newDir(), 64 * 1024);
    const eio = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    await withFs('write', () => ((...args: unknown[]) => (args.at(-1) as (error: Error | null, written: number) => void)(eio, 0)) as unknown as typeof fs.write, async () => {
      await expect(log.append(1, encodeRecord(1, [entry(1)]))).rejects.toBe(eio);
    });
    await withFs('write', () => ((...args: unknown[]) => (args.at(-1) as (error: Error | null, written: number) => void)(null, 0)) as unknown as typeof fs.write, async () => {
      await expect(log.append(2, encodeRecord(2, [entry(2)]))).rejects.toThrow(new Error('the commit log write made no progress'));
    });
  });

  it('syncs the directory after creating the files and after removing them, so that their entries are durable, and leaves no descriptor open', async () => {
    const dir = newDir();
    const directoriesSynced: string[] = [];
    const descriptors = (): number => fs.readdirSync('/proc/self/fd').length;
    const before = descriptors();
    await withFs('fsyncSync', (fsyncSync) => (fd: number) => {
      if (fs.fstatSync(fd).isDirectory()) directoriesSynced.push(fs.readlinkSync(`/proc/self/fd/${fd}`));
      fsyncSync(fd);
    }, async () => {
      openLog(dir, 64 * 1024).close();
      expect(directoriesSynced).toEqual([dir]);
      removeCommitLog(dir);
      expect(directoriesSynced).toEqual([dir, dir]);
    });
    expect(descriptors()).toBe(before);
    expect(commitLogPresent(dir)).toBe(false);
  });
});

describe('a commit-log record read back (decodeRecordAt)', () => {
  /** A record re-sealed with its checksum after its header was changed, as a bug or a stray write could leave it. */
  function resealed(position: bigint): Buffer {
    const record = encodeRecord(1, [entry(1)]);
    record.writeBigUInt64LE(position, 8);
    const payload = record.subarray(RECORD_HEADER_BYTES);
    record.writeUInt32LE(crc32(payload, crc32(record.subarray(0, 16))), 16);
    return record;
  }

  it('reads a record that ends exactly at the end of what was read, and one after another', () => {
    const one = encodeRecord(1, [entry(1)]);
    const two = encodeRecord(2, [entry(2)]);
    const both = Buffer.concat([one, two]);
    expect(decodeRecordAt(one, 0)).toMatchObject({ position: 1, end: one.length });
    expect(decodeRecordAt(both, one.length)).toMatchObject({ position: 2, end: both.length });
    expect(decodeEntries(decodeRecordAt(both, one.length)!.payload)).toEqual([entry(2)]);
  });

  it('finds no record where fewer bytes than a header remain, or where the record runs past them', () => {
    const one = encodeRecord(1, [entry(1)]);
    expect(decodeRecordAt(one.subarray(0, RECORD_HEADER_BYTES - 1), 0)).toBeNull();
    expect(decodeRecordAt(one, one.length - RECORD_HEADER_BYTES + 1)).toBeNull();
    expect(decodeRecordAt(one.subarray(0, one.length - 1), 0)).toBeNull();
  });

  it('refuses a position that is 0 or beyond the safe integers, even with a matching checksum', () => {
    expect(decodeRecordAt(resealed(1n), 0)).toMatchObject({ position: 1 });
    expect(decodeRecordAt(resealed(0n), 0)).toBeNull();
    expect(decodeRecordAt(resealed(2n ** 60n), 0)).toBeNull();
  });
});

describe('commitLogPresent', () => {
  it('is true while either log file is left (a stop between creating the two), false once both are gone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-log-present-'));
    try {
      expect(commitLogPresent(dir)).toBe(false);
      closeSync(openSync(join(dir, COMMIT_LOG_FILES[0]), 'w'));
      expect(commitLogPresent(dir)).toBe(true);
      rmSync(join(dir, COMMIT_LOG_FILES[0]));
      closeSync(openSync(join(dir, COMMIT_LOG_FILES[1]), 'w'));
      expect(commitLogPresent(dir)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
