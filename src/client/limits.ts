/**
 * The typed client's bounds on retrying. A retry is only ever of a request
 * the server did not carry out (429 RATE and 503 UNAVAILABLE are answered
 * before anything happens) or of one it answers the same way again (reads,
 * deletes, and an order under its Idempotency-Key), so the bounds are about
 * time, not safety: how long a caller may be kept waiting.
 */

/** Attempts in all, the first included: three retries ride out a restart or a short overload without hiding a longer outage. */
export const RETRY_ATTEMPTS = 4;

/** The first wait after a network error; it doubles with each retry. */
export const RETRY_BACKOFF_MS = 250;

/**
 * The longest single wait. A Retry-After longer than this (a key throttled
 * for minutes, an address blocked after failed logins) is returned to the
 * caller instead of being slept through.
 */
export const RETRY_DELAY_MS_MAX = 60_000;
