/**
 * Reads a request body with a size limit enforced twice: from
 * Content-Length before any byte arrives, and while bytes arrive (for
 * chunked or lying clients). uWS hands out chunks that are only valid during
 * the callback, so each one is copied.
 */
import type { HttpResponse } from './uws.js';

export type BodyResult = { kind: 'body'; bytes: Buffer } | { kind: 'too-large' };

export function readBody(res: HttpResponse, contentLength: string, bytesMax: number, done: (result: BodyResult) => void): void {
  if (contentLength !== '' && (!/^\d+$/.test(contentLength) || Number(contentLength) > bytesMax)) {
    done({ kind: 'too-large' });
    return;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let finished = false;
  res.onData((chunk, isLast) => {
    if (finished) return;
    total += chunk.byteLength;
    if (total > bytesMax) {
      finished = true;
      done({ kind: 'too-large' });
      return;
    }
    // Copied into Node's pooled memory: `chunk.slice(0)` made a new
    // ArrayBuffer per request, and sweeping thousands of those was a third
    // of every young-generation GC pause.
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      finished = true;
      done({ kind: 'body', bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) });
    }
  });
}
