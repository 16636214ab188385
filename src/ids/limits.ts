/** Bounds of id generation, each with its reason. */

/**
 * Random bytes for ids are drawn for this many ids at a time (request ids,
 * the random part of order keys): one system call per 4,096 ids instead of
 * one per id, and a pool of a few KiB.
 */
export const RANDOM_POOL_IDS = 4096;
