/**
 * Every bound of the domain, each with its reason. They are part of the
 * contract: the VALIDATION (or other) message a client gets names the bound
 * it crossed, and the OpenAPI document quotes them.
 */
import { MS_PER_MINUTE } from '../platform/units.js';

/**
 * The rate limit's window: limits are set per minute (the contract's
 * "requests per minute"), and the token bucket's burst is one window's
 * worth. A bucket refills completely in this time.
 */
export const RATE_WINDOW_MS = MS_PER_MINUTE;

/**
 * The largest per-minute rate limit an operator may set: the contract asks
 * for at least 100,000,000 a minute, and the token bucket's scaled integer
 * arithmetic (limit × RATE_WINDOW_MS) stays exact far beyond it.
 */
export const RATE_LIMIT_MAX = 100_000_000;

/**
 * The longest URL accepted anywhere: an order's target and a webhook
 * endpoint's url. 2,048 characters is what browsers, proxies and servers
 * reliably carry; a longer "URL" is a mistake or an attempt to bloat the
 * records that keep it.
 */
export const URL_CHARS_MAX = 2048;

/**
 * How many orders or refills one customer request may name (cancel, refill,
 * batch status): one request counts once against the rate limit, so the
 * work it can ask for is bounded here.
 */
export const BATCH_IDS_MAX = 100;

/**
 * Bounds on every list an order carries, kept in the order and its log
 * event: they cap the bytes one order adds to storage and to every replay.
 * The VALIDATION message names the one exceeded.
 */
export const COMMENT_LINES_MAX = 1_000;
export const COMMENT_CHARS_MAX = 500;
export const USERNAME_LINES_MAX = 1_000;
/** Longer than any handle the supported platforms allow. */
export const USERNAME_CHARS_MAX = 64;
/** Mentions with Hashtags: hashtags per order, and the longest one (Mentions Hashtag's too). */
export const HASHTAG_LINES_MAX = 1_000;
export const HASHTAG_CHARS_MAX = 100;
/** SEO: search keywords per order; a keyword is a phrase, longer than a handle. */
export const KEYWORD_LINES_MAX = 1_000;
export const KEYWORD_CHARS_MAX = 200;
/**
 * Invites from Groups: groups per order. A group is named by its link or its
 * name; 300 characters hold the links the supported platforms give groups.
 */
export const GROUP_LINES_MAX = 1_000;
export const GROUP_CHARS_MAX = 300;
/** Polls have far fewer answers than this. */
export const ANSWER_NUMBER_MAX = 100;
/** A drip-feed order's runs: its charge is quantity × runs × rate, debited at once. */
export const RUNS_MAX = 1_000;
/** The longest pause between drip-feed runs: thirty days, in minutes. */
export const INTERVAL_MINUTES_MAX = 30 * 24 * 60;

/**
 * The most months of the unlimited plan one grant may add (ten years): a
 * larger number is almost surely a typing mistake, and the plan's expiry
 * stays a safe timestamp.
 */
export const PLAN_MONTHS_MAX = 120;

/**
 * A claim's lease: how long a worker holds the orders it claimed before
 * they go back to the claim queue, unless it extends or releases them first.
 * The shortest is ten seconds: a lease must outlast a worker's round trip
 * to the admin API and a commit under load, or a working worker loses its
 * orders. The longest is a day: a lease exists to bound how long a lost
 * claim (a worker that crashed, a reply that never arrived) stalls an
 * order, and a longer one would let a customer's order wait for days.
 * The default, five minutes, is time for a worker to hand an order to its
 * supplier and move it to in_progress, and what a crashed worker costs.
 */
export const LEASE_SECONDS_MIN = 10;
export const LEASE_SECONDS_MAX = 86_400;
export const LEASE_SECONDS_DEFAULT = 300;

/**
 * Subscriptions: the delays a subscription may ask for between a new post
 * and its delivery, in minutes. These are the values panels' API pages and
 * order forms offer (0, 5, 10, 15, 30, 60, 90 and on to ten hours); another
 * value is refused rather than rounded, since rounding would change when
 * the posts are delivered.
 */
export const SUBSCRIPTION_DELAYS_MINUTES: readonly number[] = [0, 5, 10, 15, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 360, 420, 480, 540, 600];
/**
 * The most new posts one subscription may ask for (`posts`), and the most
 * existing posts (`old_posts`): far above what panels sell, and small
 * enough that a typing mistake cannot commit a wallet to years of orders.
 */
export const SUBSCRIPTION_POSTS_MAX = 10_000;
export const SUBSCRIPTION_OLD_POSTS_MAX = 100;
/**
 * The furthest `expiry` may lie ahead: ten years in days, the same horizon
 * as the plan's longest grant; a later date is a typing mistake.
 */
export const SUBSCRIPTION_EXPIRY_DAYS_MAX = 3_660;
/**
 * A post's id as the operator's processing system reports it (a platform's
 * media id or shortcode): what makes a repeated report of the same post
 * recognisable. Longer than any platform's id.
 */
export const POST_ID_CHARS_MAX = 128;
/**
 * The numbers of a subscription's latest orders its record keeps (and its
 * status shows): one per post, so a subscription without a posts limit
 * would otherwise grow its record, rewritten with every post, without end.
 * The admin listing of orders finds the older ones.
 */
export const SUBSCRIPTION_ORDERS_KEPT = 100;
