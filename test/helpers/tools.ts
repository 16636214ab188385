/**
 * The system tools some tests need (strace, a C compiler, PHP with curl,
 * curl, PostgreSQL, HAProxy): one probe each, and one rule for when a tool
 * is missing. On a developer's machine the test skips, with a line on
 * stderr saying what to install; under `CI=true` a missing tool is an error
 * that fails the test file with the same sentence, so that CI never turns a
 * guard off silently (`.ci/run` installs every tool named here).
 *
 *   const missing = requireTool('strace', 'the syscall-level durability test');
 *   describe.skipIf(missing !== null)(…)
 */
import { spawnSync } from 'node:child_process';
import { findPostgresBin } from '../../scripts/cluster/postgres.js';

export type ToolName = 'strace' | 'cc' | 'php-curl' | 'curl' | 'postgresql' | 'haproxy';

interface Tool {
  /** The Debian packages that provide it. */
  install: string;
  /** Null when the tool is usable here, else why not. */
  probe(): string | null;
}

/** Why running `command args` failed, or null when it exited 0. */
function runs(command: string, args: string[], install: string): string | null {
  const probe = spawnSync(command, args, { encoding: 'utf8' });
  if (probe.error !== undefined) return `${command} is not installed`;
  if (probe.status !== 0) return `${command} does not run here: ${probe.stderr.trim().split('\n')[0] || `exit ${probe.status}`} (${install})`;
  return null;
}

const TOOLS: Record<ToolName, Tool> = {
  strace: {
    install: 'apt-get install strace',
    // Tracing a child needs ptrace, which some containers forbid: try it.
    probe: () => runs('strace', ['-f', '-qq', '-o', '/dev/null', '--', 'true'], 'strace needs ptrace'),
  },
  cc: {
    install: 'apt-get install gcc libc6-dev',
    probe: () => runs('cc', ['--version'], 'a C compiler'),
  },
  'php-curl': {
    install: 'apt-get install php-cli php-curl',
    probe: () => {
      const probe = spawnSync('php', ['-r', "exit(function_exists('curl_init') ? 0 : 3);"], { encoding: 'utf8' });
      if (probe.error !== undefined) return 'php is not installed';
      if (probe.status === 3) return "PHP's curl extension is not installed";
      if (probe.status !== 0) return `php does not run here: ${probe.stderr.trim().split('\n')[0] || `exit ${probe.status}`}`;
      return null;
    },
  },
  curl: {
    install: 'apt-get install curl',
    probe: () => runs('curl', ['--version'], 'curl'),
  },
  postgresql: {
    install: 'apt-get install postgresql',
    probe: () => (findPostgresBin() === null ? 'the PostgreSQL server binaries (initdb, postgres, pg_basebackup) are not found' : null),
  },
  haproxy: {
    install: 'apt-get install haproxy',
    probe: () => runs('haproxy', ['-v'], 'haproxy'),
  },
};

/** True when the tests run in CI (`CI=true`, as `.ci/run` and most CI services set it). */
export function inCi(): boolean {
  const ci = process.env['CI'];
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * Null when `tool` is usable. Otherwise, under CI, throws an error naming
 * what needs it and what to install; elsewhere, writes a SKIPPED line to
 * stderr and returns that sentence as the reason to skip.
 */
export function requireTool(tool: ToolName, neededBy: string): string | null {
  const why = TOOLS[tool].probe();
  return why === null ? null : missingTool(tool, neededBy, why);
}

/**
 * The same rule for a tool found by a test's own probe (building a C
 * library, for one): the sentence of why it cannot be used, thrown under
 * CI, else reported and returned.
 */
export function missingTool(tool: ToolName, neededBy: string, why: string): string {
  const sentence = `${neededBy} needs ${tool}: ${why}; install it with \`${TOOLS[tool].install}\`.`;
  if (inCi()) throw new Error(`CI=true and a required tool is missing: ${sentence}`);
  process.stderr.write(`SKIPPED ${sentence}\n`);
  return sentence;
}
