/**
 * The request headers the customer APIs read, in one pass over them: how
 * often each header whose repetition would be ambiguous was sent, the
 * values the APIs use, and the total size of the headers. Read once per
 * request, synchronously, by both customer APIs. Each `getHeader` would be
 * one more call into uWS's native module, so the values are taken during
 * the pass that counts them.
 */
import type { HttpRequest } from './uws.js';

export interface HeaderCounts {
  apiKey: number;
  apiSecret: number;
  idempotencyKey: number;
  contentLength: number;
  /** Total length of header names and values. */
  bytes: number;
  /** The headers' values, as `getHeader` gives them: the first one sent, '' when absent. */
  values: HeaderValues;
}

export interface HeaderValues {
  apiKey: string;
  apiSecret: string;
  idempotencyKey: string;
  contentLength: string;
  contentType: string;
}

export function countHeaders(req: HttpRequest): HeaderCounts {
  const values: HeaderValues = { apiKey: '', apiSecret: '', idempotencyKey: '', contentLength: '', contentType: '' };
  const counts: HeaderCounts = { apiKey: 0, apiSecret: 0, idempotencyKey: 0, contentLength: 0, bytes: 0, values };
  let contentTypes = 0;
  req.forEach((name, value) => {
    counts.bytes += name.length + value.length;
    if (name === 'x-api-key') {
      if (counts.apiKey++ === 0) values.apiKey = value;
    } else if (name === 'x-api-secret') {
      if (counts.apiSecret++ === 0) values.apiSecret = value;
    } else if (name === 'idempotency-key') {
      if (counts.idempotencyKey++ === 0) values.idempotencyKey = value;
    } else if (name === 'content-length') {
      if (counts.contentLength++ === 0) values.contentLength = value;
    } else if (name === 'content-type') {
      if (contentTypes++ === 0) values.contentType = value;
    }
  });
  return counts;
}

/**
 * The Idempotency-Key header as the order path wants it: null when absent,
 * '\n' (never a valid key) when repeated, else its value. uWS gives '' for
 * a missing header and for an empty one; the count tells them apart.
 */
export function idempotencyHeader(counts: HeaderCounts): string | null {
  return counts.idempotencyKey === 0 ? null : counts.idempotencyKey > 1 ? '\n' : counts.values.idempotencyKey;
}
