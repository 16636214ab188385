/**
 * The receiver for the webhooks-on benchmark: a plain local HTTP server that
 * answers every delivery 204 at once and counts them. It runs in the bench
 * process, so on this two-core machine its CPU is taken from the server's
 * share, as the price of measuring on one machine (the comparison errs
 * against webhooks).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Sink {
  url: string;
  received(): number;
  /** TCP connections accepted so far (keep-alive should hold this near the sender's socket limit). */
  connections(): number;
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
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
