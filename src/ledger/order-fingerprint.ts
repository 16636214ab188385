/**
 * The Idempotency-Key fingerprint: what binds a key to its order's payload.
 * DESIGN.md: the same key and payload replay the first answer, a different
 * payload is 422 IDEMPOTENCY. "The same payload" means what the client
 * sent, not how the catalogue reads it today: the operator may change a
 * service's type or drip-feed flag between an order and its retry, and the
 * retry must still replay (see decide.ts, decideOrder).
 */
import { createHash } from 'node:crypto';
import { ORDER_INPUT_FIELDS, type OrderPayload } from './order-types.js';

/**
 * The payload as sent: service, target and every order-input field in a
 * fixed order, an absent field as null (API v2 sends an empty field as
 * absent, and its integers as numbers, so a v1 and a v2 request of the same
 * order have one fingerprint). JSON keeps the fields apart whatever they
 * hold.
 */
export function orderFingerprint(payload: OrderPayload): string {
  const fields = [payload.serviceId, payload.target, ...ORDER_INPUT_FIELDS.map((field) => payload[field] ?? null)];
  return sha256(JSON.stringify(fields));
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
