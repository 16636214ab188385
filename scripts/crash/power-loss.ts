/**
 * The power-loss recorder (power-loss.c): building it, and putting its
 * durable images in place of the data files after a kill, so that the
 * restarted server finds only what had been synced (see the C file).
 */
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildPreloadLibrary } from './preload-library.js';

/** Compiles the recorder into a temp directory: its path, or why it could not be built. */
export function buildPowerLossLibrary(): { library: string } | { missing: string } {
  return buildPreloadLibrary('power-loss');
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
