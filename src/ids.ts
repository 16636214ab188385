/**
 * Identifiers: API keys, secrets and request ids. (Order ids: order-ids.ts.)
 */
import { hash, randomBytes } from 'node:crypto';

export function newApiKey(): string {
  return 'key_' + randomBytes(16).toString('hex');
}

/** 256 random bits; shown once, stored only as its hash. */
export function newApiSecret(): string {
  return 'sec_' + randomBytes(32).toString('base64url');
}

/**
 * Secrets carry 256 bits of entropy, so a single SHA-256 is enough to make
 * the stored hash useless to an attacker (no dictionary to try); a slow
 * password hash would only cost every request time.
 */
export function hashSecret(secret: string): Buffer {
  // One-shot hash: no Hash object per request.
  return hash('sha256', secret, 'buffer');
}

const REQUEST_PREFIX = randomBytes(4).toString('hex');
let requestCounter = 0;

/** Unique across restarts (random per-process prefix) and cheap. */
export function newRequestId(): string {
  return `req_${REQUEST_PREFIX}${(requestCounter++).toString(36)}`;
}

