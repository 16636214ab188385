/**
 * Starting the load generator (runner.js) and talking to it, shared by the
 * scenarios (scenario.ts), the load generator's ceiling check (ceiling.ts)
 * and the scaling runs (scaling.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { FromRunner, LoadResult, ToRunner } from './protocol.js';

const RUNNER = fileURLToPath(new URL('./runner.js', import.meta.url));

/** A port that was free a moment ago (bind port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Runner {
  child: ChildProcess;
  pid: number;
  /** One autocannon run; connections defaults to the configuration's. */
  run(label: string, durationS: number, connections?: number): Promise<LoadResult>;
  close(): Promise<void>;
}

/** Starts runner.js with the configuration file written by the caller; resolves once it is ready. */
export function startRunner(configFile: string): Promise<Runner> {
  const child = spawn(process.execPath, [RUNNER, configFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let waiting: { resolve: (m: FromRunner) => void; reject: (e: Error) => void } | null = null;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.on('message', (message: FromRunner) => {
    const w = waiting;
    waiting = null;
    w?.resolve(message);
  });
  void exited.then((code) => {
    const w = waiting;
    waiting = null;
    w?.reject(new Error(`the load generator exited (code ${code})`));
  });
  const next = (): Promise<FromRunner> =>
    new Promise((resolve, reject) => {
      waiting = { resolve, reject };
    });
  const send = (message: ToRunner): void => {
    child.send(message);
  };
  return next().then((first) => {
    if (first.type !== 'ready') throw new Error('the load generator did not start');
    return {
      child,
      pid: child.pid!,
      async run(label, durationS, connections) {
        const reply = next();
        send(connections === undefined ? { cmd: 'run', label, durationS } : { cmd: 'run', label, durationS, connections });
        const message = await reply;
        if (message.type === 'error') throw new Error(`load generator: ${message.message}`);
        if (message.type !== 'result') throw new Error('load generator: unexpected message');
        return message.result;
      },
      async close() {
        send({ cmd: 'exit' });
        await exited;
      },
    };
  });
}
