/**
 * The server as a real process, for the tests that signal, limit or kill
 * it: `spawnServer` of the built `scripts/crash/server-process.js`. The
 * global set-up compiles the project before any test runs, and the built
 * module starts the built server that lies beside it.
 */
type Spawn = typeof import('../../scripts/crash/server-process.js').spawnServer;

export async function spawnServer(...args: Parameters<Spawn>): ReturnType<Spawn> {
  const built = (await import('../../dist/scripts/crash/server-process.js' as string)) as { spawnServer: Spawn };
  return built.spawnServer(...args);
}
