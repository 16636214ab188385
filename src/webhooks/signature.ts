/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the
 * secret is `whsec_` + base64 of random bytes; a message is signed as
 * HMAC-SHA256 over `${id}.${timestamp}.${body}` with those bytes, sent as
 * `v1,<base64>` in `webhook-signature` (several, space-separated, while a
 * rotated secret is still honoured). Receivers check it with the
 * `standardwebhooks` package or any of the specification's libraries.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { assert } from '../platform/index.js';

export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: 32 random bytes (the specification allows 24 to 64). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretBytes(secret: string): Buffer {
  assert(secret.startsWith(SECRET_PREFIX), 'a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** One `v1,<base64>` signature of a message. */
export function signMessage(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The `webhook-signature` header: the current secret's signature, then the previous one's while it is honoured. */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((s) => signMessage(s, id, timestampSeconds, body)).join(' ');
}
