/**
 * A client that pipelines requests and never reads the answers must not
 * make the server hold the answers (`res.end` copies what the socket cannot
 * take into a per-connection buffer with no bound: 20,000 pipelined
 * `GET /api/v1/openapi.json` grew the server by 590 MB). Answers are paced
 * (reply.ts, endPaced): once the kernel's socket buffers are full, the
 * server answers that connection no more, and uWS closes it.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { endPaced } from '../../src/http/transport/reply.js';
import { closeListenSocket, createApp, localPort, type ListenSocket } from '../../src/http/transport/uws.js';
import { useServer } from '../helpers/server.js';

describe('a client that pipelines requests and never reads the answers', () => {
  const t = useServer({ accounts: { reader: '10' } });

  /** Answers counted for the route with this status, from /metrics. */
  async function answered(route: string, status: number): Promise<number> {
    const text = (await t.admin('GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`coa_http_requests_total{route="${route}",status="${status}",`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  /**
   * Writes `request` over and over on a connection that never reads, until
   * the server drops the connection (a write then fails) or has given more
   * than `cap` answers (route, status) to it, so that a server without the
   * bound does not eat the machine's memory.
   */
  async function abuse(request: string, route: string, status: number, cap: number): Promise<{ dropped: boolean; answered: number }> {
    const before = await answered(route, status);
    const socket: Socket = connect({ port: t.server.port, host: '127.0.0.1' });
    socket.pause();
    let dropped = false;
    socket.on('error', () => {});
    socket.on('close', () => (dropped = true));
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    const chunk = request.repeat(cap / 20);
    let count = 0;
    while (!dropped && count <= cap) {
      await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
      count = (await answered(route, status)) - before;
    }
    // Another client is served meanwhile.
    expect((await t.api('GET', '/api/v1/balance', t.accounts.reader)).status).toBe(200);
    socket.destroy();
    return { dropped, answered: count };
  }

  // While the client does not read, the kernel's socket buffers take a few
  // MB of answers (Linux: up to tcp_wmem's 4 MB sent, plus the client's
  // receive buffer, which grows only as it reads); then the server answers
  // no more. Each cap is several times that.
  it('large answers (the public OpenAPI document, 30 kB): dropped before 1,000 answers (30 MB)', async () => {
    const r = await abuse('GET /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n', '/api/v1/openapi.json', 200, 1_000);
    expect(r).toEqual({ dropped: true, answered: expect.any(Number) });
    expect(r.answered).toBeLessThanOrEqual(1_000);
  });

  it('small answers (404, 250 B): dropped before 100,000 answers (25 MB)', async () => {
    const r = await abuse('GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n', 'unknown', 404, 100_000);
    expect(r).toEqual({ dropped: true, answered: expect.any(Number) });
    expect(r.answered).toBeLessThanOrEqual(100_000);
  });

  it('a client that reads its answers is served in full', async () => {
    const res = await fetch(`${t.url}/api/v1/openapi.json`);
    const doc = (await res.json()) as { openapi: string };
    expect(doc.openapi).toMatch(/^3\./);
  });
});

describe('a paced answer larger than the socket buffers', () => {
  it('reaches a client that reads only after the server has had to wait', async () => {
    // 8 MB cannot fit in loopback socket buffers while the client does not
    // read, so the rest must wait for onWritable.
    const body = 'x'.repeat(8 * 1024 * 1024);
    let handled!: (waited: boolean) => void;
    const waited = new Promise<boolean>((resolve) => (handled = resolve));
    const app = createApp();
    app.any('/*', (res) => {
      res.onAborted(() => {});
      endPaced(res, body);
      // Still unfinished: the response object stays valid (a finished one would throw).
      handled(res.getWriteOffset() < body.length);
    });
    const listen = await new Promise<ListenSocket>((resolve) => app.listen('127.0.0.1', 0, (s) => resolve(s)));
    const socket = connect({ port: localPort(listen), host: '127.0.0.1' });
    try {
      socket.pause();
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await waited).toBe(true);
      const chunks: Buffer[] = [];
      const received = new Promise<Buffer>((resolve, reject) => {
        let length = 0;
        socket.on('error', reject);
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          length += chunk.length;
          if (length >= body.length) {
            const all = Buffer.concat(chunks);
            const headEnd = all.indexOf('\r\n\r\n');
            if (headEnd >= 0 && all.length - headEnd - 4 >= body.length) resolve(all);
          }
        });
      });
      socket.resume();
      const all = await received;
      const headEnd = all.indexOf('\r\n\r\n');
      expect(all.subarray(0, 15).toString()).toBe('HTTP/1.1 200 OK');
      expect(all.subarray(headEnd + 4).equals(Buffer.from(body))).toBe(true);
    } finally {
      socket.destroy();
      closeListenSocket(listen);
    }
  });
});
