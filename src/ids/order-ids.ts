/**
 * Order ids that are opaque to clients but ordered in storage.
 *
 * Orders are stored under a 16-byte key (as 32 hex characters): creation millisecond (6 bytes,
 * big-endian), a per-process sequence number (4 bytes) and 6 random bytes.
 * Orders of one group commit therefore land on the same few B-tree pages,
 * instead of one random page each, which is what a commit's sync time
 * mostly pays for. The public id is that key encrypted with AES-128 (a
 * single block, so a keyed permutation) under a secret kept in the data
 * directory: it is unguessable, reveals neither volume nor time, and
 * decrypts back to the storage key without any lookup table.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomFillSync, type Cipher, type Decipher } from 'node:crypto';
import { assert } from '../platform/index.js';
import { decodeCanonicalBase64url } from './canonical-id.js';
import { RANDOM_POOL_IDS } from './limits.js';

export const ORDER_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const POOL_BYTES = 6 * RANDOM_POOL_IDS;

/** A fresh order id: the public id, the key the order is stored under (hex) and the process-wide sequence number. */
export interface NewOrderId {
  id: string;
  key: string;
  seq: number;
}

export class OrderIds {
  private readonly cipher: Cipher;
  private readonly decipher: Decipher;
  private seq = 0;
  private pool = Buffer.alloc(0);
  private poolOffset = 0;

  constructor(secret: Buffer) {
    assert(secret.length === 16, 'the order id secret must be 16 bytes', secret.length);
    // ECB over exactly one block per call: each id is one independent AES
    // permutation of its key; with padding off, update() returns the block.
    this.cipher = createCipheriv('aes-128-ecb', secret, null).setAutoPadding(false);
    this.decipher = createDecipheriv('aes-128-ecb', secret, null).setAutoPadding(false);
  }

  static newSecret(): Buffer {
    return randomBytes(16);
  }

  /**
   * A new order's public id, its storage key and its sequence number (orders
   * of one millisecond keep their order by it). The key comes with the id,
   * so the order is stored without decrypting the id just made.
   */
  next(wallMs: number): NewOrderId {
    const seq = this.seq++;
    const key = Buffer.allocUnsafe(16);
    key.writeUIntBE(wallMs, 0, 6);
    key.writeUInt32BE(seq >>> 0, 6);
    if (this.poolOffset + 6 > this.pool.length) {
      this.pool = Buffer.allocUnsafe(POOL_BYTES);
      randomFillSync(this.pool);
      this.poolOffset = 0;
    }
    this.pool.copy(key, 10, this.poolOffset, this.poolOffset + 6);
    this.poolOffset += 6;
    return { id: this.cipher.update(key).toString('base64url'), key: key.toString('hex'), seq };
  }

  /**
   * The storage key of a public id (hex, which sorts like the bytes), or
   * null when the text is not an order id as this server spells it (a
   * spelling that differs only in the unused bits is not one).
   */
  storageKey(id: string): string | null {
    const block = decodeCanonicalBase64url(id, 16);
    if (block === null) return null;
    return this.decipher.update(block).toString('hex');
  }
}
