import { execFileSync } from 'node:child_process';

/** Set once the build has run in this vitest process, so that the second project does not build again. */
const BUILT = 'CREDIT_ORDER_API_TEST_BUILT';

/**
 * Some tests run the built server as a real process (to kill it); build
 * once before any test so they never run stale code. Both vitest projects
 * name this set-up, and vitest runs it for each: the first builds. The
 * build stamps dist/ as current (scripts/build-when-stale.mjs), as
 * `npm run build` does.
 */
export default function setup(): void {
  if (process.env[BUILT] === '1') return;
  execFileSync(process.execPath, ['scripts/build-when-stale.mjs', '--always'], { stdio: 'inherit' });
  process.env[BUILT] = '1';
}
