/**
 * How often each header whose repetition would be ambiguous was sent, and
 * the total size of the headers: read once per request, synchronously, by
 * both customer APIs.
 */
import type { HttpRequest } from './uws.js';

export interface HeaderCounts {
  apiKey: number;
  apiSecret: number;
  idempotencyKey: number;
  contentLength: number;
  /** Total length of header names and values. */
  bytes: number;
}

export function countHeaders(req: HttpRequest): HeaderCounts {
  const counts: HeaderCounts = { apiKey: 0, apiSecret: 0, idempotencyKey: 0, contentLength: 0, bytes: 0 };
  req.forEach((name, value) => {
    counts.bytes += name.length + value.length;
    if (name === 'x-api-key') counts.apiKey++;
    else if (name === 'x-api-secret') counts.apiSecret++;
    else if (name === 'idempotency-key') counts.idempotencyKey++;
    else if (name === 'content-length') counts.contentLength++;
  });
  return counts;
}

/**
 * The Idempotency-Key header as the order path wants it: null when absent,
 * '\n' (never a valid key) when repeated, else its value. uWS returns '' for
 * a missing header and for an empty one; the count tells them apart.
 */
export function idempotencyHeader(req: HttpRequest, counts: HeaderCounts): string | null {
  return counts.idempotencyKey === 0 ? null : counts.idempotencyKey > 1 ? '\n' : req.getHeader('idempotency-key');
}
