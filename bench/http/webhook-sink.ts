/**
 * The receiver for the webhooks-on benchmark: a plain local HTTP server that
 * answers every delivery 204 at once and counts them. It runs in the bench
 * process, so on this two-core machine its CPU is taken from the server's
 * share, as the price of measuring on one machine (the comparison errs
 * against webhooks). `node` (node:http, the default and the bench of
 * record's) or `uws` (uWebSockets.js, about half the CPU per delivery): the
 * two in one run say how much of webhooks' measured cost is the receiver's
 * share of the cores, which a receiver on another machine would not take.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeListenSocket, createApp, localPort, type ListenSocket } from '../../src/http/transport/uws.js';

export type SinkKind = 'node' | 'uws';

export interface Sink {
  url: string;
  received(): number;
  /** TCP connections accepted so far (keep-alive should hold this near the sender's socket limit); null where the server does not tell (uws). */
  connections(): number | null;
  close(): Promise<void>;
}

export async function startSink(kind: SinkKind = 'node'): Promise<Sink> {
  if (kind === 'uws') return startUwsSink();
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    connections: () => connections,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function startUwsSink(): Promise<Sink> {
  let received = 0;
  const app = createApp();
  app.post('/*', (res) => {
    res.onAborted(() => {});
    res.onData((_chunk, isLast) => {
      if (!isLast) return;
      received++;
      res.cork(() => res.writeStatus('204 No Content').end());
    });
  });
  const socket = await new Promise<ListenSocket>((resolve, reject) => app.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('the uws webhook receiver could not listen on 127.0.0.1')))));
  return {
    url: `http://127.0.0.1:${localPort(socket)}/hook`,
    received: () => received,
    connections: () => null,
    async close() {
      closeListenSocket(socket);
      app.close();
    },
  };
}
