/**
 * Runs the built server (dist/src/main.js) as a child process on free
 * ports, for tests and scripts that must kill it for real.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  adminUrl: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SpawnOptions {
  /**
   * Limit on the size of any file the server writes (RLIMIT_FSIZE, set with
   * util-linux `prlimit`): once LMDB's data file would grow past it, its
   * writes fail as on a full disk (Node ignores SIGXFSZ).
   */
  fileSizeLimitBytes?: number;
  /**
   * A command the server runs under, with its arguments, e.g. strace and
   * its options (the server's own command line follows them). The child
   * process is then that command, not the server itself.
   */
  wrapper?: string[];
}

/**
 * `env` adds to the test's environment and to the defaults below; a
 * variable set to undefined is left unset (Node passes no undefined value
 * to a child), so that its default applies.
 */
export async function spawnServer(dataDir: string, adminToken: string, env: Record<string, string | undefined> = {}, options: SpawnOptions = {}): Promise<ServerProcess> {
  const limit = options.fileSizeLimitBytes;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) throw new Error(`fileSizeLimitBytes must be a positive integer, not ${limit}`);
  const line = [...(limit === undefined ? [] : ['prlimit', `--fsize=${limit}`, '--']), ...(options.wrapper ?? []), process.execPath, MAIN];
  const [command, ...args] = line as [string, ...string[]];
  const child = spawn(command, args, {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      ADMIN_PORT: '0',
      ADMIN_TOKEN: adminToken,
      SEED_DEMO: 'false',
      LOG_LEVEL: 'info',
      RATE_LIMIT_DEFAULT: '100000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const ports = await new Promise<{ port: number; adminPort: number }>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.includes('"msg":"listening"')) continue;
        const parsed = JSON.parse(line) as { port: number; adminPort: number };
        resolve({ port: parsed.port, adminPort: parsed.adminPort });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then(({ code, signal }) => reject(new Error(`server exited (${code ?? signal}) before listening:\n${output}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${ports.port}`,
    adminUrl: `http://127.0.0.1:${ports.adminPort}`,
    output: () => output,
    exited,
  };
}
