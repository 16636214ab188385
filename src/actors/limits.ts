/** Bounds of the wallet actors and their registry, each with its reason. */
import { MS_PER_MINUTE } from '../platform/index.js';

/**
 * The most accounts one registry listing returns: an admin page (at most
 * 500) and one more to see whether another page follows, with room to
 * spare. It bounds the records one listing reads on the event loop.
 */
export const ACCOUNT_LIST_MAX = 1_000;

/**
 * Issued API keys are 36 characters; a longer one cannot be known, so it is
 * refused without a look-up (and never reaches LMDB's key limit).
 */
export const API_KEY_CHARS_MAX = 128;

/**
 * An account unused this long is dropped from memory (its wallet is on
 * disk). Longer than any await a handler can make while holding an account
 * (the force-join timeout is at most 60 s), so an account in use is never
 * dropped and loaded twice; short enough that memory follows the accounts
 * active now, not every account ever seen.
 */
export const ACCOUNT_IDLE_EVICT_MS = 5 * MS_PER_MINUTE;

/** How often idle accounts are looked for: a small fraction of ACCOUNT_IDLE_EVICT_MS, so memory is returned soon after. */
export const ACCOUNT_EVICT_EVERY_MS = MS_PER_MINUTE;

/**
 * Completed orders per service whose times make its `average_time`: the
 * recent ones, as panels count (ten), enough for a median that one stuck
 * order does not move, and a small row rewritten with each completion.
 */
export const SERVICE_TIMES_KEPT = 10;
