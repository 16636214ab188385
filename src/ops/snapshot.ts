/**
 * Snapshots: a copy of the live store's data file into a fresh directory,
 * paced below the disk's rate and synced in small steps (paced-copy.ts),
 * then opened read-only and verified before success is reported. The copy
 * holds one LMDB read transaction for its whole length, so the server keeps
 * committing while it runs and the snapshot is one consistent commit (the
 * log and the tables always commit together).
 *
 * The snapshot directory is an ordinary store directory (`data.mdb`, plus
 * the `lock.mdb` that opening it creates): `openStore(dir)` opens it, and
 * starting a server on a copy of it restores that state.
 *
 * It runs synchronous work (the copy's verification) where it is called:
 * a server runs it through `OperatorJobs`, in a child process.
 */
import { statSync } from 'node:fs';
import { mkdir, open, readdir, stat } from 'node:fs/promises';
import { BYTES_PER_MIB, LMDB_FILES, makeFilesPrivate, PRIVATE_DIR_MODE } from '../platform/index.js';
import { dirname, join, resolve } from 'node:path';
import { openStore, type Store } from '../wal/index.js';
import { pacedCopy, type CopyPace } from './paced-copy.js';
import type { SnapshotReport } from './snapshot-report.js';
import { verifyLedger, type VerifyProgress, type VerifyReport } from './verify.js';
import { SNAPSHOT_MB_PER_SECOND_DEFAULT } from './limits.js';

export type { SnapshotReport } from './snapshot-report.js';
export type { CopyPace } from './paced-copy.js';

/** The name of LMDB's data file inside an environment directory. */
const DATA_FILE = 'data.mdb';

/**
 * Copies the live store into `outDir`, verifies the copy and reports it.
 * Refuses a non-empty `outDir` (never overwrites an older snapshot). If the
 * copy does not verify, throws with the broken invariant and leaves the
 * directory for inspection.
 */
export async function takeSnapshot(store: Store, outDir: string, pace: CopyPace = { bytesPerSecond: SNAPSHOT_MB_PER_SECOND_DEFAULT * BYTES_PER_MIB }, progress?: VerifyProgress): Promise<SnapshotReport> {
  const dir = resolve(outDir);
  await prepareEmptyDirectory(dir);
  const dataFile = join(dir, DATA_FILE);
  // A single-file environment is its data file; a directory environment
  // keeps it as data.mdb. Either way the copy is <dir>/data.mdb.
  const sourceFile = isSingleFileEnvironment(store) ? store.path : join(store.path, DATA_FILE);
  const { txnId } = await pacedCopy(store.root, sourceFile, dataFile, pace);
  // The copy syncs its data; its directory entry is synced here, so a
  // reported snapshot survives a power cut.
  await fsyncPath(dir);
  await fsyncPath(dirname(dir));
  const bytes = (await stat(dataFile)).size;

  // The copy holds what the live store holds (secret hashes, the order-id
  // key): only the server's user may read it, like the live files.
  makeFilesPrivate(dir, LMDB_FILES);
  const copy = openStore(dir, { readOnly: true });
  makeFilesPrivate(dir, LMDB_FILES);
  let verify: VerifyReport;
  try {
    const copied = copy.root.getStats() as { lastTxnId: number };
    if (copied.lastTxnId !== txnId) {
      throw new Error(`The snapshot at ${dir} opens at LMDB transaction ${copied.lastTxnId}, not at ${txnId}, the one it copied, so it was not accepted.`);
    }
    verify = verifyLedger(copy, progress);
  } finally {
    await copy.close();
  }
  if (!verify.ok) {
    throw new Error(`The snapshot at ${dir} does not verify, so it was not accepted (the directory is left for inspection): ${verify.firstBroken}`);
  }
  return { path: dir, bytes, events: verify.counts.events, verify };
}

async function prepareEmptyDirectory(dir: string): Promise<void> {
  let entries: string[];
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) throw new Error(`The snapshot path ${dir} exists and is not a directory; choose a fresh directory.`);
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return;
  }
  if (entries.length > 0) {
    throw new Error(`The snapshot directory ${dir} already exists and is not empty; choose a fresh directory so no earlier snapshot is overwritten.`);
  }
}

/**
 * Whether the live store is one file rather than a directory (openStore
 * opens an existing directory as a directory environment whatever its
 * name); the root database keeps the path it was opened with.
 */
function isSingleFileEnvironment(store: Store): boolean {
  const path = (store.root as unknown as { path?: unknown }).path;
  return typeof path === 'string' && statSync(path, { throwIfNoEntry: false })?.isFile() === true;
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // Some platforms refuse fsync on a directory handle; the data file's own
    // fsync above has already succeeded by then.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM') throw error;
  } finally {
    await handle.close();
  }
}
