/**
 * Reads a request body with a size limit enforced twice: from
 * Content-Length before any byte arrives, and while bytes arrive (for
 * chunked or lying clients).
 *
 * uWS hands out each chunk as an ArrayBuffer over its own receive buffer,
 * valid only during the callback (uWS detaches it afterwards). A body that
 * arrives whole, in one chunk, is handed to `done` as a view of that memory,
 * without a copy, so `done` runs inside the callback and must decode what it
 * needs before it returns, keeping no reference to `bytes`. A body that
 * arrives in pieces is copied piece by piece and joined.
 */
import type { HttpResponse } from './uws.js';

/** `bytes` is valid only until `done` returns (see above). */
export type BodyResult = { kind: 'body'; bytes: Buffer } | { kind: 'too-large' };

export function readBody(res: HttpResponse, contentLength: string, bytesMax: number, done: (result: BodyResult) => void): void {
  if (contentLength !== '' && (!/^\d+$/.test(contentLength) || Number(contentLength) > bytesMax)) {
    done({ kind: 'too-large' });
    return;
  }
  let chunks: Buffer[] | null = null;
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
    if (isLast && chunks === null) {
      finished = true;
      done({ kind: 'body', bytes: Buffer.from(chunk) });
      return;
    }
    // Copied into Node's pooled memory: `chunk.slice(0)` would make a new
    // ArrayBuffer per piece, and sweeping thousands of those lengthens every
    // young-generation GC pause.
    chunks ??= [];
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      finished = true;
      done({ kind: 'body', bytes: Buffer.concat(chunks, total) });
    }
  });
}
