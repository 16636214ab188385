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

/**
 * Nice value of an operator job (snapshot, verify): the lowest, so that on
 * a saturated server the orders' event loop and commit thread take the CPU
 * and the job what is left. Beside a saturating load on two cores a
 * snapshot's verification at nice 10 cost 20–32% of the orders a second;
 * at 19 the orders a second beside it were 1.07× those without it, pooled
 * over three rounds (bench/RESULTS.md, "A snapshot beside a saturating
 * load").
 */
export const JOB_NICE = 19;

/** The tail of a job's stderr kept for an error message: enough for a stack trace, bounded however much the child writes. */
export const JOB_STDERR_BYTES_MAX = 4096;

/**
 * A snapshot copies the data file in chunks of this size: one buffer of
 * the job's memory, and small enough that each read and write is short.
 */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

/**
 * A snapshot syncs its copy after every this many bytes: the most of it ever
 * waiting to be written back, so a commit's fdatasync beside it waits for a
 * few milliseconds of writeback at most, never for the whole copy.
 */
export const SNAPSHOT_SYNC_EVERY_BYTES = 4 * SNAPSHOT_CHUNK_BYTES;

/**
 * Read transactions a snapshot starts before it gives up finding its own
 * meta page: each attempt fails only if two commits land between starting
 * the transaction and reading two pages, so a handful never all fail.
 */
export const SNAPSHOT_PIN_ATTEMPTS_MAX = 100;

/**
 * The rate a snapshot copies at when the operator sets none
 * (SNAPSHOT_MB_PER_SECOND), MiB a second: a tenth of what the NVMe disks
 * measured here write through the page cache (about 1 GB/s), so the commits'
 * syncs beside it keep most of the disk; a 3 GB store copies in 30 s.
 */
export const SNAPSHOT_MB_PER_SECOND_DEFAULT = 100;

/** The most scheduled snapshots SNAPSHOT_KEEP may keep: a year of daily ones, and a bound on the directory the pruning lists. */
export const SNAPSHOT_KEEP_MAX = 366;

/** The highest SNAPSHOT_MB_PER_SECOND: above any disk's write rate, which is as good as no pacing. */
export const SNAPSHOT_MB_PER_SECOND_MAX = 100_000;

/** When a scheduled snapshot finds a verify or snapshot running, it tries again this much later (one job runs at a time). */
export const SNAPSHOT_BUSY_RETRY_MS = 60 * 1000;

/**
 * The share of the disk's time a snapshot's copy may take, percent: after
 * each synced step it rests three times as long as the step's sync took,
 * so on a disk slower or busier than SNAPSHOT_MB_PER_SECOND assumes, the
 * commits' syncs still find it idle three quarters of the time.
 */
export const SNAPSHOT_DISK_PERCENT = 25;
