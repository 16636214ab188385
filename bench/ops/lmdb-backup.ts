/**
 * LMDB's own copy, for comparison with the server's paced snapshot:
 * `node dist/bench/ops/lmdb-backup.js DATA_DIR OUT_DIR` opens the store
 * read-only and runs lmdb-js `backup()` (mdb_env_copy2, no compaction) into
 * OUT_DIR/data.mdb, then fsyncs it: the unpaced copy at the disk's full
 * rate. snapshot-under-load.ts runs it at nice 10 beside the same load.
 */
import { mkdirSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';

const [dataDir, outDir] = process.argv.slice(2);
if (dataDir === undefined || outDir === undefined) throw new Error('usage: lmdb-backup.js DATA_DIR OUT_DIR');
mkdirSync(outDir, { recursive: true });
const root = open({ path: dataDir, noSubdir: false, readOnly: true });
await root.backup(outDir, false);
const fd = openSync(join(outDir, 'data.mdb'), 'r');
fsyncSync(fd);
closeSync(fd);
await root.close();
