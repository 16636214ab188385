/**
 * The Idempotency-Key fingerprint: what binds a key to its order's payload.
 * DESIGN.md: the same key and payload replay the first answer, a different
 * payload is 422 IDEMPOTENCY. "The same payload" means what the client
 * sent, not how the catalogue reads it today: the operator may change a
 * service's type or drip-feed flag between an order and its retry, and the
 * retry must still replay (see decide.ts, decideOrder).
 */
import { createHash } from 'node:crypto';
import { ORDER_INPUT_FIELDS, type OrderExtras, type OrderPayload } from './order-types.js';

/**
 * The payload as sent: service, target and every order-input field in a
 * fixed order, an absent field as null (API v2 sends an empty field as
 * absent, and its integers as numbers, so a v1 and a v2 request of the same
 * order have one fingerprint). JSON keeps the fields apart whatever they
 * hold, and its text starts with '[' where the legacy one starts with a
 * digit, so a fingerprint of one kind never equals one of the other.
 */
export function orderFingerprint(payload: OrderPayload): string {
  const fields = [payload.serviceId, payload.target, ...ORDER_INPUT_FIELDS.map((field) => payload[field] ?? null)];
  return sha256(JSON.stringify(fields));
}

/**
 * The fingerprint that records stored before orderFingerprint existed hold:
 * the inputs as the service's type read them then. It is still accepted,
 * for the inputs as the catalogue reads them now, so those keys keep
 * replaying while the catalogue is unchanged; it can go once the
 * Idempotency-Key retention has passed since the change. Its formula must
 * not change: a stored fingerprint cannot be recomputed.
 */
export function legacyOrderFingerprint(service: number, target: string, quantity: number, extras?: OrderExtras): string {
  // Extras joined the hashed text only when present, so a plain order's
  // fingerprint (possibly stored before extras existed) stayed the same.
  const more = extras === undefined || Object.keys(extras).length === 0 ? '' : `\n${JSON.stringify(extras)}`;
  return sha256(`${service}\n${quantity}\n${target}${more}`);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
