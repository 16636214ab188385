/**
 * A copy of the built project with one deliberate durability bug planted,
 * for the tests that must show their check catches it: in sync mode 'log'
 * the commit log starts the fdatasync of a record it has written but does
 * not wait for it, so a batch is acknowledged once its record is written
 * and LMDB has committed it, while the record's sync may still be running.
 * On a fast disk that sync usually ends before the reply leaves anyway;
 * with every sync started late (the late-sync shim) it cannot. The copy
 * lives in a temp directory beside links to this project's node_modules and
 * package.json, so it runs like dist/ itself.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The line of dist/src/wal/commit-log.js that waits for a record's sync. */
const WAITS_FOR_SYNC = 'await new Promise((resolve, reject) => fdatasync(file.fd, (error) => (error === null ? resolve() : reject(error))));';
const DOES_NOT_WAIT = 'fdatasync(file.fd, () => { });';

export interface PlantedBuild {
  /** The copy's dist directory. */
  dist: string;
  remove(): void;
}

export function plantEarlyReply(): PlantedBuild {
  const root = mkdtempSync(join(tmpdir(), 'credit-order-api-planted-'));
  const dist = join(root, 'dist');
  cpSync(resolve('dist'), dist, { recursive: true });
  symlinkSync(resolve('node_modules'), join(root, 'node_modules'));
  symlinkSync(resolve('package.json'), join(root, 'package.json'));
  const file = join(dist, 'src/wal/commit-log.js');
  const source = readFileSync(file, 'utf8');
  // The bug must really be planted: a build whose line changed fails here, not silently later.
  if (source.split(WAITS_FOR_SYNC).length !== 2) throw new Error(`planting the early reply: ${file} no longer holds exactly one "${WAITS_FOR_SYNC}"`);
  writeFileSync(file, source.replace(WAITS_FOR_SYNC, DOES_NOT_WAIT));
  return { dist, remove: () => rmSync(root, { recursive: true, force: true }) };
}
