/**
 * One delivery attempt over HTTP(S), with every limit a receiver chosen by
 * a customer needs: the address guard (after DNS, and on literal IPs, which
 * Node connects to without a look-up), a connect timeout, a deadline for
 * the whole answer, no redirects (a 3xx is a failure, never followed), and
 * a cap on the response body, which is read only to be thrown away.
 */
import http from 'node:http';
import https from 'node:https';
import { guardedHost, guardedLookup, isForbiddenHost } from './address-guard.js';
import type { AttemptOutcome } from './records.js';
import { RESPONSE_BYTES_MAX } from './limits.js';

export interface SenderOptions {
  allowPrivate: boolean;
  /** Most milliseconds to open the connection (TCP and TLS). */
  connectTimeoutMs: number;
  /** Most milliseconds from the start of the attempt to the receiver's status line. */
  timeoutMs: number;
  /** Most sockets open at once (keep-alive) per scheme. */
  socketsMax: number;
}

export interface AttemptResult {
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
}

export class Sender {
  private readonly http: http.Agent;
  private readonly https: https.Agent;
  private readonly lookup;

  constructor(private readonly options: SenderOptions) {
    const agentOptions = { keepAlive: true, maxSockets: options.socketsMax, maxTotalSockets: options.socketsMax, maxFreeSockets: options.socketsMax };
    this.http = new http.Agent(agentOptions);
    this.https = new https.Agent(agentOptions);
    this.lookup = guardedLookup(options.allowPrivate);
  }

  post(target: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return Promise.resolve({ outcome: 'failed', status: null, error: 'the URL cannot be parsed' });
    }
    if (!this.options.allowPrivate && isForbiddenHost(url.hostname)) {
      const host = guardedHost(url.hostname);
      return Promise.resolve({ outcome: 'forbidden', status: null, error: `${host} is a loopback, private or link-local address; set WEBHOOKS_ALLOW_PRIVATE=true to allow it` });
    }
    const secure = url.protocol === 'https:';
    const payload = Buffer.from(body);
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (result: AttemptResult): void => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      const request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.https : this.http,
        lookup: this.lookup as never,
        headers: { ...headers, 'content-length': String(payload.length) },
      });
      const deadline = setTimeout(() => {
        finish({ outcome: 'timeout', status: null, error: `no answer within ${this.options.timeoutMs} ms` });
        request.destroy();
      }, this.options.timeoutMs);
      // The deadline also ends a body that never finishes after an early status line.
      request.on('close', () => clearTimeout(deadline));
      request.on('socket', (socket) => {
        if (!socket.connecting) return;
        const connectTimer = setTimeout(() => {
          finish({ outcome: 'timeout', status: null, error: `could not connect within ${this.options.connectTimeoutMs} ms` });
          request.destroy();
        }, this.options.connectTimeoutMs);
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
        socket.once('close', () => clearTimeout(connectTimer));
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        const forbidden = (error as { code?: string }).code === 'FORBIDDEN_ADDRESS';
        finish({ outcome: forbidden ? 'forbidden' : 'failed', status: null, error: error.message });
      });
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > RESPONSE_BYTES_MAX) response.destroy();
        });
        response.on('error', () => {});
        if (status >= 200 && status < 300) finish({ outcome: 'delivered', status, error: null });
        else if (status >= 300 && status < 400) finish({ outcome: 'failed', status, error: `the receiver answered ${status}; redirects are not followed` });
        else finish({ outcome: 'failed', status, error: `the receiver answered ${status}` });
      });
      request.end(payload);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
