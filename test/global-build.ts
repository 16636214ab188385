import { execFileSync } from 'node:child_process';

/**
 * Some tests run the built server as a real process (to kill it); build
 * once before any test so they never run stale code.
 */
export default function setup(): void {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
}
