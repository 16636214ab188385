/**
 * API v2, the dialect reseller tools and child panels speak: one endpoint,
 * `POST /api/v2` (or `GET /api/v2?…`), a `key` and an `action`, answered
 * with small JSON objects; errors are HTTP 200 `{"error": "<sentence>"}`.
 * It is a second front end on the same wallet actors as v1: every request
 * is a `touch` or an order command to the account's actor, so the ban, the
 * one rate-limit bucket, the Unlimited plan, force-join, the ledger and the
 * log are the same, and a v2 order is the same order as a v1 one, named by
 * its number.
 *
 * Check order as on v1: AUTH, then BANNED and RATE (in the actor), then the
 * action's fields (VALIDATION), then the order's business checks. A request
 * refused before its command is applied changes nothing durable.
 *
 * `Expect: 100-continue` (curl sends it for bodies over 1 KiB):
 * uWebSockets.js answers `HTTP/1.1 100 Continue` itself as soon as it has
 * parsed such a request's headers, before the handler runs, so the body
 * simply arrives (test/http/v2-php.test.ts sends such bodies with PHP's curl).
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { formatBig, formatMicro } from '../../money/index.js';
import { assert, durationInWords, MS_PER_SECOND } from '../../platform/index.js';
import type { AppContext } from '../context.js';
import { authenticate } from '../guards/authenticate.js';
import { preamble } from '../guards/preamble.js';
import type { Answer } from '../transport/answer.js';
import { readBody } from '../transport/body.js';
import { deliver } from '../transport/deliver.js';
import { idempotencyHeader } from '../transport/header-counts.js';
import { guarded, sendError, type Exchange } from '../transport/reply.js';
import type { HttpRequest, HttpResponse } from '../transport/uws.js';
import { add } from './add.js';
import { INCORRECT_REQUEST, renderV2Error, V2Errors } from './errors.js';
import { cancel, refill, refillStatus, status } from './lifecycle.js';
import { parseV2Params } from './params.js';

export const V2_PATH = '/api/v2';

const ok = (body: string): Answer => ({ status: 200, body });
/** What panels show as the average time of a service with no completed order to count. */
const NO_AVERAGE_TIME = 'Not enough data';
const invalid = (message: string): ErrorOutcome => errorOutcome('VALIDATION', message);

/** A request to `/api/v2`: its method, the request preamble, then its parameters (from the body once read) and its action. */
export function handleV2(ctx: AppContext, ex: Exchange, res: HttpResponse, req: HttpRequest, method: string): void {
  const dialect = new V2Errors();
  ex.dialect = dialect;
  ex.route = V2_PATH;
  if (method !== 'get' && method !== 'post') {
    return sendError(ex, errorOutcome('METHOD', `${V2_PATH} accepts POST (form fields) or GET (query string).`), ['Allow', 'GET, POST']);
  }
  const seen = preamble(ex, ctx, req);
  if (seen === null) return;
  const query = req.getQuery() ?? '';
  const idempotency = idempotencyHeader(seen);
  if (method === 'get') return run(ctx, ex, dialect, parseV2Params(query, '', null), idempotency);
  const contentType = seen.values.contentType;
  readBody(res, seen.values.contentLength, ctx.limits.bodyBytesMax, (body) =>
    guarded(ctx, ex, () => {
      if (body.kind === 'too-large') return sendError(ex, invalid(`The request body is larger than the limit of ${ctx.limits.bodyBytesMax} bytes.`), [], true);
      run(ctx, ex, dialect, parseV2Params(query, contentType, body.bytes), idempotency);
    }),
  );
}

function run(ctx: AppContext, ex: Exchange, dialect: V2Errors, parsed: ReturnType<typeof parseV2Params>, idempotency: string | null): void {
  if (!parsed.ok) return sendError(ex, invalid(parsed.message));
  const { params } = parsed;
  const account = authenticate(ex, ctx, params.get('key') ?? '', null, false);
  if (account === null) return;
  switch (params.get('action') ?? '') {
    case 'balance':
      return balance(ex, ctx, account);
    case 'services':
      return services(ex, ctx, account);
    case 'add':
      return add(ex, ctx, account, params, idempotency, dialect);
    case 'status':
      return status(ex, ctx, account, params);
    case 'cancel':
      return cancel(ex, ctx, account, params);
    case 'refill':
      return refill(ex, ctx, account, params);
    case 'refill_status':
      return refillStatus(ex, ctx, account, params);
    default:
      // Counted against the rate limit like any request that reached the account.
      return deliver(ex, ctx, account, account.actor.send({ kind: 'touch' }), () => ok(renderV2Error(INCORRECT_REQUEST)));
  }
}

function balance(ex: Exchange, ctx: AppContext, account: Account): void {
  deliver(ex, ctx, account, account.actor.send({ kind: 'balance' }), undefined, false, (outcome) => {
    assert(outcome.kind === 'balance', 'a balance command answers a balance', outcome.kind);
    return ok(`{"balance":"${formatMicro(outcome.credits)}","currency":${JSON.stringify(ctx.currency)}}`);
  });
}

let servicesCache = { source: '', body: '' };

/** A service's `average_time` as panels write it: the median of its recent completions in words, or that there is none yet. */
function averageTime(ctx: AppContext, service: number): string {
  const seconds = ctx.catalog.averageTimeS(service);
  return seconds === null ? NO_AVERAGE_TIME : durationInWords(seconds * MS_PER_SECOND);
}

/** Rendered again only when the catalogue changed (its v1 list body is then a new string). */
function servicesBody(ctx: AppContext): string {
  const source = ctx.catalog.publicListBody();
  if (source !== servicesCache.source) {
    const parts = ctx.catalog
      .all()
      .filter((s) => s.enabled)
      .sort((a, b) => a.id - b.id)
      .map(
        (s) =>
          // A service without a category is grouped under its platform, so no client shows an empty group.
          `{"service":${s.id},"name":${JSON.stringify(s.name)},"type":${JSON.stringify(s.type)},"category":${JSON.stringify(s.category || s.platform)},` +
          // Per 1000 units, exactly: the rate in micro-credits per unit × 1000 (BigInt: no float, no overflow).
          `"rate":"${formatBig(BigInt(s.rate) * 1000n)}","min":"${s.min}","max":"${s.max}",` + // not a limit: v2 quotes rates per 1000 units
          `"refill":${s.refill},"cancel":${s.cancel},"dripfeed":${s.dripfeed},"average_time":${JSON.stringify(averageTime(ctx, s.id))}}`,
      );
    servicesCache = { source, body: `[${parts.join(',')}]` };
  }
  return servicesCache.body;
}

function services(ex: Exchange, ctx: AppContext, account: Account): void {
  deliver(ex, ctx, account, account.actor.send({ kind: 'touch' }), () => ok(servicesBody(ctx)));
}
