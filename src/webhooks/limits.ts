/**
 * Bounds of webhook delivery, each with its reason. The operator's settings
 * (concurrency, timeouts, retry hours, endpoints per account, log size,
 * held messages per endpoint, the busy floor) are in src/app/config.ts; the
 * longest endpoint URL is the product's one URL bound, URL_CHARS_MAX in
 * src/ledger/limits.ts.
 */
import { BYTES_PER_KIB, MS_PER_HOUR, MS_PER_SECOND } from '../platform/index.js';

/** Attempts in flight to one endpoint at most: a slow receiver cannot take every delivery slot from the others. */
export const PER_ENDPOINT_IN_FLIGHT_MAX = 8;

/**
 * The share of the delivery slots (WEBHOOKS_CONCURRENCY) no one account may
 * take, so that another account's notifications always find slots free
 * while one account's receivers hang (account-shares.ts). A quarter: the
 * other accounts' receivers, when they answer, free their slots in
 * milliseconds, so a few slots carry them; and an account keeps room for
 * one hanging endpoint (PER_ENDPOINT_IN_FLIGHT_MAX) beside its healthy ones.
 */
export const OTHER_ACCOUNTS_SLOTS_PERCENT = 25;

/**
 * Log messages the dispatcher reads ahead into memory at most (about 300
 * bytes each): its whole memory for messages not yet delivered, however far
 * behind the receivers are; the rest stays in the log or the held rows.
 */
export const QUEUE_WINDOW_MAX = 1_024;

/** Held messages read from one endpoint's rows per pass: a pass stays short on the event loop. */
export const OUTBOX_PAGE_ROWS = 256;

/** Log events read per look at the log: one short read transaction. */
export const LOG_PAGE_EVENTS = 256;

/** Most log events one pass reads (most may be other events); the rest waits for the next pass, so a pass stays short. */
export const LOG_EVENTS_PER_PASS = 8_192;

/**
 * The delivery cursor is written on its own (not only with delivery
 * results) once it lags this many log numbers behind, so a restart of a
 * server whose log holds no messages does not reread a long stretch.
 */
export const CURSOR_LAG_MAX = 4_096;

/** Rows removed per commit when a deleted endpoint's rows are dropped: each commit stays small beside the orders' commits. */
export const PURGE_PAGE_ROWS = 1_000;

/** How often the dispatcher looks for new messages when nothing woke it: a message waits at most this long. */
export const POLL_EVERY_MS = 250;

/**
 * The load sample behind the delivery allowance: how often the event
 * loop's utilisation and the WAL's counters are read and the attempts that
 * may start in the next sample are decided. Short enough to give way within
 * a fraction of a second when orders arrive, long enough to average out a
 * single slow tick.
 */
export const LOAD_SAMPLE_MS = 100;

/** Event-loop utilisation (the mean of the last two samples) above which deliveries give way to the order path. */
export const TARGET_UTILISATION = 0.75;

/**
 * Entries waiting for their commit at or above which the order path counts
 * as full, whatever its event loop says: a server held back by its sync
 * (the disk) can have its event loop half idle. Group commit absorbs a queue
 * of a few dozen by design (a commit of 60 entries costs little more than
 * one of 10), so the mark is well above what 64 busy connections make.
 */
export const BUSY_PENDING_ENTRIES = 128;

/** Attempts per load sample that count as "no limit": the concurrency limit binds long before. */
export const ALLOWANCE_MAX = 10_000;

/** ALLOWANCE_MAX as attempts a second: the highest floor an operator may set (WEBHOOKS_BUSY_MIN_PER_SECOND), and the metric's "no limit". */
export const ALLOWED_PER_SECOND_MAX = ALLOWANCE_MAX * (MS_PER_SECOND / LOAD_SAMPLE_MS);

/**
 * Retries: exponential from RETRY_BASE_MS, capped at RETRY_CAP_MS, with
 * jitter. The first retry comes within 0.5–1 s, so within the 5 s promised;
 * at the cap an endpoint is tried about once an hour until its message has
 * failed for WEBHOOKS_RETRY_HOURS, when it is marked failing.
 */
export const RETRY_BASE_MS = MS_PER_SECOND;
export const RETRY_CAP_MS = MS_PER_HOUR;

/** How long a rotated-out secret still signs (beside the new one), so receivers can switch without losing messages. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * MS_PER_HOUR;

/** Response bytes read (and discarded) before the connection is dropped: only the status matters, and a receiver cannot make us read without end. */
export const RESPONSE_BYTES_MAX = 64 * BYTES_PER_KIB;

/** Message ids drawn from one fill of random bytes, so an id costs no system call. */
export const MESSAGE_ID_POOL_IDS = 256;
