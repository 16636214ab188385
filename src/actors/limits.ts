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
 * The most API keys whose verified secret is kept in memory, so that their
 * requests are checked without hashing the secret (verified-secrets.ts).
 * An entry is about 150 bytes (the 47-character secret, the entry, its
 * Map slot; the key string is the profile's own), so the bound holds the
 * cache near 1.5 MB; ten thousand keys are more than a panel's resellers
 * send orders with in one idle spell (ACCOUNT_IDLE_EVICT_MS), and a key
 * beyond them is checked by its hash, as without the cache.
 */
export const VERIFIED_SECRETS_MAX = 10_000;

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
 * How often the lease sweep looks for claims whose lease has ended: a
 * second, small beside the shortest lease (LEASE_SECONDS_MIN, ten
 * seconds), so an order goes back to the claim queue within a second of
 * its lease's end.
 */
export const LEASE_SWEEP_EVERY_MS = 1_000;

/**
 * The most ended leases one sweep step (one tick, or the start of one
 * claim) puts back in the queue: each is a command to a wallet actor and a
 * log event in the next group commit, so a step costs the order path about
 * what a claim of as many orders does (CLAIM_LIMIT_MAX, 500). A backlog
 * larger than this (after a long stop) drains over the next ticks.
 */
export const LEASE_SWEEP_STEP_MAX = 500;

/**
 * The most expiries a sweep step sends in one turn of the event loop
 * before letting other work run: 50 commands take a few milliseconds, so
 * the orders arriving meanwhile wait no longer than that, while a step
 * still joins a handful of group commits.
 */
export const LEASE_SWEEP_TURN_MAX = 50;

/**
 * Completed orders per service whose times make its `average_time`: the
 * recent ones, as panels count (ten), enough for a median that one stuck
 * order does not move, and a small row rewritten with each completion.
 */
export const SERVICE_TIMES_KEPT = 10;

/**
 * How often the subscription sweep looks for subscriptions whose expiry
 * has passed: a minute. An expiry is a day's end, and any command about a
 * subscription (a post, a cancel) logs its expiry itself when it finds it
 * passed, so the sweep only has to make the status true for readers soon
 * after the day ends.
 */
export const SUBSCRIPTION_SWEEP_EVERY_MS = MS_PER_MINUTE;

/**
 * The most subscriptions one sweep step expires: each is a command to a
 * wallet actor and a log event, so a step costs what a claim of as many
 * orders does, as for the lease sweep (LEASE_SWEEP_STEP_MAX); expiries are
 * days' ends, so many fall due at once, and a larger backlog drains over
 * the next ticks.
 */
export const SUBSCRIPTION_SWEEP_STEP_MAX = 500;
