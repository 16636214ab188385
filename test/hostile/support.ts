/**
 * Shared helpers for the hostile tests. A tiny raw-TCP HTTP/1.1 client for hostile tests: it sends exactly the
 * bytes it is given (things fetch refuses to send) and reads back at most one
 * response, or notices that the server closed the connection.
 */
import { mulberry32 } from '../../scripts/mulberry32.js';
import { connect, type Socket } from 'node:net';

export interface RawResult {
  /** Status code of the first response, or null when none arrived. */
  status: number | null;
  /** Lower-cased header names to their values, in order. */
  headers: Map<string, string[]>;
  body: Buffer;
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** Nothing conclusive happened before the timeout. */
  timedOut: boolean;
  error: string | null;
}

export interface RawOptions {
  /** Close our side right after writing (truncated bodies): no answer is expected. */
  hangUp?: boolean;
  timeoutMs?: number;
  /** Source address of the connection (any 127.x.y.z works on Linux loopback). */
  localAddress?: string;
  host?: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * Sends `payload` (each part in its own write) on a fresh connection and
 * reads back at most one response (framed by Content-Length), or notices that
 * the server closed the connection, or gives up after `timeoutMs`.
 */
export function rawRequest(port: number, payload: Buffer | string | Array<Buffer | string>, options: RawOptions = {}): Promise<RawResult> {
  const parts = (Array.isArray(payload) ? payload : [payload]).map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p));
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise((resolve) => {
    const result: RawResult = { status: null, headers: new Map(), body: Buffer.alloc(0), closed: false, timedOut: false, error: null };
    let received = Buffer.alloc(0);
    let settled = false;
    let bodyStart = -1;
    let contentLength = -1;
    const socket: Socket = connect({ port, host: options.host ?? '127.0.0.1', ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (bodyStart >= 0) result.body = received.subarray(bodyStart, contentLength >= 0 ? bodyStart + contentLength : undefined);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => {
      result.timedOut = true;
      finish();
    }, timeoutMs);
    socket.on('connect', () => {
      for (const part of parts) socket.write(part);
      if (options.hangUp) socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (bodyStart < 0) {
        const end = received.indexOf(HEAD_END);
        if (end < 0) return;
        bodyStart = end + 4;
        const lines = received.subarray(0, end).toString('latin1').split('\r\n');
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
        result.status = m === null ? -1 : Number(m[1]);
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          if (colon < 0) continue;
          const name = line.slice(0, colon).trim().toLowerCase();
          const list = result.headers.get(name) ?? [];
          list.push(line.slice(colon + 1).trim());
          result.headers.set(name, list);
        }
        const cl = result.headers.get('content-length');
        if (cl !== undefined) contentLength = Number(cl[0]);
      }
      if (contentLength >= 0 && received.length - bodyStart >= contentLength) finish();
    });
    socket.on('error', (error) => {
      if (settled) return;
      result.error = error.message;
      result.closed = true;
      finish();
    });
    socket.on('close', () => {
      if (settled) return;
      result.closed = true;
      finish();
    });
  });
}

/** One HTTP exchange over fetch; header pairs may repeat a name. */
export interface HttpReply {
  status: number;
  headers: Headers;
  text: string;
}

export async function http(
  url: string,
  method: string,
  headers: Array<[string, string]> = [],
  body?: string | Uint8Array,
): Promise<HttpReply> {
  const init: RequestInit = { method, headers: headers.map(([k, v]) => [k, v] as [string, string]) };
  if (body !== undefined) init.body = body as BodyInit;
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/**
 * The rule every refused request must satisfy: a 4xx status (never 2xx,
 * never 5xx) and, when the body is JSON, `ok: false` with a string `error`
 * and `message`. Returns a description of the violation, or null.
 */
export function rejectionProblem(status: number | null, contentType: string | null, text: string): string | null {
  if (status === null || status < 400 || status > 499) return `status ${status}`;
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === undefined) {
    return contentType !== null && contentType.includes('json') ? 'JSON content type with a body that does not parse' : null;
  }
  const b = body as Record<string, unknown>;
  if (typeof b !== 'object' || b === null || b['ok'] !== false || typeof b['error'] !== 'string' || typeof b['message'] !== 'string') {
    return 'JSON body is not {ok:false, error:string, message:string}';
  }
  return null;
}

/** Runs the tasks with at most `concurrency` in flight; results in input order. */
export async function pool<T, R>(items: T[], concurrency: number, run: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** A small seeded PRNG (mulberry32), so raw-byte fuzzing is reproducible. */
export const seededRandom = mulberry32;
