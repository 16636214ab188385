/**
 * The late-sync shim (late-sync.c): every fsync and fdatasync of the server
 * starts a set time late, so that a reply sent before its sync leaves while
 * its data is still unsynced, whatever the disk's speed.
 */
import { buildPreloadLibrary } from './preload-library.js';

export function buildLateSyncLibrary(): { library: string } | { missing: string } {
  return buildPreloadLibrary('late-sync');
}

/**
 * The environment that loads the shim with every sync started `lateMs`
 * late, or only the syncs of files whose path contains `onlyPath`.
 */
export function lateSyncEnv(library: string, lateMs: number, onlyPath?: string): Record<string, string> {
  if (!Number.isSafeInteger(lateMs) || lateMs < 0) throw new Error(`the sync delay must be a whole number of milliseconds, not ${lateMs}`);
  return { LD_PRELOAD: library, LATE_SYNC_MS: String(lateMs), ...(onlyPath === undefined ? {} : { LATE_SYNC_PATH: onlyPath }) };
}
