/**
 * Bounds of the force-join check, each with its reason. The defaults of the
 * FORCEJOIN_* settings are here too (config.ts reads them), since each is a
 * bound on a wait or a cache.
 */
import { BYTES_PER_KIB, MS_PER_MINUTE, MS_PER_SECOND, SECONDS_PER_DAY, SECONDS_PER_HOUR } from '../platform/index.js';

/**
 * Default wait for one getChatMember answer before failing closed: Telegram
 * answers in well under a second, and the order waits for the check, so a
 * slow Telegram must not hold an order for long.
 */
export const TIMEOUT_MS_DEFAULT = 2 * MS_PER_SECOND;

/**
 * The longest timeout an operator may set (FORCEJOIN_TIMEOUT_MS). An order
 * holds its account while it waits, and idle accounts are evicted only well
 * after this (actors' ACCOUNT_IDLE_EVICT_MS), so it must stay short.
 */
export const TIMEOUT_MS_MAX = MS_PER_MINUTE;

/** How long a 'joined' answer is trusted by default: members rarely leave, and a stale yes costs one order. */
export const JOINED_CACHE_MS_DEFAULT = 10 * MS_PER_MINUTE;

/** How long a 'not-joined' answer is trusted by default: short, so a customer who has just joined can order soon after. */
export const NOT_JOINED_CACHE_MS_DEFAULT = 30 * MS_PER_SECOND;

/** The longest cache time an operator may set: a week; anything longer is almost certainly a unit mistake (milliseconds given as seconds). */
export const CACHE_S_MAX = 7 * SECONDS_PER_DAY;

/** Most cached answers (one per account) by default; the oldest is dropped first, so memory stays bounded however many accounts order. */
export const CACHE_MAX_DEFAULT = 100_000;

/** Most Telegram requests in flight at once by default; beyond it a check is answered 'unavailable' at once instead of queueing while Telegram is slow. */
export const CONCURRENT_MAX_DEFAULT = 64;

/** Refusals at the concurrency limit are reported (logged) at most this often, so an overload does not flood the log. */
export const OVERLOAD_REPORT_EVERY_MS = MS_PER_SECOND;

/** The longest a 429's retry_after holds requests back; a longer one is asked again after this, so a wrong value cannot lock orders out for days. */
export const RETRY_AFTER_MAX_S = SECONDS_PER_HOUR;

/** The hold when a 429 names no retry_after. */
export const RETRY_AFTER_DEFAULT_S = 1;

/** Telegram's answers are a few hundred bytes; a larger body is not Telegram, and reading stops there. */
export const RESPONSE_BYTES_MAX = 64 * BYTES_PER_KIB;

/** Telegram's description is echoed into messages; a runaway one is cut to this. */
export const DESCRIPTION_CHARS_MAX = 200;
