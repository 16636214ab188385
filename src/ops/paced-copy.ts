/**
 * A copy of a live LMDB environment's data file, written at a bounded rate
 * and synced in small steps, so that the server's commits beside it never
 * wait behind a large writeback.
 *
 * It is what LMDB's own non-compacting copy (`mdb_env_copyfd0`) does, paced:
 * a read transaction pins one committed snapshot (LMDB never overwrites a
 * page a live reader can reach), the pages up to that snapshot's last page
 * are copied as they are in the file, and the copy's two meta pages are both
 * the snapshot's own meta page. Pages the snapshot does not reach may be
 * rewritten by commits while they are copied; the copy's free list counts
 * them free, exactly as in the source at that snapshot, so the copy is that
 * snapshot. LMDB takes its writer lock to read the meta pages at the moment
 * its read transaction starts; this process cannot take it from JavaScript,
 * so it finds the transaction's id in LMDB's reader table and uses the meta
 * page that carries it (a meta page is overwritten only two commits later;
 * if that happened already, it starts a fresh read transaction).
 *
 * The meta page's fields are read at fixed offsets of the LMDB page format
 * that lmdb-js 3 builds (64-bit page numbers and transaction ids); the page's
 * magic number, version and meta flag are checked first, so another format
 * is refused, never copied wrongly.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RootDatabase } from 'lmdb';
import { MS_PER_SECOND, PRIVATE_FILE_MODE } from '../platform/index.js';
import { SNAPSHOT_CHUNK_BYTES, SNAPSHOT_DISK_PERCENT, SNAPSHOT_PIN_ATTEMPTS_MAX, SNAPSHOT_SYNC_EVERY_BYTES } from './limits.js';

/** LMDB's page header: page number (8), txnid (8), pad (2), flags (2), lower and upper bounds (2 + 2). */
const PAGE_FLAGS_OFFSET = 18;
const P_META = 0x08;
const MAGIC_OFFSET = 24;
const VERSION_OFFSET = 28;
/** The free database's `md_pad`, which holds the page size in a meta page. */
const PAGE_SIZE_OFFSET = 48;
const LAST_PAGE_OFFSET = 144;
const TXN_ID_OFFSET = 152;
const MDB_MAGIC = 0xbeefc0de;
const MDB_DATA_VERSION = 2;
const NUM_METAS = 2;
/** Room for the meta page's fields before the page size is known. */
const META_HEADER_BYTES = 256;

/** The rate of the copy: bytes written per second at most. */
export interface CopyPace {
  bytesPerSecond: number;
}

export interface CopyResult {
  /** Bytes of the copy: every page up to the snapshot's last one. */
  bytes: number;
  /** The LMDB transaction the copy holds. */
  txnId: number;
}

interface SnapshotMeta {
  page: Buffer;
  pageSize: number;
  lastPage: number;
  txnId: number;
}

/** Copies the environment whose data file is `sourceFile` into `targetFile`, which must not exist. */
export async function pacedCopy(root: RootDatabase, sourceFile: string, targetFile: string, pace: CopyPace): Promise<CopyResult> {
  const source = await open(sourceFile, 'r');
  try {
    const target = await open(targetFile, 'wx', PRIVATE_FILE_MODE);
    try {
      return await copyPinned(root, source, target, pace);
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function copyPinned(root: RootDatabase, source: FileHandle, target: FileHandle, pace: CopyPace): Promise<CopyResult> {
  for (let attempt = 1; ; attempt++) {
    const txn = root.useReadTransaction();
    try {
      const meta = await snapshotMeta(source, readerTxnId(root));
      if (meta !== null) {
        const end = Math.min((meta.lastPage + 1) * meta.pageSize, (await source.stat()).size);
        await copyRange(source, target, NUM_METAS * meta.pageSize, end, pace);
        await writeMetaPages(target, meta);
        await target.datasync();
        return { bytes: end, txnId: meta.txnId };
      }
    } finally {
      txn.done();
    }
    if (attempt >= SNAPSHOT_PIN_ATTEMPTS_MAX) {
      throw new Error(`The snapshot could not find the meta page of its own read transaction in ${attempt} attempts; commits overtook it every time.`);
    }
  }
}

/**
 * The txnid of the read transaction this process renewed last, from LMDB's
 * reader table (`pid thread txnid` lines): the newest of this process's
 * readers, since it took the newest commit when it started and any other
 * reader of this process started before it.
 */
function readerTxnId(root: RootDatabase): number {
  let newest = -1;
  for (const line of root.readerList().split('\n')) {
    const [pid, , txnId] = line.trim().split(/\s+/);
    if (Number(pid) === process.pid && txnId !== undefined && /^\d+$/.test(txnId)) newest = Math.max(newest, Number(txnId));
  }
  if (newest < 0) throw new Error("The snapshot's read transaction is missing from LMDB's reader table.");
  return newest;
}

/** The meta page whose txnid is `txnId`, or null when commits have overwritten it since. */
async function snapshotMeta(source: FileHandle, txnId: number): Promise<SnapshotMeta | null> {
  const head = await readAt(source, META_HEADER_BYTES, 0);
  const pageSize = checkedMeta(head).readUInt32LE(PAGE_SIZE_OFFSET);
  for (let slot = 0; slot < NUM_METAS; slot++) {
    const page = checkedMeta(await readAt(source, pageSize, slot * pageSize));
    if (Number(page.readBigUInt64LE(TXN_ID_OFFSET)) === txnId) {
      return { page, pageSize, lastPage: Number(page.readBigUInt64LE(LAST_PAGE_OFFSET)), txnId };
    }
  }
  return null;
}

function checkedMeta(page: Buffer): Buffer {
  const isMeta = (page.readUInt16LE(PAGE_FLAGS_OFFSET) & P_META) !== 0;
  if (!isMeta || page.readUInt32LE(MAGIC_OFFSET) !== MDB_MAGIC || page.readUInt32LE(VERSION_OFFSET) !== MDB_DATA_VERSION) {
    throw new Error('The data file does not start with an LMDB meta page of the format this build copies (magic 0xBEEFC0DE, version 2).');
  }
  return page;
}

async function readAt(file: FileHandle, bytes: number, position: number): Promise<Buffer> {
  const buffer = Buffer.alloc(bytes);
  const { bytesRead } = await file.read(buffer, 0, bytes, position);
  if (bytesRead !== bytes) throw new Error(`The data file ended at ${position + bytesRead} bytes, inside a page LMDB says it holds.`);
  return buffer;
}

/**
 * Copies [start, end) in chunks, syncing every SNAPSHOT_SYNC_EVERY_BYTES, so
 * at most one small step of the copy ever waits to be written back. Two
 * waits pace it: after each sync, a rest that leaves the disk to others for
 * (100 - SNAPSHOT_DISK_PERCENT)% of the time (a sync that took 10 ms is
 * followed by 30 ms of rest at 25%), which slows the copy on a slow or busy
 * disk whatever the rate says; and a sleep whenever it is ahead of `pace`.
 */
async function copyRange(source: FileHandle, target: FileHandle, start: number, end: number, pace: CopyPace): Promise<void> {
  const buffer = Buffer.alloc(SNAPSHOT_CHUNK_BYTES);
  const startedMs = performance.now();
  let unsynced = 0;
  for (let position = start; position < end; ) {
    const length = Math.min(buffer.length, end - position);
    const { bytesRead } = await source.read(buffer, 0, length, position);
    if (bytesRead !== length) throw new Error(`The data file ended at ${position + bytesRead} bytes, inside a page LMDB says it holds.`);
    await target.write(buffer, 0, length, position);
    position += length;
    unsynced += length;
    if (unsynced >= SNAPSHOT_SYNC_EVERY_BYTES) {
      const syncStartedMs = performance.now();
      await target.datasync();
      unsynced = 0;
      await sleep(((performance.now() - syncStartedMs) * (PERCENT - SNAPSHOT_DISK_PERCENT)) / SNAPSHOT_DISK_PERCENT);
    }
    const aheadMs = ((position - start) / pace.bytesPerSecond) * MS_PER_SECOND - (performance.now() - startedMs);
    if (aheadMs > 0) await sleep(aheadMs);
  }
}

const PERCENT = 100;

/** Both meta slots of the copy hold the snapshot's meta page (each with its own page number), so LMDB opens that snapshot whichever slot it trusts. */
async function writeMetaPages(target: FileHandle, meta: SnapshotMeta): Promise<void> {
  for (let slot = 0; slot < NUM_METAS; slot++) {
    const page = Buffer.from(meta.page);
    page.writeBigUInt64LE(BigInt(slot), 0);
    await target.write(page, 0, meta.pageSize, slot * meta.pageSize);
  }
}
