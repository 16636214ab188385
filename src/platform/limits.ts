/** Bounds of the platform layer, each with its reason. */

/**
 * libuv's own bounds on UV_THREADPOOL_SIZE: it runs 4 threads when the
 * variable is unset and takes at most 1,024. The thread-priority step asks
 * that many threads for their ids; a value outside the range is not what
 * libuv runs, so the step is skipped rather than guessed.
 */
export const THREADPOOL_THREADS_DEFAULT = 4;
export const THREADPOOL_THREADS_MAX = 1024;
