/**
 * A real local HTTP receiver for webhook tests (a fake of what is outside
 * the product: a reseller's endpoint). It records every request and checks
 * its signature with the `standardwebhooks` package, as a receiver would,
 * and it answers as the test commands: 2xx, an error status, a redirect, or
 * no answer at all (hang), for every request or for the next few.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { prepareWebhookCheck, webhookProblems } from './openapi-check.js';
import { waitFor } from './wait-for.js';

/** How long a wait for deliveries may take: retries and pacing run on real time here. */
const RECEIVER_DEADLINE_MS = 20_000;

export type Behaviour = 'ok' | 'fail' | 'hang' | 'redirect';

export interface Received {
  path: string;
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Webhook.verify accepted it (or, when the test's clock is far from real time, the library's own signature matched). */
  verified: boolean;
  /** What this receiver answered. */
  answered: Behaviour;
  /** performance.now() when the request's body had arrived (latency tests compare it with when they placed the order). */
  atMs: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Every request that came in, even ones not recorded as deliveries (the count is what "never sent" checks). */
  connections: () => number;
  setSecret(path: string, secret: string): void;
  /** The behaviour for every request from now on. */
  behave(b: Behaviour): void;
  /** The behaviour for the next `n` requests, then back to the standing one. */
  next(n: number, b: Behaviour): void;
  /** The standing behaviour for requests to one path (before any queued `next`). */
  behaveOn(path: string, b: Behaviour): void;
  /** The behaviour for every request whose parsed body matches (before anything else). */
  behaveWhen(match: (json: Received['json']) => boolean, b: Behaviour): void;
  /** Answers every hanging request (with 200) and stops hanging new ones. */
  releaseHung(): void;
  /** Answers every hanging request with 500 (a late failure, at the moment the test chooses). */
  failHung(): void;
  /** Waits (real time, bounded) until `check` holds. */
  waitFor(check: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Closes the receiver; throws when a message it received departs from the OpenAPI document's webhooks. */
  close(): Promise<void>;
}

function verify(secret: string, req: IncomingMessage, body: string): boolean {
  const wh = new Webhook(secret);
  const headers = {
    'webhook-id': String(req.headers['webhook-id']),
    'webhook-timestamp': String(req.headers['webhook-timestamp']),
    'webhook-signature': String(req.headers['webhook-signature']),
  };
  try {
    wh.verify(body, headers);
    return true;
  } catch (error) {
    if (!/timestamp/i.test(String(error))) return false;
    // The server's clock is the test's (moved hours ahead): check the signature itself with the library.
    const expected = wh.sign(headers['webhook-id'], new Date(Number(headers['webhook-timestamp']) * 1000), body);
    return headers['webhook-signature'].split(' ').includes(expected);
  }
}

export async function startReceiver(): Promise<Receiver> {
  // Built now, not on the first message: the server shares this process's event loop, and building it there would stall the dispatcher's deliveries.
  prepareWebhookCheck();
  const secrets = new Map<string, string>();
  const received: Received[] = [];
  const hung: ServerResponse[] = [];
  let standing: Behaviour = 'ok';
  const byPath = new Map<string, Behaviour>();
  const byBody: { match: (json: Received['json']) => boolean; b: Behaviour }[] = [];
  const queued: Behaviour[] = [];
  let requests = 0;
  /** How messages departed from the OpenAPI document's webhooks; `close` throws when there is any. */
  const undocumented: string[] = [];
  const server: Server = createServer((req, res) => {
    requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const path = req.url ?? '/';
      const secret = secrets.get(path);
      let json: Received['json'];
      try {
        json = JSON.parse(body);
      } catch {
        json = { type: '', timestamp: '', data: {} };
      }
      // A request with a webhook-id is a message of the server's dispatcher (tests also post here directly).
      const pick = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
      if (pick('webhook-id') !== undefined) {
        undocumented.push(...webhookProblems({ 'webhook-id': pick('webhook-id'), 'webhook-timestamp': pick('webhook-timestamp'), 'webhook-signature': pick('webhook-signature') }, body));
      }
      const behaviour = byBody.find((r) => r.match(json))?.b ?? byPath.get(path) ?? queued.shift() ?? standing;
      received.push({
        path,
        id: String(req.headers['webhook-id']),
        timestamp: Number(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body,
        json,
        verified: secret !== undefined && verify(secret, req, body),
        answered: behaviour,
        atMs: performance.now(),
      });
      switch (behaviour) {
        case 'ok':
          res.writeHead(204).end();
          return;
        case 'fail':
          res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver failing on command');
          return;
        case 'redirect':
          res.writeHead(307, { location: 'http://127.0.0.1:9/elsewhere' }).end();
          return;
        case 'hang':
          hung.push(res);
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    connections: () => requests,
    setSecret: (path, secret) => secrets.set(path, secret),
    behave: (b) => {
      standing = b;
    },
    next: (n, b) => {
      for (let i = 0; i < n; i++) queued.push(b);
    },
    behaveOn: (path, b) => {
      byPath.set(path, b);
    },
    behaveWhen: (match, b) => {
      byBody.push({ match, b });
    },
    releaseHung: () => {
      if (standing === 'hang') standing = 'ok';
      for (const res of hung.splice(0)) if (!res.destroyed) res.writeHead(200).end();
    },
    failHung: () => {
      for (const res of hung.splice(0)) if (!res.destroyed) res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver failing late');
    },
    waitFor(check, timeoutMs = RECEIVER_DEADLINE_MS) {
      // The condition's own source says what was awaited.
      return waitFor(`the receiver's requests to satisfy ${check.toString()}`, () => check(received), timeoutMs, () => `${received.length} requests received`);
    },
    async close() {
      for (const res of hung.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (undocumented.length > 0) throw new Error(`The webhook messages do not match docs/openapi.json:\n${undocumented.join('\n')}`);
    },
  };
}
