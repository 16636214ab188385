/**
 * Bounds of the operator CLI, each with its reason. The page sizes it asks
 * the admin API for are the server's own, from src/ops/limits.ts.
 */
import { SECONDS_PER_DAY, SECONDS_PER_HOUR } from '../platform/units.js';

/** How long a command waits for the server by default: short enough that a hung server does not hang a script forever (--timeout changes it). */
export const DEFAULT_TIMEOUT_S = 30;

/**
 * How long snapshot and verify wait by default: they read the whole store,
 * about 6 s per million orders for verify here (bench/RESULTS.md), so the
 * usual DEFAULT_TIMEOUT_S would cut them off on a large store.
 */
export const WHOLE_STORE_TIMEOUT_S = SECONDS_PER_HOUR;

/** The longest --timeout accepted: a day; a longer one is almost surely a unit mistake (milliseconds given as seconds). */
export const TIMEOUT_S_MAX = SECONDS_PER_DAY;

/**
 * How often `snapshot` and `verify` ask the server how far they are while
 * they wait on a terminal: twice a second is a smooth enough line for a
 * person and one small stats read each time for the server.
 */
export const PROGRESS_POLL_MS = 500;

/** The progress bar's width in characters: fits an 80-column terminal beside the time and the counts. */
export const PROGRESS_BAR_CHARS = 24;
