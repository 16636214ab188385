/**
 * Identifiers. Order ids, API keys and secrets are random (not sequential),
 * so they reveal no volume and cannot be guessed. Random bytes are drawn in
 * blocks to keep the per-order cost to a slice of a buffer.
 */
import { createHash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

const POOL_BYTES = 16 * 1024;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function random16(): Buffer {
  if (poolOffset + 16 > pool.length) {
    pool = Buffer.allocUnsafe(POOL_BYTES);
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  return bytes;
}

/** 128 random bits as 22 base64url characters. */
export function newOrderId(): string {
  return random16().toString('base64url');
}

export const ORDER_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

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
  return createHash('sha256').update(secret).digest();
}

/** Constant-time comparison of a presented secret against a stored hash. */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  return timingSafeEqual(hashSecret(secret), storedHash);
}

const REQUEST_PREFIX = randomBytes(4).toString('hex');
let requestCounter = 0;

/** Unique across restarts (random per-process prefix) and cheap. */
export function newRequestId(): string {
  return `req_${REQUEST_PREFIX}${(requestCounter++).toString(36)}`;
}

let orderSeq = 0;

/**
 * Tie-breaker for orders created in the same millisecond, so listings are
 * oldest first exactly. It restarts at 0 with the process; a restart takes
 * longer than a millisecond, so (createdAtMs, seq) stays increasing.
 */
export function nextOrderSeq(): number {
  return orderSeq++;
}
