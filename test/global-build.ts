import { execFileSync } from 'node:child_process';

/**
 * Some tests run the built server as a real process (to kill it), and one
 * loads the published client with its type declarations; build once before
 * any test so they never run stale code.
 */
export default function setup(): void {
  for (const project of ['tsconfig.json', 'tsconfig.client.json']) {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project], { stdio: 'inherit' });
  }
}
