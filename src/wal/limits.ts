/**
 * Every bound of the storage layer, each with its reason. The three WALs
 * (LMDB group commit, log-first, in-memory simulation) share these, so a
 * simulation runs against the same queue bounds as the server.
 */
import { BYTES_PER_MIB, MS_PER_MINUTE, MS_PER_SECOND } from '../platform/index.js';

/**
 * Most entries in one batch: one LMDB write transaction and one sync. Under
 * load a batch holds what arrived during the previous sync (tens to a few
 * hundred entries), far below this; the bound keeps one transaction's time
 * under LMDB's write lock and its memory finite when a burst arrives during
 * a slow sync. Entries beyond it start the next batch.
 */
export const BATCH_ENTRIES_MAX = 4096;

/**
 * Most entries accepted and not yet durable, across every batch of a WAL.
 * At this mark the WAL reports itself overloaded and new requests are
 * answered 503 UNAVAILABLE with Retry-After instead of queueing without
 * end: it bounds the memory of the queue and the time a client waits for
 * its sync when the disk falls behind.
 */
export const PENDING_ENTRIES_MAX = 200_000;

/**
 * Most group commits handed to LMDB and not yet synced. Enough to keep
 * lmdb-js's write thread busy while the event loop seals the next ones:
 * the write thread starts each transaction with every commit queued so
 * far, so under load one transaction holds many of them. Beyond it the
 * open batch stays open and takes everything that arrives until a commit
 * is acknowledged, then goes as one commit.
 *
 * One in flight holds fewer entries per commit, not more (docs/DECISIONS.md,
 * "Many commits in flight, one settlement per batch"): at 64 connections
 * the clients split into two cohorts that take turns, a commit holding
 * about 33 entries against 45–50 with 64 in flight, and with fast syncs
 * the write thread waits for the event loop between commits.
 */
export const COMMITS_IN_FLIGHT_MAX = 64;

/**
 * Most entries in one commit-log record (WAL_SYNC_MODE=log). LMDB applies a
 * record and its applied position in one transaction, so a record must stay
 * small enough for one transaction of the applier.
 */
export const RECORD_ENTRIES_MAX = 1024;

/**
 * Largest payload of one commit-log record: larger than any batch the WAL
 * writes (RECORD_ENTRIES_MAX caps a record's entries), so a length beyond it
 * read back from the file is damage, not a record.
 */
export const RECORD_PAYLOAD_BYTES_MAX = 256 * BYTES_PER_MIB;

/**
 * Each of the two commit-log files (128 MiB in all): many thousands of
 * batches, far more than LMDB ever lags behind the log.
 */
export const COMMIT_LOG_FILE_BYTES = 64 * BYTES_PER_MIB;

/**
 * Zeros written per write when a commit-log file or the data file's reserve
 * is filled: the buffer of zeros held in memory, and one write of about
 * 0.2 ms here, short enough to sit between commits.
 */
export const ZERO_FILL_CHUNK_BYTES = BYTES_PER_MIB;

/**
 * The data file's reserve is looked at every this many idle moments of the
 * group commit, and topped up by at most this many chunks at a time, so
 * keeping it costs a few writes now and then, never a long stall.
 */
export const RESERVE_CHECK_EVERY_IDLE = 16;
export const RESERVE_TOP_UP_CHUNKS_MAX = 4;

/** LMDB's key limit at lmdb-js's default page size: a longer key fails its whole commit, so keys are checked before a batch is queued. */
export const LMDB_KEY_BYTES_MAX = 1978;

/** Longest string in a key that is surely within LMDB_KEY_BYTES_MAX (3 bytes per UTF-16 unit). */
export const KEY_CHARS_MAX = 600;

/**
 * Most expired Idempotency-Key records (and their index entries) removed in
 * one sweep step and commit. The step reads them on the event loop, so it
 * stays short beside orders; at about 50,000 records a second it still
 * keeps up with any keyed order rate the server takes.
 */
export const SWEEP_STEP_ENTRIES_MAX = 1_000;

/**
 * How often the server sweeps expired Idempotency-Key records: each sweep
 * removes what expired since the last one, in steps of
 * SWEEP_STEP_ENTRIES_MAX, so records live at most a minute past their
 * retention and a sweep's work stays small.
 */
export const SWEEP_EVERY_MS = MS_PER_MINUTE;

/**
 * Longest wait, once an LMDB commit has failed, for lmdb-js's report of
 * the system error behind it (EIO from a failed fdatasync, ENOSPC) before
 * the process stops anyway. lmdb-js gives it right after the failed writes,
 * a few microtasks later; the bound keeps a fail-stop from ever hanging on it.
 */
export const COMMIT_CAUSE_WAIT_MS = MS_PER_SECOND;
