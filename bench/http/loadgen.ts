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

/**
 * Ports handed to a process that binds them later (a PostgreSQL server, a
 * replicated node that must keep its ports across restarts) come from below
 * Linux's ephemeral range (32768–60999 by default). Ports in that range are
 * also what the kernel gives every outgoing connection and every bind to
 * port 0, so one taken from it can be handed to someone else between our
 * check and the real bind; below it, only another pick like this one can
 * collide.
 */
const FIXED_PORT_FIRST = 20_000;
const FIXED_PORT_LAST = 32_767;
const FIXED_PORT_TRIES = 50;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback port below the ephemeral range that was free a moment ago, for a process that binds it later. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < FIXED_PORT_TRIES; i++) {
    const port = FIXED_PORT_FIRST + Math.floor(Math.random() * (FIXED_PORT_LAST - FIXED_PORT_FIRST + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port between ${FIXED_PORT_FIRST} and ${FIXED_PORT_LAST} after ${FIXED_PORT_TRIES} tries`);
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
