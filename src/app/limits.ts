/** Bounds of the composition root, each with its reason. */
import { MS_PER_SECOND } from '../platform/index.js';

/**
 * The longest a clean shutdown may take (finishing requests in flight,
 * syncing, closing LMDB) before the process exits with status 1: a stuck
 * close must not keep a supervisor's restart waiting, and everything
 * acknowledged is durable already, so nothing is lost by exiting.
 */
export const SHUTDOWN_DEADLINE_MS = 10 * MS_PER_SECOND;

/**
 * How stale a replicated follower's admin reads may be: its view of the
 * store (accounts, services, webhook endpoints) is rebuilt at most this
 * often while the log moves, so a burst of reads does not rebuild it each
 * time.
 */
export const FOLLOWER_VIEW_REFRESH_MS = 250;

/**
 * The longest a fail-stop waits for LMDB's write thread to finish the
 * transactions it was already handed before the process exits (see
 * fatal-exit.ts). Those are at most COMMITS_IN_FLIGHT_MAX commits, each a
 * few milliseconds; a dead disk that never answers must not keep the
 * process, and a supervisor's restart, waiting longer than this.
 */
export const FATAL_SETTLE_MS = 2 * MS_PER_SECOND;
