/**
 * libeatmydata, which the no-sync variants of the benchmarks preload
 * (`LD_PRELOAD`) into the server: it turns every fsync, fdatasync,
 * sync_file_range and O_SYNC/O_DSYNC open into a no-op, so that the same
 * build runs with everything but its syncs. A system package (Debian:
 * `apt-get install eatmydata`), not an npm one.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Where Debian, Ubuntu, Fedora and Arch put libeatmydata. */
export const LIBRARY_DIRS = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/lib'];

/** The path of libeatmydata.so, or null when it is not installed. */
export function findEatmydata(): string | null {
  for (const dir of LIBRARY_DIRS) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    const name = names.filter((n) => n.startsWith('libeatmydata.so')).sort()[0];
    if (name !== undefined) return join(dir, name);
  }
  return null;
}
