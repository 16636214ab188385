/**
 * Identifiers: API keys, secrets and request ids. (Order ids: order-ids.ts.)
 */
import { hash, randomBytes } from 'node:crypto';
import { RANDOM_POOL_IDS } from './limits.js';

export function newApiKey(): string {
  return 'key_' + randomBytes(16).toString('hex');
}

/** 256 random bits; shown once, stored only as its hash. */
export function newApiSecret(): string {
  return 'sec_' + randomBytes(32).toString('base64url');
}

/**
 * An API v2 key: 32 lowercase hex characters (128 random bits), the shape
 * panels' keys have and some reseller tools check. It is the only
 * credential of API v2: shown once and stored only as its hash.
 */
export function newV2Key(): string {
  return randomBytes(16).toString('hex');
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

/** Random bytes drawn once per RANDOM_POOL_IDS request ids, so an id costs no system call. */
const REQUEST_ID_BYTES = 12;
let requestPool = Buffer.alloc(0);
let requestPoolOffset = 0;

/**
 * 96 random bits: unique (the chance of a repeat is negligible) and telling
 * nothing, neither how many requests came before nor which process answered.
 */
export function newRequestId(): string {
  if (requestPoolOffset + REQUEST_ID_BYTES > requestPool.length) {
    requestPool = randomBytes(REQUEST_ID_BYTES * RANDOM_POOL_IDS);
    requestPoolOffset = 0;
  }
  const id = requestPool.toString('base64url', requestPoolOffset, requestPoolOffset + REQUEST_ID_BYTES);
  requestPoolOffset += REQUEST_ID_BYTES;
  return `req_${id}`;
}
