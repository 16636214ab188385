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
import type { Account, Delivery, Request } from '../../actors/index.js';
import { errorOutcome, ERRORS, type ErrorCode, type ErrorOutcome } from '../../errors/index.js';
import { BATCH_IDS_MAX, readOrderPayload, remainsShown, type OrderRecord, type RefillRecord, type RefillStatus } from '../../ledger/index.js';
import { formatBig, formatMicro } from '../../money/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { assert } from '../../platform/index.js';
import { refuseBlockedAddress } from '../guards/address-block.js';
import { remoteAddressKey } from '../guards/address-key.js';
import type { Answer } from '../transport/answer.js';
import { admit, answerWhenDurable } from '../v1/lifecycle.js';
import { readBody } from '../transport/body.js';
import type { AppContext } from '../context.js';
import { deliver, unavailable, type OutcomeRenderer } from '../transport/deliver.js';
import { countHeaders, idempotencyHeader } from '../transport/header-counts.js';
import { listOf, type IdList } from '../orders/id-list.js';
import { checkOrderInput } from '../orders/order-input.js';
import { orderRequest, refusedOrder, submitOrder } from '../orders/order-submit.js';
import { errorAnswer, guarded, sendError, type Exchange } from '../transport/reply.js';
import type { HttpRequest, HttpResponse } from '../transport/uws.js';
import { INCORRECT_ORDER_ID, INCORRECT_REFILL_ID, INCORRECT_REQUEST, renderV2Error, v2Sentence } from './errors.js';
import { parseV2Params, type V2Params } from './params.js';

export const V2_PATH = '/api/v2';

const ok = (body: string): Answer => ({ status: 200, body });
const invalid = (message: string): ErrorOutcome => errorOutcome('VALIDATION', message);

/** Entry point from the customer listener for `/api/v2`. */
export function handleV2(ctx: AppContext, ex: Exchange, res: HttpResponse, req: HttpRequest, method: string): void {
  ex.v2 = { quantity: null };
  ex.route = V2_PATH;
  if (method !== 'get' && method !== 'post') {
    return sendError(ex, errorOutcome('METHOD', `${V2_PATH} accepts POST (form fields) or GET (query string).`), ['Allow', 'GET, POST']);
  }
  if (ctx.draining()) return unavailable(ex, 'The server is shutting down; retry shortly.', true);
  const seen = countHeaders(req);
  if (seen.bytes > ctx.limits.headerBytesMax) {
    return sendError(ex, invalid(`The request headers are larger than the limit of ${ctx.limits.headerBytesMax} bytes.`), [], true);
  }
  // Two framings of one body: refuse and close rather than guess (request smuggling).
  if (seen.contentLength > 1) return sendError(ex, invalid('Send exactly one Content-Length header.'), [], true);
  const query = req.getQuery() ?? '';
  const idempotency = idempotencyHeader(req, seen);
  // Read only when needed (a failure to count or check).
  const ip = (): string => remoteAddressKey(res);
  if (method === 'get') return run(ctx, ex, ip, parseV2Params(query, '', null), idempotency);
  const contentType = req.getHeader('content-type');
  readBody(res, req.getHeader('content-length'), ctx.limits.bodyBytesMax, (body) =>
    guarded(ctx, ex, () => {
      if (body.kind === 'too-large') return sendError(ex, invalid(`The request body is larger than the limit of ${ctx.limits.bodyBytesMax} bytes.`), [], true);
      run(ctx, ex, ip, parseV2Params(query, contentType, body.bytes), idempotency);
    }),
  );
}

function run(ctx: AppContext, ex: Exchange, ip: () => string, parsed: ReturnType<typeof parseV2Params>, idempotency: string | null): void {
  if (!parsed.ok) return sendError(ex, invalid(parsed.message));
  const { params } = parsed;
  const account = authenticate(ex, ctx, ip, params.get('key') ?? '');
  if (account === null) return;
  switch (params.get('action') ?? '') {
    case 'balance':
      return balance(ex, ctx, account);
    case 'services':
      return services(ex, ctx, account);
    case 'add':
      return add(ex, ctx, account, params, idempotency);
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

/**
 * AUTH, as v1's: a valid key is served whatever its address's count of
 * failures (one limiter for v1 and v2 failures), and an address past its
 * limit gets RATE for each further failure (see DECISIONS, "blocks
 * failures, not addresses").
 */
function authenticate(ex: Exchange, ctx: AppContext, ip: () => string, key: string): Account | null {
  const account = key === '' ? null : ctx.registry.authenticateV2(key);
  if (account !== null) return account;
  if (refuseBlockedAddress(ex, ctx, ip, false)) return null;
  ctx.authFailures.recordFailure(ip());
  sendError(ex, errorOutcome('AUTH', 'Invalid API key'));
  return null;
}

function balance(ex: Exchange, ctx: AppContext, account: Account): void {
  deliver(ex, ctx, account, account.actor.send({ kind: 'balance' }), undefined, false, (outcome) => {
    assert(outcome.kind === 'balance', 'a balance command answers a balance', outcome.kind);
    return ok(`{"balance":"${formatMicro(outcome.credits)}","currency":${JSON.stringify(ctx.currency)}}`);
  });
}

let servicesCache = { source: '', body: '' };

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
          `"rate":"${formatBig(BigInt(s.rate) * 1000n)}","min":"${s.min}","max":"${s.max}",` +
          `"refill":${s.refill},"cancel":${s.cancel},"dripfeed":${s.dripfeed}}`,
      );
    servicesCache = { source, body: `[${parts.join(',')}]` };
  }
  return servicesCache.body;
}

function services(ex: Exchange, ctx: AppContext, account: Account): void {
  deliver(ex, ctx, account, account.actor.send({ kind: 'touch' }), () => ok(servicesBody(ctx)));
}

/** A whole number as a form carries it (decimal text), or null. */
function wholeNumber(text: string): number | null {
  if (!/^-?[0-9]{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** The order inputs a form carries as text but the order types read as integers. */
const INTEGER_FIELDS = ['quantity', 'answer_number', 'runs', 'interval'] as const;
/** The list inputs (one item per line), read as sent. */
const LIST_FIELDS = ['comments', 'usernames'] as const;

/**
 * `add`: the same inputs as a v1 order under the dialect's names (`link`
 * for the target), read by the service's order type exactly as v1 reads
 * them. An empty field counts as absent, as panels treat it. A refusal goes
 * through the actor too, so the ban and the rate limit come first.
 */
function add(ex: Exchange, ctx: AppContext, account: Account, params: V2Params, idempotency: string | null): void {
  const refused = (error: ErrorOutcome): void => submitOrder(ex, ctx, account, refusedOrder(error), false);
  const serviceId = parsePositiveId(params.get('service') ?? '');
  if (serviceId === null) return refused(errorOutcome('SERVICE', 'Incorrect service ID'));
  const link = params.get('link') ?? '';
  if (link === '') return refused(invalid('Send the link to promote in the link field.'));
  const body: Record<string, unknown> = { service: serviceId, target: link };
  for (const field of INTEGER_FIELDS) {
    const text = params.get(field);
    if (text === undefined || text === '') continue;
    const n = wholeNumber(text);
    if (n === null) return refused(invalid(`Field '${field}' must be a whole number.`));
    body[field] = n;
  }
  for (const field of LIST_FIELDS) {
    const text = params.get(field);
    if (text !== undefined && text !== '') body[field] = text;
  }
  const checked = checkOrderInput(body, ctx.limits.targetCharsMax, (id) => ctx.catalog.get(id));
  if (!checked.ok) {
    // v1 names its field 'target'; this dialect calls it the link.
    const aboutLink = checked.error.message.includes("'target'") || checked.error.message.toLowerCase().includes('target');
    return refused(aboutLink ? invalid(`Incorrect link: send an http or https URL of at most ${ctx.limits.targetCharsMax} characters, without spaces or control characters.`) : checked.error);
  }
  // The QTY sentence names the bound broken by the quantity as the actor
  // reads it: by the same service record, so by the same type.
  const read = readOrderPayload(checked.payload, checked.service);
  ex.v2!.quantity = read.ok ? read.input.quantity : null;
  submitOrder(ex, ctx, account, orderRequest(checked.payload, checked.service, idempotency), false, addAnswer(ctx, ex));
}

/** The answer to an accepted `add`, or to its replay under the same Idempotency-Key. */
function addAnswer(ctx: AppContext, ex: Exchange): OutcomeRenderer {
  return (outcome) => {
    if (outcome.kind === 'placed') return ok(`{"order":${outcome.order.number}}`);
    assert(outcome.kind === 'replay', 'an add answers a placed order or a replay', outcome.kind);
    const { record } = outcome;
    if (record.order !== null) {
      const order = ctx.readOrder(record.order);
      assert(order !== undefined, 'the order an idempotency record names is stored', record.order);
      return ok(`{"order":${order.number ?? null}}`);
    }
    // A remembered refusal: the stored v1 error body, told in this dialect.
    return ok(renderV2Error(v2Sentence(storedError(record.body), ex.v2?.quantity ?? null)));
  };
}

/** The code, message and bounds of a stored v1 error body (written by renderError). */
function storedError(body: string): Pick<ErrorOutcome, 'code' | 'message' | 'extra'> {
  const parsed = JSON.parse(body) as { error: string; message: string; min?: number; max?: number };
  assert(parsed.error in ERRORS, 'a stored error code is in the catalogue', parsed.error);
  const extra = parsed.min === undefined || parsed.max === undefined ? undefined : { min: parsed.min, max: parsed.max };
  return { code: parsed.error as ErrorCode, message: parsed.message, ...(extra === undefined ? {} : { extra }) };
}

const V2_STATUS: Record<OrderRecord['status'], string> = {
  pending: 'Pending',
  processing: 'Processing',
  in_progress: 'In progress',
  completed: 'Completed',
  partial: 'Partial',
  canceled: 'Canceled',
};

const V2_REFILL_STATUS: Record<RefillStatus, string> = {
  pending: 'Pending',
  in_progress: 'In progress',
  completed: 'Completed',
  rejected: 'Rejected',
};

/** One order's status as panels show it: money and counts as strings; start_count "0" until the operator records one. */
function renderV2Status(order: OrderRecord, currency: string): string {
  return (
    `{"charge":"${formatMicro(order.charge)}","start_count":"${order.startCount ?? 0}","status":"${V2_STATUS[order.status]}",` +
    `"remains":"${remainsShown(order)}","currency":${JSON.stringify(currency)}}`
  );
}

/** The account's order with this number, or null (unknown, malformed and other accounts' numbers alike). */
function ownOrder(ctx: AppContext, account: Account, text: string): OrderRecord | null {
  const number = parsePositiveId(text);
  const order = number === null ? undefined : ctx.readOrderByNumber(number);
  return order === undefined || order.account !== account.profile.id ? null : order;
}

/** An id as it goes back to the client: a number when it is one, else the text sent. */
function echoId(text: string): string {
  return parsePositiveId(text) === null ? JSON.stringify(text) : text;
}

/** `order=N` alone, or `orders=N1,N2,…`, as an id list; single tells which form was sent. */
function numbersAsked(params: V2Params, single: string, multi: string): { single: boolean; list: IdList } {
  const one = params.get(single);
  const many = params.get(multi);
  if (many !== undefined) return { single: false, list: listOf(many.split(',').map((v) => v.trim()), multi, `${multi}=1,2,3`) };
  if (one !== undefined && one.trim() !== '') return { single: true, list: { ok: true, ids: [one.trim()] } };
  return { single: false, list: { ok: false, error: invalid(`Send ${single} (one ID) or ${multi} (IDs separated by commas, at most ${BATCH_IDS_MAX}).`) } };
}

function status(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  const { single, list } = numbersAsked(params, 'order', 'orders');
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  deliver(ex, ctx, account, touch, () => {
    const shown = (id: string): string => {
      const order = ownOrder(ctx, account, id);
      return order === null ? renderV2Error(INCORRECT_ORDER_ID) : renderV2Status(order, ctx.currency);
    };
    if (single) return ok(shown(list.ids[0]!));
    return ok(`{${list.ids.map((id) => `${JSON.stringify(id)}:${shown(id)}`).join(',')}}`);
  });
}

/**
 * Sends one command per order named (by number) and answers once all are
 * durable: `item` renders each order's result, the error sentence in place
 * of it for an order that is not the caller's or was refused.
 */
function perOrder(
  ex: Exchange,
  ctx: AppContext,
  account: Account,
  list: IdList,
  command: (order: OrderRecord) => Request,
  answer: (items: [string, string][]) => string,
  item: (delivery: Delivery) => string,
): void {
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  const results = list.ids.map((id): [string, Delivery | string] => {
    const order = ownOrder(ctx, account, id);
    if (order === null) return [id, renderV2Error(INCORRECT_ORDER_ID)];
    const delivery = account.actor.send(command(order));
    return [id, delivery ?? renderV2Error('The wallet is busy; retry this order shortly.')];
  });
  const pending = results.map(([, r]) => (typeof r === 'string' ? null : r.durable));
  answerWhenDurable(ex, ctx, account, touch, pending, () =>
    answer(
      results.map(([id, r]): [string, string] => {
        if (typeof r === 'string') return [id, r];
        const outcome = r.decision.outcome;
        return [id, outcome.kind === 'error' ? errorAnswer(ex, outcome.error).body : item(r)];
      }),
    ),
  );
}

/** `cancel` with `orders` (or one `order`): `[{"order": N, "cancel": 1}, …]`; a started order's cancel is a request the operator resolves. */
function cancel(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  perOrder(
    ex,
    ctx,
    account,
    numbersAsked(params, 'order', 'orders').list,
    (order) => ({ kind: 'cancel', orderId: order.id }),
    (items) => `[${items.map(([id, item]) => `{"order":${echoId(id)},"cancel":${item}}`).join(',')}]`,
    () => '1',
  );
}

/** `refill` with `order` → `{"refill": "<id>"}`; with `orders` → `[{"order": N, "refill": <id>}, …]`. */
function refill(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  const { single, list } = numbersAsked(params, 'order', 'orders');
  const refillId = (d: Delivery): number => {
    assert(d.decision.outcome.kind === 'refill-opened', 'an accepted refill answers refill-opened', d.decision.outcome.kind);
    return d.decision.outcome.refill.id;
  };
  perOrder(
    ex,
    ctx,
    account,
    list,
    (order) => ({ kind: 'refill', orderId: order.id }),
    (items) => (single ? items[0]![1] : `[${items.map(([id, item]) => `{"order":${echoId(id)},"refill":${item}}`).join(',')}]`),
    // The single form answers the whole object; the list form one id per order.
    (d) => (single ? `{"refill":"${refillId(d)}"}` : String(refillId(d))),
  );
}

/** `refill_status` with `refill` → `{"status": "…"}`; with `refills` → `[{"refill": N, "status": "…"}, …]`. */
function refillStatus(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  const { single, list } = numbersAsked(params, 'refill', 'refills');
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  deliver(ex, ctx, account, touch, () => {
    const statusOf = (id: string): string => {
      const refillId = parsePositiveId(id);
      const found = refillId === null ? undefined : (ctx.store.tables.refills.get(refillId) as RefillRecord | undefined);
      return found === undefined || found.account !== account.profile.id ? renderV2Error(INCORRECT_REFILL_ID) : `"${V2_REFILL_STATUS[found.status]}"`;
    };
    if (single) {
      const shown = statusOf(list.ids[0]!);
      return ok(shown.startsWith('{') ? shown : `{"status":${shown}}`);
    }
    return ok(`[${list.ids.map((id) => `{"refill":${echoId(id)},"status":${statusOf(id)}}`).join(',')}]`);
  });
}
