/**
 * Every bound and period of replicated mode, each with its reason.
 */

/**
 * How long a leader's lease lasts from the moment its renewal was sent. A
 * leader that dies is replaced once its lease has run out and a follower
 * has noticed (CONTEND_EVERY_MS), then applied the log's tail and opened
 * its listeners: a few seconds, within the 10 s the takeover promise gives.
 */
export const LEASE_MS = 5_000;

/** How often the leader renews its lease: several renewals fit in one lease, so one slow round trip does not cost it. */
export const RENEW_EVERY_MS = 1_000;

/**
 * The leader serves only while its lease, measured on its own clock from
 * the moment it sent the renewal, has this much left: room for the two
 * clocks (the leader's and PostgreSQL's) running at slightly different
 * rates. Past it the leader answers 503 until a renewal returns.
 */
export const LEASE_MARGIN_MS = 1_000;

/** How often a follower looks whether the leader's lease has run out. */
export const CONTEND_EVERY_MS = 500;

/** How long a follower waits before asking the log again when the last read found nothing new. */
export const FOLLOW_IDLE_MS = 50;

/** Most log records a follower reads and applies in one step: bounds the memory of one read. */
export const APPLY_PAGE_RECORDS = 256;

/** How often each node writes the position it has applied and flushed (and that it lives) to PostgreSQL. */
export const REPORT_EVERY_MS = 1_000;

/** How often the leader trims the log table. */
export const TRIM_EVERY_MS = 5_000;

/** Most records one trim deletes, so a trim is a short statement however far behind it is. */
export const TRIM_RECORDS_MAX = 10_000;

/**
 * Records kept in the log table behind the slowest live node, by default
 * (REPLICATION_LOG_KEEP): a node that joins from an empty data directory
 * needs the log from its first record, so a young group keeps it whole;
 * beyond this a new node starts from a snapshot.
 */
export const LOG_KEEP_RECORDS = 100_000;

/**
 * A node not heard from for this long no longer holds the log back: the
 * table would otherwise grow without end behind a machine that is gone. If
 * it returns after the log was trimmed past it, it refuses to start and
 * says to restore it from a snapshot.
 */
export const NODE_RETENTION_MS = 24 * 3_600_000;

/** Wait between two tries of an append, a renewal or a report that failed on the connection (PostgreSQL restarting or failing over). */
export const RETRY_EVERY_MS = 200;

/** Connections one node keeps to PostgreSQL: one append at a time, the lease, the follower's reads and the reports. */
export const POOL_CONNECTIONS_MAX = 4;

/** Seconds to wait for a connection to PostgreSQL before trying the next host. */
export const CONNECT_TIMEOUT_SECONDS = 5;

/** How often the leader asks PostgreSQL whether a synchronous standby is streaming (for /readyz and /metrics). */
export const STANDBY_CHECK_EVERY_MS = 2_000;
