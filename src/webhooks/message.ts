/**
 * A message as it goes on the wire (Standard Webhooks): the body
 * `{type, timestamp, data}` with `data` exactly the order as GET
 * /api/v1/status shows it (or the refill as GET /api/v1/refill_status does),
 * rendered into the row when the change was made, and the webhook-id,
 * webhook-timestamp and webhook-signature headers. A retry sends the same
 * body under the same id (only the timestamp and signature are new, as the
 * specification expects).
 */
import { MS_PER_SECOND, VERSION } from '../platform/index.js';
import type { OutboxMessage } from './records.js';
import { signatureHeader } from './signature.js';

export function messageBody(message: OutboxMessage): string {
  return `{"type":"${message.type}","timestamp":"${new Date(message.atMs).toISOString()}","data":${message.data}}`;
}

export function messageHeaders(message: OutboxMessage, body: string, secrets: readonly string[], nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / MS_PER_SECOND);
  return {
    'content-type': 'application/json',
    'user-agent': `credit-order-api-webhooks/${VERSION}`,
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, message.id, timestamp, body),
  };
}
