/**
 * Building the test-only C libraries the crash tests load into the server
 * with LD_PRELOAD (power-loss.c, late-sync.c, fail-sync.c), and the environment that
 * loads several of them at once.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Compiles scripts/crash/<name>.c into a temp directory: the library's path, or why it could not be built. */
export function buildPreloadLibrary(name: string): { library: string } | { missing: string } {
  const source = fileURLToPath(new URL(`../../../scripts/crash/${name}.c`, import.meta.url));
  const out = join(mkdtempSync(join(tmpdir(), `credit-order-${name}-`)), `${name}.so`);
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-Wall', '-o', out, source, '-ldl', '-lpthread'], { encoding: 'utf8' });
  if (cc.error !== undefined) return { missing: `no C compiler (cc) to build ${name}.c` };
  if (cc.status !== 0) return { missing: `${name}.c did not build: ${cc.stderr.trim().split('\n')[0] ?? `cc exit ${cc.status}`}` };
  return { library: out };
}

/**
 * The environment of a server with every one of `envs` applied, their
 * LD_PRELOAD lists joined in the order given: the first library's fsync is
 * the one the server calls, and it calls the next one's.
 */
export function mergePreloadEnv(...envs: Record<string, string>[]): Record<string, string> {
  const preload = envs.map((e) => e['LD_PRELOAD']).filter((p): p is string => p !== undefined && p !== '');
  return Object.assign({}, ...envs, preload.length === 0 ? {} : { LD_PRELOAD: preload.join(':') });
}
