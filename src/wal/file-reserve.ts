/**
 * Zero-filled space kept ahead of the LMDB data file's last page.
 *
 * New pages (log entries, orders) are written past the end of `data.mdb`.
 * Writing past the end grows the file, so every commit's fdatasync then also
 * has to commit the file system's journal (the new size and the newly
 * allocated blocks) before it returns. Writing into space that already
 * exists and holds zeros changes only data blocks, and the sync is shorter
 * (measured in docs/DECISIONS.md). Databases have long done this for their
 * logs: PostgreSQL zero-fills its WAL segments for the same reason.
 *
 * Safety: zeros are written only at or past the current end of the file,
 * where no page LMDB has written can be, and only inside a synchronous
 * LMDB write transaction (LMDB's write lock is held), so no commit can be
 * writing pages meanwhile. A commit that later uses the space overwrites
 * the zeros; its own fdatasync also makes the zeros and the file's new
 * length durable. LMDB never reads past its last committed page and ignores
 * the file's length when it opens (only the map size and the last page
 * count), so a longer file is valid, after a crash too.
 *
 * When: the group commit calls `idle` at moments when nothing is queued to
 * LMDB (see GroupCommitOptions.onIdle), so the write lock is free at once.
 * Every 16th such moment the reserve is looked at and, if whole chunks of
 * it were used, topped up by up to four 1 MiB chunks (about 0.2 ms of
 * writing each here). Under a load that never leaves LMDB idle the reserve
 * runs out and commits grow the file as they would without it.
 *
 * The reserve is an optimisation: if writing it fails (say the disk is
 * full), it reports the error once and stops; commits go on as before.
 */
import { closeSync, fdatasyncSync, fstatSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { assert } from '../platform/index.js';
import type { Store } from './store.js';
import { RESERVE_CHECK_EVERY_IDLE, RESERVE_TOP_UP_CHUNKS_MAX, ZERO_FILL_CHUNK_BYTES } from './limits.js';

export interface FileReserveOptions {
  /** Zero-filled bytes to keep past LMDB's last page. */
  bytes: number;
  /** Most bytes written in one step (default 1 MiB). */
  chunkBytes?: number;
  /**
   * `idle` looks at the reserve on every this many calls (default 16):
   * looking costs about 20 µs (lmdb-js getStats renews a read transaction),
   * and idle moments come hundreds of times a second under load.
   */
  checkEveryIdle?: number;
  /** Writing the reserve failed; it is off from now on. */
  onError: (error: unknown) => void;
}

export interface FileReserveStats {
  /** Bytes of zeros written by this reserve since it started (the file's length and LMDB's part: `dataFileBytes`). */
  filledBytes: number;
}

export class FileReserve {
  private readonly bytes: number;
  private readonly zeros: Buffer;
  private fd: number | null;
  private failed = false;
  private filledBytes = 0;
  private readonly checkEveryIdle: number;
  private idleCalls = 0;

  constructor(
    private readonly store: Store,
    private readonly options: FileReserveOptions,
  ) {
    assert(Number.isSafeInteger(options.bytes) && options.bytes >= 1, 'a file reserve needs a positive size', options.bytes);
    this.bytes = options.bytes;
    this.zeros = Buffer.alloc(Math.min(options.chunkBytes ?? ZERO_FILL_CHUNK_BYTES, this.bytes));
    this.checkEveryIdle = options.checkEveryIdle ?? RESERVE_CHECK_EVERY_IDLE;
    // A descriptor of our own: LMDB locks its lock file, not data.mdb, so
    // opening and closing this one does not touch LMDB's locks.
    try {
      this.fd = openSync(dataFilePath(store), 'r+');
    } catch (error) {
      this.fd = null;
      // Stryker disable next-line BooleanLiteral: equivalent: the descriptor is null too, and every step looks at it before the flag
      this.failed = true;
      options.onError(error);
    }
  }

  /** For GroupCommitOptions.onIdle: tops the reserve up on every `checkEveryIdle`-th call. */
  idle(): void {
    // Stryker disable next-line UpdateOperator: equivalent: counting down, -n % k is zero exactly when n % k is
    if (++this.idleCalls % this.checkEveryIdle === 0) this.topUp();
  }

  /**
   * Writes up to `chunks` chunks of zeros while the reserve is short by at
   * least one chunk. Returns the bytes written. Never throws. The default
   * bounds the pause at an idle moment (about 1 ms for 4 MiB here) and
   * still catches up when commits used more than a chunk since the last one.
   */
  topUp(chunks = RESERVE_TOP_UP_CHUNKS_MAX): number {
    let wrote = 0;
    for (let i = 0; i < chunks && this.fd !== null && !this.failed; i++) {
      let n = 0;
      try {
        // Looked at first without the write lock (it is usually full), then
        // again inside the transaction, where it cannot change meanwhile.
        if (this.shortBy(this.fd) < this.zeros.length) break;
        n = this.store.root.transactionSync(() => this.appendZeros(this.fd!));
      } catch (error) {
        this.failed = true;
        this.options.onError(error);
      }
      if (n === 0) break;
      wrote += n;
    }
    return wrote;
  }

  /**
   * Fills the whole reserve now and syncs it (at start-up: else the first
   * commit's sync would carry all of it).
   */
  fill(): number {
    const wrote = this.topUp(Number.POSITIVE_INFINITY);
    if (wrote > 0 && this.fd !== null && !this.failed) {
      try {
        fdatasyncSync(this.fd);
      } catch (error) {
        this.failed = true;
        this.options.onError(error);
      }
    }
    return wrote;
  }

  stats(): FileReserveStats {
    return { filledBytes: this.filledBytes };
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** How many bytes the reserve lacks. */
  private shortBy(fd: number): number {
    return usedBytes(this.store) + this.bytes - fstatSync(fd).size;
  }

  /** Inside the write transaction: one chunk of zeros at the end of the file, if the reserve is short by a chunk. */
  private appendZeros(fd: number): number {
    if (this.shortBy(fd) < this.zeros.length) return 0;
    const end = fstatSync(fd).size;
    let done = 0;
    // Stryker disable next-line ArithmeticOperator: equivalent: a regular file takes the whole chunk in one write, so done is 0 in the only call
    while (done < this.zeros.length) done += writeSync(fd, this.zeros, done, this.zeros.length - done, end + done);
    this.filledBytes += done;
    return done;
  }
}

export function dataFilePath(store: Store): string {
  return join(store.path, 'data.mdb');
}

/** Bytes of data.mdb up to and including LMDB's last committed page. */
export function usedBytes(store: Store): number {
  const stats = store.root.getStats() as { pageSize: number; lastPageNumber: number };
  return (stats.lastPageNumber + 1) * stats.pageSize;
}

/** The data file's length and the part of it LMDB has used. */
export function dataFileBytes(store: Store): { fileBytes: number; usedBytes: number } {
  return { fileBytes: statSync(dataFilePath(store)).size, usedBytes: usedBytes(store) };
}
