/**
 * Side traffic: signed webhook-like posts between two processes of their
 * own, neither of them the server, at a steady rate. A reference for the
 * webhooks benchmark (`bench:http --side-traffic N`): beside a server whose
 * endpoints are disabled, it measures what the same HTTP traffic as the
 * deliveries costs the order path on this machine without the server
 * taking part, so that a webhooks-on figure can be split into what the
 * machine charges for the traffic (a receiver on the same two cores) and
 * what the server's own webhook work costs.
 *
 * The posts are made as the dispatcher makes them: the same body, headers
 * and signature (message.ts), the same Sender (node:http, keep-alive, 16
 * sockets), started in bursts every 100 ms (the dispatcher starts its
 * share at each load sample), at most 16 in flight. The receiver is the
 * webhooks benchmark's own node:http sink.
 *
 *   node dist/bench/http/side-traffic.js receive          (its port on the IPC channel)
 *   node dist/bench/http/side-traffic.js send URL RATE    (posts until stopped)
 *
 * Both are stopped by SIGTERM (Node's default: they hold nothing to save)
 * or by the bench's IPC channel closing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageBody, messageHeaders, newWebhookSecret, Sender, type OutboxMessage } from '../../src/webhooks/index.js';
import { startSink } from './webhook-sink.js';

/** Bursts per second (the dispatcher's load samples come every 100 ms). */
const TICKS_PER_S = 10;
/** Most posts in flight (the dispatcher's default WEBHOOKS_CONCURRENCY). */
const IN_FLIGHT_MAX = 16;

export interface SideTraffic {
  /** The receiver's and the sender's process ids. */
  pids: number[];
  /** Posts answered so far, as the receiver counts them. */
  answered(): Promise<number>;
  /** Stops both processes. */
  close(): Promise<void>;
}

type Command = { ask: 'count' };
type Reply = { url: string } | { count: number };

/** Starts the receiver, then the sender at `rate` posts a second. */
export async function startSideTraffic(rate: number): Promise<SideTraffic> {
  if (!Number.isInteger(rate) || rate < 1) throw new Error(`side traffic needs a whole number of posts a second, at least 1; got ${rate}`);
  // No inherited node flags: the children are plain scripts, whatever ran the bench.
  const receiver = fork(script(), ['receive'], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await nextReply(receiver);
  if (!('url' in ready)) throw new Error('side traffic: the receiver did not say where it listens');
  const sender = fork(script(), ['send', ready.url, String(rate)], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return {
    pids: [receiver.pid!, sender.pid!],
    async answered() {
      // A send to a process that has just died fails here, not as an 'error' event; nextReply says it ended.
      receiver.send({ ask: 'count' } satisfies Command, () => {});
      for (;;) {
        const reply = await nextReply(receiver);
        if ('count' in reply) return reply.count;
      }
    },
    async close() {
      await Promise.all([stop(sender), stop(receiver)]);
    },
  };
}

/** The child's next message; a child that ends first is an error, not a wait for ever. */
async function nextReply(child: ChildProcess): Promise<Reply> {
  const ended = (): Error => new Error(`side traffic: its ${child.spawnargs[2] ?? ''} process ended (exit code ${String(child.exitCode)}, signal ${String(child.signalCode)})`);
  if (child.exitCode !== null || child.signalCode !== null) throw ended();
  const ac = new AbortController();
  try {
    const [reply] = (await Promise.race([once(child, 'message', { signal: ac.signal }), once(child, 'exit', { signal: ac.signal }).then(() => Promise.reject(ended()))])) as [Reply];
    return reply;
  } finally {
    ac.abort();
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** This file, built (the bench runs dist; tests import the sources). */
function script(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return here;
  return join(dirname(here), '..', '..', 'dist', 'bench', 'http', 'side-traffic.js');
}

async function receive(): Promise<void> {
  const sink = await startSink('node');
  process.on('message', (command: Command) => {
    if (command.ask === 'count') process.send!({ count: sink.received() } satisfies Reply);
  });
  process.send!({ url: sink.url } satisfies Reply);
}

function send(url: string, rate: number): void {
  const sender = new Sender({ allowPrivate: true, connectTimeoutMs: 5_000, timeoutMs: 10_000, socketsMax: IN_FLIGHT_MAX });
  const secret = newWebhookSecret();
  let inFlight = 0;
  let n = 0;
  let owed = 0;
  setInterval(() => {
    owed += rate / TICKS_PER_S;
    for (; owed >= 1 && inFlight < IN_FLIGHT_MAX; owed--) {
      const now = Date.now();
      const message: OutboxMessage = {
        id: `msg_side${(n++).toString(16).padStart(28, '0')}`,
        type: 'order.updated',
        atMs: now,
        subject: `side${n}`,
        data: `{"order":${n},"status":"Pending","charge":"1.000","start_count":null,"remains":"1000","currency":"INR"}`,
      };
      const body = messageBody(message);
      inFlight++;
      void sender.post(url, messageHeaders(message, body, [secret], now), body).finally(() => inFlight--);
    }
    // What could not start waits for the next burst, but never piles up beyond one second's worth.
    owed = Math.min(owed, rate);
  }, 1000 / TICKS_PER_S);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [role, ...rest] = process.argv.slice(2);
  // A bench that dies without stopping its children leaves none behind: they go with its IPC channel
  // (also when it closed while this process was still starting, before anyone listened for that).
  process.on('disconnect', () => process.exit(0));
  if (role === 'receive') void receive();
  else if (role === 'send') send(rest[0]!, Number(rest[1]));
  else {
    process.stderr.write('usage: side-traffic.js receive | send URL RATE\n');
    process.exit(2);
  }
  if (!process.connected) process.exit(0);
}
