/**
 * The commit log: two preallocated, zero-filled files in the data directory
 * (`commit-log.0`, `commit-log.1`, 0600), written append-only, one record
 * (`log-record.ts`) per batch: one `pwrite` and one `fdatasync` each. This is
 * where a reply waits (`log-first.ts`); LMDB, the store of record, is
 * brought up to date behind it, and the log only has to hold what LMDB has
 * not yet synced.
 *
 * Why zero-filled space: a write into blocks that exist and hold data is
 * synced by `fdatasync` as data alone; growing the file (or writing into
 * `fallocate`d, unwritten extents) would also commit the file system's
 * journal on every sync. The zeros are written and synced once, at creation.
 *
 * Reuse: when the file being written is full, writing moves to offset 0 of
 * the other file, but only once LMDB has synced every record in it (the WAL
 * gives `whenApplied`). Records left behind from the file's earlier use have
 * lower positions, so recovery, which takes positions in unbroken order,
 * stops at them.
 */
import { closeSync, constants, existsSync, fdatasync, fstatSync, fsyncSync, openSync, readSync, rmSync, write, writeSync } from 'node:fs';
import { join } from 'node:path';
import { assert, makeFilesPrivate, PRIVATE_FILE_MODE } from '../platform/index.js';
import type { DurableLog } from './durable-log.js';
import { decodeRecordAt, type DecodedRecord } from './log-record.js';
import { COMMIT_LOG_FILE_BYTES, ZERO_FILL_CHUNK_BYTES } from './limits.js';

export const COMMIT_LOG_FILES = ['commit-log.0', 'commit-log.1'] as const;
/** Whether `dir` holds commit-log files (left by sync mode 'log' when it did not stop cleanly). */
export function commitLogPresent(dir: string): boolean {
  return COMMIT_LOG_FILES.some((name) => existsSync(join(dir, name)));
}

/**
 * Removes the commit-log files once LMDB holds and has synced everything
 * in them (a clean stop): a directory without them is one LMDB alone
 * describes, which any sync mode may open.
 */
export function removeCommitLog(dir: string): void {
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent: it runs only after a CommitLog was opened on `dir`, which created both files, so neither is ever missing
  for (const name of COMMIT_LOG_FILES) rmSync(join(dir, name), { force: true });
  syncDirectory(dir);
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export interface CommitLogOptions {
  fileBytes?: number;
  /** Resolves once LMDB has synced every record up to `position`: the log may then overwrite them. */
  whenApplied(position: number): Promise<void>;
}

interface LogFile {
  path: string;
  fd: number;
  /** Highest position written into this file since it was last started from offset 0 (0: none). */
  lastPosition: number;
}

export class CommitLog implements DurableLog {
  readonly fileBytes: number;
  private readonly files: LogFile[];
  private current = 0;
  private offset = 0;
  private closed = false;

  constructor(
    readonly dir: string,
    private readonly options: CommitLogOptions,
  ) {
    this.fileBytes = options.fileBytes ?? COMMIT_LOG_FILE_BYTES;
    this.files = COMMIT_LOG_FILES.map((name) => ({ path: join(dir, name), fd: openPreallocated(join(dir, name), this.fileBytes), lastPosition: 0 }));
    makeFilesPrivate(dir, COMMIT_LOG_FILES);
    // A new file's directory entry must be durable too before a record in it counts.
    syncDirectory(dir);
  }

  /**
   * Every whole, intact record in either file, in file order (each file
   * read from offset 0 up to the first record that is torn, absent or not
   * the next position). Recovery picks the ones LMDB has not applied.
   */
  records(): DecodedRecord[] {
    const found: DecodedRecord[] = [];
    for (const file of this.files) {
      const bytes = Buffer.alloc(this.fileBytes);
      let read = 0;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: the file is preallocated to `fileBytes`, so the first read returns it whole, and a read past it returns 0, which ends the loop below
      while (read < bytes.length) {
        // Stryker disable next-line ArithmeticOperator: equivalent: the only read made starts at 0, where the length asked for is the same either way
        const n = readSync(file.fd, bytes, read, bytes.length - read, read);
        // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: the first read returns the preallocated file whole, so the loop ends after it, by this check or by the one above
        if (n === 0) break;
        read += n;
      }
      let offset = 0;
      let previous = 0;
      for (;;) {
        const record = decodeRecordAt(bytes, offset);
        if (record === null || (previous !== 0 && record.position !== previous + 1)) break;
        found.push(record);
        previous = record.position;
        offset = record.end;
      }
    }
    return found;
  }

  /**
   * Writes one record and syncs it; resolves once it is on disk. Called
   * with one record at a time (the WAL waits for each before the next), in
   * increasing positions.
   */
  async append(position: number, record: Buffer): Promise<void> {
    assert(!this.closed, 'no append after the commit log was closed');
    if (record.length > this.fileBytes) throw new Error(`a commit-log record of ${record.length} bytes does not fit in a ${this.fileBytes}-byte log file`);
    if (this.offset + record.length > this.fileBytes) {
      const next = 1 - this.current;
      await this.options.whenApplied(this.files[next]!.lastPosition);
      this.current = next;
      this.offset = 0;
      this.files[next]!.lastPosition = 0;
    }
    const file = this.files[this.current]!;
    const at = this.offset;
    this.offset += record.length;
    file.lastPosition = position;
    await writeAll(file.fd, record, at);
    // Stryker disable next-line ConditionalExpression: a failed fdatasync of a record is caused only by test/crash/failed-sync.test.ts (sync mode log, the commit log's record sync), in a server process
    await new Promise<void>((resolve, reject) => fdatasync(file.fd, (error) => (error === null ? resolve() : reject(error))));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const file of this.files) closeSync(file.fd);
  }
}

/** Opens (creating 0600) a log file and fills it with zeros up to `bytes`, synced, if it is shorter. */
function openPreallocated(path: string, bytes: number): number {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, PRIVATE_FILE_MODE);
  try {
    const size = fstatSync(fd).size;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent: for a file already `bytes` long the zero-fill loop below writes nothing (it starts at `size`), and only the sync of an unchanged file is added
    if (size < bytes) {
      // Stryker disable next-line MethodExpression: equivalent: only the size in memory of the buffer of zeros changes; each write takes what is missing, at most its length
      const zeros = Buffer.alloc(Math.min(ZERO_FILL_CHUNK_BYTES, bytes));
      for (let at = size; at < bytes; ) {
        const n = writeSync(fd, zeros, 0, Math.min(zeros.length, bytes - at), at);
        at += n;
      }
      fsyncSync(fd);
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

function writeAll(fd: number, bytes: Buffer, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (done: number): void => {
      write(fd, bytes, done, bytes.length - done, position + done, (error, written) => {
        if (error !== null) reject(error);
        else if (done + written === bytes.length) resolve();
        else if (written === 0) reject(new Error('the commit log write made no progress'));
        else step(done + written);
      });
    };
    step(0);
  });
}
