/** Bounds of the platform layer, each with its reason. */
import { BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_SECOND } from './units.js';

/**
 * libuv's own bounds on UV_THREADPOOL_SIZE: it runs 4 threads when the
 * variable is unset and takes at most 1,024. The thread-priority step asks
 * that many threads for their ids; a value outside the range is not what
 * libuv runs, so the step is skipped rather than guessed.
 */
export const THREADPOOL_THREADS_DEFAULT = 4;
export const THREADPOOL_THREADS_MAX = 1024;

/**
 * The server's log output (standard output) is buffered so that the access
 * log costs the order path no write(2) per request: lines wait in memory
 * until LOG_FLUSH_BYTES of them are there or LOG_FLUSH_DELAY_MS after the
 * first of them, whichever comes first. 16 KiB is about 60 access lines:
 * one write then costs each line about 0.3 µs instead of about 2 µs, and
 * it is well under a pipe's 64 KiB, so a pipe reader that keeps up never
 * makes the write wait. 50 ms keeps `tail -f` and log shippers close to
 * live, and bounds what a SIGKILL can take: the lines of the last 50 ms, at
 * most LOG_FLUSH_BYTES (docs/RELIABILITY.md).
 */
export const LOG_FLUSH_BYTES = 16 * BYTES_PER_KIB;
export const LOG_FLUSH_DELAY_MS = 50;

/**
 * What the log buffer may hold while its output refuses bytes without
 * blocking (EAGAIN from a non-blocking pipe or socket whose reader stalls):
 * beyond it, new lines are dropped and counted
 * (`coa_log_lines_dropped_total` on /metrics) rather than held without
 * end. 1 MiB is about 4,000 access lines, seconds of a stall at full load.
 */
export const LOG_BUFFER_BYTES_MAX = BYTES_PER_MIB;

/**
 * How long the last flush, as the process exits, keeps retrying an output
 * that refuses bytes without blocking, so that a fail-stop's last lines
 * reach a reader that is merely slow, and an exit is never held for long by
 * one that is gone.
 */
export const LOG_EXIT_FLUSH_MS = MS_PER_SECOND;
/** The pause between those retries. */
export const LOG_EXIT_RETRY_MS = 5;
