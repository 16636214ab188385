/** Bounds of id generation, each with its reason. */

/**
 * Random bytes for ids are drawn for this many ids at a time (request ids,
 * the random part of order keys): one system call per 4,096 ids instead of
 * one per id, and a pool of a few KiB.
 */
export const RANDOM_POOL_IDS = 4096;

/**
 * The most order keys encrypted in one call to the cipher (order-ids.ts).
 * A call costs about 0.8 µs whatever it holds up to a few dozen blocks, and
 * each further 16-byte block about 8 ns; 32 blocks cover the orders of one
 * millisecond at 30,000 orders a second, and the unused blocks of a
 * millisecond that ends cost a quarter of a call at most.
 */
export const ORDER_ID_BATCH_MAX = 32;
