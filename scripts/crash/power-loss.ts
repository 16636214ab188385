/**
 * The power-loss recorder (power-loss.c): building it, and putting its
 * durable images in place of the data files after a kill, so that the
 * restarted server finds only what had been synced (see the C file).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('../../../scripts/crash/power-loss.c', import.meta.url));

/** Compiles the recorder into a temp directory: its path, or why it could not be built. */
export function buildPowerLossLibrary(): { library: string } | { missing: string } {
  const out = join(mkdtempSync(join(tmpdir(), 'credit-order-power-loss-')), 'power-loss.so');
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-Wall', '-o', out, SOURCE, '-ldl', '-lpthread'], { encoding: 'utf8' });
  if (cc.error !== undefined) return { missing: 'no C compiler (cc) to build the power-loss recorder (Debian: apt-get install gcc)' };
  if (cc.status !== 0) return { missing: `the power-loss recorder did not build: ${cc.stderr.trim().split('\n')[0] ?? `cc exit ${cc.status}`}` };
  return { library: out };
}

/** The environment that loads the recorder into a server whose data is in dataDir. */
export function powerLossEnv(library: string, dataDir: string, imagesDir: string): Record<string, string> {
  return { LD_PRELOAD: library, POWERLOSS_DIR: dataDir, POWERLOSS_IMAGES: imagesDir };
}

/**
 * After the server was killed: every data file becomes its durable image;
 * a data file with no image was never synced at all, so it is gone. LMDB's
 * lock file goes too (as after a reboot it would be stale).
 */
export function restoreDurableImages(dataDir: string, imagesDir: string): void {
  const images = new Set(readdirSync(imagesDir));
  for (const name of readdirSync(dataDir)) if (!images.has(name)) rmSync(join(dataDir, name), { force: true });
  for (const name of images) copyFileSync(join(imagesDir, name), join(dataDir, name));
  if (existsSync(join(dataDir, 'lock.mdb'))) rmSync(join(dataDir, 'lock.mdb'));
}
