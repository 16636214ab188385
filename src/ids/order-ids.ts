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
import { ORDER_ID_BATCH_MAX, RANDOM_POOL_IDS } from './limits.js';

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
  /** Storage keys prepared for the millisecond batchMs, the first with sequence number batchSeq, and their encryptions. */
  private batchMs = -1;
  private batchSeq = 0;
  private batchKeys = Buffer.alloc(0);
  private batchIds = Buffer.alloc(0);

  /** `batchMax` is ORDER_ID_BATCH_MAX unless a benchmark sets it (1: one call to the cipher per id). */
  constructor(
    secret: Buffer,
    private readonly batchMax: number = ORDER_ID_BATCH_MAX,
  ) {
    assert(secret.length === 16, 'the order id secret must be 16 bytes', secret.length);
    assert(Number.isSafeInteger(batchMax) && batchMax >= 1 && batchMax <= RANDOM_POOL_IDS, 'an order id batch holds 1 to RANDOM_POOL_IDS keys', batchMax);
    // ECB over whole blocks: each id is one independent AES permutation of
    // its key; with padding off, update() returns exactly the blocks.
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
    if (wallMs !== this.batchMs || (this.seq - this.batchSeq) * 16 >= this.batchIds.length) this.prepare(wallMs);
    const at = (this.seq - this.batchSeq) * 16;
    const seq = this.seq++;
    this.poolOffset += 6;
    return { id: this.batchIds.toString('base64url', at, at + 16), key: this.batchKeys.toString('hex', at, at + 16), seq };
  }

  /**
   * Prepares the keys of the next ids at `wallMs` and encrypts them in one
   * call to the cipher, whose fixed cost is most of an id's (the blocks
   * themselves cost little). Each key is the one an id made alone would
   * have: the millisecond, the next sequence numbers in turn and the next
   * random bytes of the pool, which are taken only as ids are issued. Keys
   * left unused when the millisecond changes are dropped unseen, and their
   * sequence numbers and random bytes go to the next batch, so the ids
   * issued are exactly those of one call per id. A batch is twice the ids
   * the previous one issued (at most batchMax), so it follows the rate of
   * orders per millisecond.
   */
  private prepare(wallMs: number): void {
    const blocksWanted = Math.min(this.batchMax, Math.max(1, 2 * (this.seq - this.batchSeq)));
    if (this.poolOffset + 6 > this.pool.length) {
      this.pool = Buffer.allocUnsafe(POOL_BYTES);
      randomFillSync(this.pool);
      this.poolOffset = 0;
    }
    const blocks = Math.min(blocksWanted, (this.pool.length - this.poolOffset) / 6);
    const keys = Buffer.allocUnsafe(16 * blocks);
    for (let b = 0; b < blocks; b++) {
      const at = 16 * b;
      keys.writeUIntBE(wallMs, at, 6);
      keys.writeUInt32BE((this.seq + b) >>> 0, at + 6);
      const random = this.poolOffset + 6 * b;
      for (let i = 0; i < 6; i++) keys[at + 10 + i] = this.pool[random + i]!;
    }
    this.batchIds = this.cipher.update(keys);
    this.batchKeys = keys;
    this.batchMs = wallMs;
    this.batchSeq = this.seq;
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
