#!/usr/bin/env node
/**
 * Compiles the TypeScript sources into dist/ when the build is missing or
 * older than them, and does nothing when it is current, so that `npm start`
 * starts the built server at once and `npm ci` on a fresh clone (its
 * `prepare`) builds once. Plain JavaScript: it runs before anything is
 * compiled.
 *
 * Current means: dist/.build-stamp exists, and nothing under src/, scripts/
 * or bench/, nor tsconfig.json or tsconfig.client.json, was modified after
 * the build that wrote it began. A directory's own time counts too, so a deleted or renamed file
 * makes the build stale. The stamp carries the build's start time less one
 * second (file times lag the clock by a tick), so a file saved during a
 * build makes the next start build again, never the other way round.
 *
 * A release tarball (`npm pack`) carries dist/ and no sources: there is
 * nothing to build, TypeScript (a dev dependency) is not needed, and
 * `npm ci --omit=dev` installs it.
 *
 * `--always` builds whatever the stamp says (`npm run build`, the test
 * suite's set-up).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['src', 'scripts', 'bench', 'tsconfig.json', 'tsconfig.client.json'].map((name) => join(ROOT, name));
const STAMP = join(ROOT, 'dist', '.build-stamp');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** File times come from the kernel's coarse clock, up to a tick behind Date.now(); a second covers it. */
const CLOCK_SLACK_MS = 1000;

/** The latest modification time of a file, or of a directory and everything in it. */
function newestMs(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMs(join(path, name)));
  return newest;
}

function isCurrent() {
  if (!existsSync(STAMP)) return false;
  const builtMs = statSync(STAMP).mtimeMs;
  return SOURCES.every((path) => !existsSync(path) || newestMs(path) < builtMs);
}

function build() {
  if (!existsSync(TSC)) {
    process.stderr.write(
      'credit-order-api: dist/ is missing or older than the sources, and TypeScript is not installed. ' +
        'Run `npm ci` (with the dev dependencies) to build from source, or install a release tarball (`npm pack`), which carries dist/.\n',
    );
    process.exit(1);
  }
  const startedMs = Date.now();
  try {
    // The sources, then the typed client's declarations (package.json exports ./client with its types).
    for (const project of ['tsconfig.json', 'tsconfig.client.json']) {
      if (project === 'tsconfig.json' || existsSync(join(ROOT, project))) execFileSync(process.execPath, [TSC, '-p', join(ROOT, project)], { stdio: 'inherit' });
    }
  } catch {
    // tsc has printed what is wrong.
    process.exit(1);
  }
  closeSync(openSync(STAMP, 'w'));
  const stampS = (startedMs - CLOCK_SLACK_MS) / 1000;
  utimesSync(STAMP, stampS, stampS);
}

const args = process.argv.slice(2);
if (args.some((arg) => arg !== '--always')) {
  process.stderr.write(`Usage: node scripts/build-when-stale.mjs [--always]; unknown: ${args.filter((arg) => arg !== '--always').join(' ')}\n`);
  process.exit(2);
}
const always = args.includes('--always');
if (!existsSync(join(ROOT, 'src'))) {
  // A release: dist/ came in the package.
} else if (always || !isCurrent()) {
  build();
}
