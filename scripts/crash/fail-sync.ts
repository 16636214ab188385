/**
 * The failing-sync shim (fail-sync.c): after a set number of successful
 * fsync/fdatasync calls on matching files, every later one fails with EIO,
 * so a test sees what the server does when its disk stops syncing.
 */
import { buildPreloadLibrary } from './preload-library.js';

export function buildFailSyncLibrary(): { library: string } | { missing: string } {
  return buildPreloadLibrary('fail-sync');
}

/**
 * The environment that loads the shim: the first `succeedCount` syncs of
 * files whose path contains `onlyPath` (every file when it is undefined)
 * succeed, and every later one fails with EIO.
 */
export function failSyncEnv(library: string, succeedCount: number, onlyPath?: string): Record<string, string> {
  if (!Number.isSafeInteger(succeedCount) || succeedCount < 0) throw new Error(`the number of syncs that succeed must be a whole number, not ${succeedCount}`);
  return { LD_PRELOAD: library, FAIL_SYNC_AFTER: String(succeedCount), ...(onlyPath === undefined ? {} : { FAIL_SYNC_PATH: onlyPath }) };
}
