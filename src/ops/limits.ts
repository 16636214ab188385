/**
 * Bounds of the operator's side, each with its reason: the operator jobs,
 * and the pages of the admin API's listings, which the admin API enforces
 * and the CLI asks for (both import them from here). It imports nothing, so
 * the CLI loads it alone, without LMDB.
 */

/**
 * The largest page an admin listing answers: rendering 500 items takes a
 * few milliseconds of the event loop the orders share, so one operator
 * request delays orders no more than that. The CLI's `--all` asks for
 * pages of this size, to make as few round trips as it may.
 */
export const ADMIN_PAGE_MAX = 500;

/** An admin listing's page when no `limit` is given: a screenful or two. */
export const ADMIN_PAGE_DEFAULT = 100;

/** The most attempts one read of a webhook endpoint's delivery log answers (they are short rows). */
export const DELIVERY_LOG_PAGE_MAX = 1_000;

/** The attempts a read of a delivery log answers when no `limit` is given. */
export const DELIVERY_LOG_PAGE_DEFAULT = 50;

/**
 * A verify reports how far its replay is every this many events: a report
 * is a message to the server (or a line redrawn on the CLI's terminal),
 * about every few milliseconds of replay, far too seldom to slow it.
 */
export const VERIFY_PROGRESS_EVERY_EVENTS = 10_000;

/** Nice value of an operator job (snapshot, verify): below the server's default priority, so the orders' event loop is not slowed by it. */
export const JOB_NICE = 10;

/** The tail of a job's stderr kept for an error message: enough for a stack trace, bounded however much the child writes. */
export const JOB_STDERR_BYTES_MAX = 4096;
