/**
 * Bounds of the HTTP front end (customer and admin APIs), each with its
 * reason. Operator settings (body and header sizes, the target length, the
 * mailbox) are in src/app/config.ts; the sizes of admin pages, which the CLI
 * shares, are in src/ops/limits.ts; the domain's bounds (ids per request,
 * order lists, URL length) in src/ledger/limits.ts.
 */
import { URL_CHARS_MAX } from '../ledger/index.js';
import { ADMIN_PAGE_MAX } from '../ops/index.js';
import { MS_PER_MINUTE } from '../platform/index.js';

/**
 * The longest order target an operator may allow (TARGET_CHARS_MAX, which
 * is also its default): a target is a URL, and a URL longer than
 * URL_CHARS_MAX is refused everywhere.
 */
export const TARGET_CHARS_MAX = URL_CHARS_MAX;

/**
 * The Idempotency-Key header's longest value: the contract says 1 to 255
 * printable ASCII characters, enough for a UUID or a client's own order
 * reference, and it is stored in every key record.
 */
export const IDEMPOTENCY_KEY_CHARS_MAX = 255;

/** API v2 fields per request: no action takes more than a handful; this bounds the work a request can ask for. */
export const V2_FIELDS_MAX = 64;

/**
 * Failed authentications: a /48 (one site's block) is allowed this many
 * times one address's failures, so a site's several networks keep room for
 * their own typos while one attacker cannot rotate through 65,536 fresh /64
 * allowances.
 */
export const SITE_FACTOR = 8;

/**
 * Client addresses (and /48 sites) whose failed authentications are
 * remembered: bounds the tables' memory under a spray of addresses; when
 * full, one of the oldest buckets is forgotten, which at worst gives that
 * address a fresh allowance.
 */
export const AUTH_FAILURE_ADDRESSES_MAX = 100_000;

/** How many of the oldest failure buckets are compared when one must be forgotten: enough to find a cold one, few enough to stay cheap. */
export const AUTH_EVICTION_SAMPLE = 32;

/**
 * Rate-limit abuse is logged once per account per window, with a count,
 * never once per request; the window is the rate limit's own minute.
 */
export const ABUSE_WINDOW_MS = MS_PER_MINUTE;

/** Accounts whose refusals are being counted in the current window: bounds the memory; beyond it the oldest is forgotten. */
export const ABUSE_ACCOUNTS_MAX = 100_000;

/**
 * Index entries one filtered admin listing request may examine. Reading
 * 5,000 entries (and the records they point at) takes a few milliseconds,
 * about what one 500-item page costs to render, so an operator's listing
 * delays orders no more than a page of output does.
 */
export const SCAN_ENTRIES_MAX = 5_000;

/** Orders one worker may claim in one request: the claim answers them like a page of a listing, so it is bounded like one. */
export const CLAIM_LIMIT_MAX = ADMIN_PAGE_MAX;

/** A worker's name, as shown beside the orders it claimed. */
export const WORKER_CHARS_MAX = 100;

/** The longest refill window an operator may offer a service: ten years. */
export const REFILL_DAYS_MAX = 10 * 365;

/** A name an operator gives (an account's; a service's platform, name and category): a line in a listing or a customer's service list, not a text. */
export const NAME_CHARS_MAX = 200;

/** The reason an operator gives for a change of credits or status: written into the log event, so it stays a sentence or two. */
export const REASON_CHARS_MAX = 500;

/** A service's description: a few paragraphs, shown in the service lists of API v2. */
export const DESCRIPTION_CHARS_MAX = 2000;

/** A snapshot's output path: Linux's PATH_MAX, the longest path the file system takes. */
export const PATH_CHARS_MAX = 4096;
