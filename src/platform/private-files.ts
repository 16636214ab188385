/**
 * The data directory holds the order-id key, secret hashes, the admin token
 * and every order: only the server's own user may read it. Directories the
 * server creates are 0700 and the files it keeps there 0600, whatever the
 * umask (LMDB itself creates its files 0664 less the umask).
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** LMDB's files in an environment directory. */
export const LMDB_FILES = ['data.mdb', 'lock.mdb'];

/**
 * Creates `dir` (and missing parents) as 0700. A directory that already
 * exists keeps the mode its owner gave it: the operator chose it.
 */
export function makePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Sets each existing file of `names` in `dir` to 0600 (a missing one is skipped). */
export function makeFilesPrivate(dir: string, names: readonly string[]): void {
  for (const name of names) {
    try {
      chmodSync(join(dir, name), PRIVATE_FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}
