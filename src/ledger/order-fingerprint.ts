/**
 * The Idempotency-Key fingerprint: what binds a key to its order's (or
 * subscription's) payload.
 * DESIGN.md: the same key and payload replay the first answer, a different
 * payload is 422 IDEMPOTENCY. "The same payload" means what the client
 * sent, not how the catalogue reads it today: the operator may change a
 * service's type or drip-feed flag between an order and its retry, and the
 * retry must still replay (see decide.ts, decideOrder).
 */
import { createHash } from 'node:crypto';
import { ORDER_INPUT_FIELDS, type OrderPayload } from './order-types.js';
import type { SubscriptionTerms } from './subscription-record.js';

/** The fields the fingerprint covers by position, and those it names when present. */
const POSITIONAL_COUNT = 6;
const POSITIONAL = ORDER_INPUT_FIELDS.slice(0, POSITIONAL_COUNT);
const NAMED = ORDER_INPUT_FIELDS.slice(POSITIONAL_COUNT);

/**
 * The payload as sent: service, target and the first six order-input
 * fields in a fixed order, an absent field as null (API v2 sends an empty
 * field as absent, and its integers as numbers, so a v1 and a v2 request of
 * the same order have one fingerprint), then every later field that is
 * present, by name. A payload without the later fields keeps the
 * fingerprint it has always had, so a key stored by an earlier release still
 * replays its order. JSON keeps the fields apart whatever they hold.
 */
export function orderFingerprint(payload: OrderPayload): string {
  const fields: unknown[] = [payload.serviceId, payload.target, ...POSITIONAL.map((field) => payload[field] ?? null)];
  for (const field of NAMED) if (payload[field] !== undefined) fields.push([field, payload[field]]);
  return sha256(JSON.stringify(fields));
}

/**
 * A subscription's terms as read (an absent field and its default are one
 * term), led by a word no order's fingerprint starts with: a key used for
 * an order and then for a subscription, or the other way round, is a
 * different payload (422 IDEMPOTENCY).
 */
export function subscriptionFingerprint(terms: SubscriptionTerms): string {
  const { service, username, min, max, posts, oldPosts, delayMinutes, expiryMs } = terms;
  return sha256(JSON.stringify(['subscription', service, username, min, max, posts, oldPosts, delayMinutes, expiryMs]));
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
