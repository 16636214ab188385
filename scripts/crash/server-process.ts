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

export async function spawnServer(dataDir: string, adminToken: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN], {
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
