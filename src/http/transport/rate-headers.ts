/**
 * The rate-limit headers of a response that counted against a key. The
 * IETF draft's pair is always sent: `RateLimit-Policy: "default";q=<limit>;w=60`
 * and `RateLimit: "default";r=<remaining>;t=<seconds until full>`. The
 * common `X-RateLimit-Limit`, `-Remaining` and `-Reset` trio says the same
 * again, so it is sent only where the operator sets RATE_LIMIT_HEADERS=both
 * for clients that read only that family: the trio adds three header
 * lines to every answer, work on the order path that tells a client nothing
 * the pair does not.
 */
import type { BucketVerdict } from '../../ledger/index.js';

/** RATE_LIMIT_HEADERS: `ietf` sends the draft's pair; `both` adds the X-RateLimit-* trio. */
export const RATE_LIMIT_HEADER_CHOICES = ['ietf', 'both'] as const;
export type RateLimitHeaders = (typeof RATE_LIMIT_HEADER_CHOICES)[number];

/** The policy header values of the last limit seen: limits rarely change, so they are not rebuilt per request. */
let policyFor = { limit: -1, policy: '', limitText: '' };

/** Adds the rate-limit headers, as name and value pairs, to `headers`. */
export function pushRateHeaders(headers: string[], families: RateLimitHeaders, limit: number, verdict: BucketVerdict): void {
  if (policyFor.limit !== limit) policyFor = { limit, policy: `"default";q=${limit};w=60`, limitText: String(limit) };
  headers.push('RateLimit-Policy', policyFor.policy, 'RateLimit', `"default";r=${verdict.remaining};t=${verdict.resetS}`);
  if (families === 'both') {
    headers.push('X-RateLimit-Limit', policyFor.limitText, 'X-RateLimit-Remaining', String(verdict.remaining), 'X-RateLimit-Reset', String(verdict.resetS));
  }
}
