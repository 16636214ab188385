/**
 * A subscription's terms as API v2's `add` carries them: `username`, `min`,
 * `max`, `posts`, `old_posts`, `delay` and `expiry` (DD/MM/YYYY), all as
 * text, an empty field counting as absent. Reading them needs no clock and
 * no catalogue; the decision checks them against the service and the date
 * (subscriptionTermsProblem), and the replay checks every placed
 * subscription by the same function.
 */
import { MS_PER_DAY } from '../platform/units.js';
import {
  POST_ID_CHARS_MAX,
  SUBSCRIPTION_DELAYS_MINUTES,
  SUBSCRIPTION_EXPIRY_DAYS_MAX,
  SUBSCRIPTION_OLD_POSTS_MAX,
  SUBSCRIPTION_POSTS_MAX,
  USERNAME_CHARS_MAX,
} from './limits.js';
import type { ServiceRecord } from './records.js';
import type { SubscriptionTerms } from './subscription-record.js';

/** The fields of a subscription, in the order API pages list them. */
export const SUBSCRIPTION_FIELDS = ['username', 'min', 'max', 'posts', 'old_posts', 'delay', 'expiry'] as const;

type Refusal = { ok: false; message: string };
export type TermsRead = { ok: true; terms: Omit<SubscriptionTerms, 'service'> } | Refusal;

const EXPIRY_REFUSAL = "Field 'expiry' must be a date as DD/MM/YYYY, or left out for no end.";

/** A field's text; an absent field reads as an empty one. */
function textOf(fields: Readonly<Record<string, string>>, name: string): string {
  return fields[name] ?? '';
}

/** A whole number as a form carries it (digits only, so never below 0), or null. */
function whole(text: string): number | null {
  if (!/^[0-9]{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** Whether `minutes` is one of the delays offered; null, no whole number, is none of them. */
function isDelay(minutes: number | null): minutes is number {
  return (SUBSCRIPTION_DELAYS_MINUTES as readonly (number | null)[]).includes(minutes);
}

/** One word without spaces or controls, as names are kept elsewhere (order-types.ts). */
function isName(text: string): boolean {
  return text !== '' && text.length <= USERNAME_CHARS_MAX && !/[\s\x00-\x1f\x7f]/.test(text);
}

/**
 * `expiry` as DD/MM/YYYY: the subscription runs through that day (UTC) and
 * ends at the start of the next. Null when the text is not such a date.
 */
export function expiryFromText(text: string): number | null {
  const m = /^([0-9]{1,2})\/([0-9]{1,2})\/([0-9]{4})$/.exec(text);
  if (m === null) return null;
  const [day, month, year] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const startMs = Date.UTC(year, month - 1, day);
  const start = new Date(startMs);
  // A day past its month's end (or 0) rolls into another month, a month
  // past 12 (or 0) into another year, and a year below 100 reads as 19xx:
  // the day exists exactly when the year and the month come back unchanged.
  if (start.getUTCFullYear() !== year || start.getUTCMonth() !== month - 1) return null;
  return startMs + MS_PER_DAY;
}

/** The expiry as DD/MM/YYYY (the day it runs through), as panels show it. */
export function expiryText(expiryMs: number): string {
  const day = new Date(expiryMs - MS_PER_DAY);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(day.getUTCDate())}/${two(day.getUTCMonth() + 1)}/${day.getUTCFullYear()}`;
}

function count(fields: Readonly<Record<string, string>>, name: 'posts' | 'old_posts', max: number): { ok: true; n: number } | Refusal {
  const text = textOf(fields, name);
  if (text === '') return { ok: true, n: 0 };
  const n = whole(text);
  if (n === null || n > max) return { ok: false, message: `Field '${name}' must be a whole number from 0 to ${max}${name === 'posts' ? ' (0: no limit)' : ''}.` };
  return { ok: true, n };
}

/** Reads the terms; `username`, `min` and `max` are required, the rest default to none (0, no expiry; `expiry` 0 is none too). */
export function readSubscriptionTerms(fields: Readonly<Record<string, string>>): TermsRead {
  const username = textOf(fields, 'username').trim();
  if (!isName(username)) return { ok: false, message: `Field 'username' is required: the account whose new posts are delivered to, one word of at most ${USERNAME_CHARS_MAX} characters.` };
  const min = whole(textOf(fields, 'min'));
  const max = whole(textOf(fields, 'max'));
  // A whole number is never below 0: 0 is the one below the least of 1.
  if (min === null || min === 0) return { ok: false, message: "Field 'min' is required: the fewest units delivered to each post, a whole number." };
  if (max === null || max === 0) return { ok: false, message: "Field 'max' is required: the most units delivered to each post, a whole number." };
  if (min > max) return { ok: false, message: `Field 'min' (${min}) must not be above 'max' (${max}).` };
  const posts = count(fields, 'posts', SUBSCRIPTION_POSTS_MAX);
  if (!posts.ok) return posts;
  const oldPosts = count(fields, 'old_posts', SUBSCRIPTION_OLD_POSTS_MAX);
  if (!oldPosts.ok) return oldPosts;
  const delayText = textOf(fields, 'delay');
  const delayMinutes = delayText === '' ? 0 : whole(delayText);
  if (!isDelay(delayMinutes)) {
    return { ok: false, message: `Field 'delay' must be one of ${SUBSCRIPTION_DELAYS_MINUTES.join(', ')} (minutes).` };
  }
  // Absent, empty or 0: no end, as panels' forms send an unset date.
  const expiry = textOf(fields, 'expiry');
  const noEnd = expiry === '' || expiry === '0';
  const expiryMs = noEnd ? null : expiryFromText(expiry);
  if (expiryMs === null && !noEnd) return { ok: false, message: EXPIRY_REFUSAL };
  return { ok: true, terms: { username, min, max, posts: posts.n, oldPosts: oldPosts.n, delayMinutes, expiryMs } };
}

/**
 * Why terms do not fit their service or the date they were placed on, or
 * null: QTY when min..max leaves the service's range, VALIDATION when the
 * expiry is not ahead (or too far ahead), when the stored terms break a
 * reading rule (the replay), or when the service does not take subscriptions.
 */
export function subscriptionTermsProblem(terms: SubscriptionTerms, service: ServiceRecord, wallMs: number): { code: 'QTY' | 'VALIDATION'; message: string } | null {
  if (service.type !== 'Subscriptions') return { code: 'VALIDATION', message: `Service ${service.id} is a ${service.type} service, not a Subscriptions one.` };
  if (terms.min < service.min || terms.max > service.max) {
    return { code: 'QTY', message: `Fields 'min' and 'max' must lie between ${service.min} and ${service.max} for service ${service.id}.` };
  }
  const reread = readSubscriptionTerms(termsAsFields(terms));
  if (!reread.ok) return { code: 'VALIDATION', message: reread.message };
  return terms.expiryMs === null ? null : expiryProblem(terms.expiryMs, wallMs);
}

/** Stored terms but the expiry as the fields that would carry them (the replay reads them again). */
function termsAsFields(terms: SubscriptionTerms): Record<string, string> {
  return {
    username: terms.username,
    min: String(terms.min),
    max: String(terms.max),
    posts: String(terms.posts),
    old_posts: String(terms.oldPosts),
    delay: String(terms.delayMinutes),
  };
}

/**
 * Why a stored expiry does not fit the date it was placed on, or null: its
 * day must read back as DD/MM/YYYY (the last field's reading rule), be
 * the end of that day, lie ahead, and not too far ahead.
 */
function expiryProblem(expiryMs: number, wallMs: number): { code: 'VALIDATION'; message: string } | null {
  const reread = expiryFromText(expiryText(expiryMs));
  if (reread === null) return { code: 'VALIDATION', message: EXPIRY_REFUSAL };
  if (reread !== expiryMs) return { code: 'VALIDATION', message: "Field 'expiry' is not the end of a day (UTC)." };
  if (expiryMs <= wallMs) return { code: 'VALIDATION', message: "Field 'expiry' is a day already past; send a later date, or none." };
  if (expiryMs - wallMs > SUBSCRIPTION_EXPIRY_DAYS_MAX * MS_PER_DAY) {
    return { code: 'VALIDATION', message: `Field 'expiry' lies more than ${SUBSCRIPTION_EXPIRY_DAYS_MAX} days ahead.` };
  }
  return null;
}

/** A post id as the processing system reports it: 1 to POST_ID_CHARS_MAX printable ASCII characters without spaces (the pattern needs one). */
export function isPostId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= POST_ID_CHARS_MAX && /^[\x21-\x7e]+$/.test(value);
}
