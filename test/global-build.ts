import { execFileSync } from 'node:child_process';

/**
 * Some tests run the built server as a real process (to kill it); build
 * once before any test so they never run stale code. The build stamps
 * dist/ as current (scripts/build-when-stale.mjs), as `npm run build` does.
 */
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build-when-stale.mjs', '--always'], { stdio: 'inherit' });
}
