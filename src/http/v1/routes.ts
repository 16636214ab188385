/**
 * The customer API, /api/v1. Handlers read every header synchronously,
 * register onAborted before anything asynchronous, authenticate, and then
 * hand one command to the account's wallet actor; they never touch wallet
 * state. Check order: route, AUTH, BANNED, RATE, VALIDATION, business.
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, renderError, type ErrorOutcome } from '../../errors/index.js';
import { newRequestId, ORDER_ID_PATTERN } from '../../ids/index.js';
import { renderStatus } from '../../wire/index.js';
import type { OrderRequest } from '../../ledger/index.js';
import { refuseBlockedAddress } from '../guards/address-block.js';
import { remoteAddressKey } from '../guards/address-key.js';
import { countHeaders, idempotencyHeader } from '../transport/header-counts.js';
import { orderRequest, refusedOrder, submitOrder } from '../orders/order-submit.js';
import { handleV2, V2_PATH } from '../v2/routes.js';
import { readBody, type BodyResult } from '../transport/body.js';
import type { AppContext } from '../context.js';
import { deliver, unavailable } from '../transport/deliver.js';
import { parseJson, TOO_LARGE } from '../transport/json-request.js';
import { guarded, newExchange, send, sendError, type Exchange } from '../transport/reply.js';
import { checkOrderInput } from '../orders/order-input.js';
import { batchStatus, cancelOrders, refillOrders, refillStatus } from './lifecycle.js';
import { bodyIdList, queryIdList, type IdList } from '../orders/id-list.js';
import { createWebhook, deleteWebhook, listWebhooks, rotateWebhook, webhookRoute, WEBHOOK_PATH, WEBHOOK_ROTATE_PATH, WEBHOOKS_PATH } from './webhooks.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../transport/uws.js';

export type ApiMethod = 'get' | 'post' | 'delete';

/**
 * The customer API's routes (`{id}` for a path segment) and methods;
 * test/http/openapi.test.ts holds the OpenAPI document to exactly these.
 */
export const API_ROUTES: Readonly<Record<string, ApiMethod | readonly ApiMethod[]>> = {
  '/api/v1/balance': 'get',
  '/api/v1/services': 'get',
  '/api/v1/order': 'post',
  '/api/v1/status': 'get',
  '/api/v1/cancel': 'post',
  '/api/v1/refill': 'post',
  '/api/v1/refill_status': 'get',
  '/api/v1/openapi.json': 'get',
  [WEBHOOKS_PATH]: ['get', 'post'],
  [WEBHOOK_PATH]: 'delete',
  [WEBHOOK_ROTATE_PATH]: 'post',
};

/** The methods a route accepts. */
export function routeMethods(allowed: ApiMethod | readonly ApiMethod[]): readonly ApiMethod[] {
  return typeof allowed === 'string' ? [allowed] : allowed;
}

const NOT_FOUND = errorOutcome('NOT_FOUND', 'No such endpoint; see GET /api/v1/openapi.json for the API.');
const ORDER_NOT_FOUND = errorOutcome('NOT_FOUND', 'No order with this id exists on this account.');

export function mountApi(app: TemplatedApp, ctx: AppContext): void {
  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const ex = newExchange(res, newRequestId(), ctx.metrics);
    guarded(ctx, ex, () => handleApi(ctx, ex, res, req));
  });
}

function handleApi(ctx: AppContext, ex: Exchange, res: HttpResponse, req: HttpRequest): void {
  const url = req.getUrl();
  const method = req.getMethod();
  ex.head = method === 'head';
  if (url === V2_PATH) return handleV2(ctx, ex, res, req, method);
  const hook = webhookRoute(url);
  const path = hook?.path ?? url;
  const allowed = API_ROUTES[path];
  if (allowed === undefined) return sendError(ex, NOT_FOUND);
  ex.route = path;
  const methods = routeMethods(allowed);
  if (!(methods as readonly string[]).includes(method)) {
    const allow = methods.map((m) => m.toUpperCase()).join(', ');
    return sendError(ex, errorOutcome('METHOD', `${path} accepts only ${allow}.`), ['Allow', allow]);
  }
  if (url === '/api/v1/openapi.json') return send(ex, 200, ctx.openapiBody);
  if (ctx.draining()) return unavailable(ex, 'The server is shutting down; retry shortly.', true);
  const seen = countHeaders(req);
  if (seen.bytes > ctx.limits.headerBytesMax) {
    return sendError(
      ex,
      errorOutcome('VALIDATION', `The request headers are larger than the limit of ${ctx.limits.headerBytesMax} bytes.`, undefined, 431),
      [],
      true,
    );
  }
  if (seen.contentLength > 1) {
    // Two framings of one body: refuse and close rather than guess which
    // one a proxy in front of us used (request smuggling).
    return sendError(ex, errorOutcome('VALIDATION', 'Send exactly one Content-Length header.'), [], true);
  }
  const apiKey = seen.apiKey > 1 ? '' : req.getHeader('x-api-key');
  const apiSecret = seen.apiSecret > 1 ? '' : req.getHeader('x-api-secret');
  // The address is read only when needed (a failure to count or check):
  // most requests never need it.
  const ip = (): string => remoteAddressKey(res);

  if (method === 'post') {
    const contentType = req.getHeader('content-type');
    const idempotency = idempotencyHeader(req, seen);
    // AUTH is answered once the body is read, though the credentials are
    // headers: answering before it would mean closing the connection with
    // the body unread, and a client whose body arrives after the close gets
    // a reset that can lose the 401 (docs/DECISIONS.md, "HTTP").
    readBody(res, req.getHeader('content-length'), ctx.limits.bodyBytesMax, (body) =>
      guarded(ctx, ex, () => {
        const account = authenticate(ex, ctx, ip, apiKey, apiSecret, body.kind === 'too-large');
        if (account === null) return;
        if (url === '/api/v1/order') return placeOrder(ex, ctx, account, body, contentType, idempotency);
        if (path === WEBHOOKS_PATH) return createWebhook(ex, ctx, account, body, contentType);
        if (path === WEBHOOK_ROTATE_PATH) return rotateWebhook(ex, ctx, account, hook!.id!);
        const list = bodyList(ctx, body, contentType);
        if (url === '/api/v1/cancel') return cancelOrders(ex, ctx, account, list);
        return refillOrders(ex, ctx, account, list);
      }),
    );
    return;
  }

  const query = req.getQuery() ?? '';
  const batch = url === '/api/v1/status' && /(^|&)orders=/.test(query);
  const orderQuery = url === '/api/v1/status' && !batch ? statusQuery(query) : undefined;
  const account = authenticate(ex, ctx, ip, apiKey, apiSecret, false);
  if (account === null) return;
  if (path === WEBHOOKS_PATH) return listWebhooks(ex, ctx, account);
  if (path === WEBHOOK_PATH) return deleteWebhook(ex, ctx, account, hook!.id!);
  if (batch) return batchStatus(ex, ctx, account, batchQuery(query, 'orders', 'orders=ID1,ID2'));
  if (url === '/api/v1/refill_status') return refillStatus(ex, ctx, account, batchQuery(query, 'refills', 'refills=1,2,3'));
  if (url === '/api/v1/balance') return deliver(ex, ctx, account, account.actor.send({ kind: 'balance' }));
  if (url === '/api/v1/services') {
    return deliver(ex, ctx, account, account.actor.send({ kind: 'touch' }), () => ({ status: 200, body: ctx.catalog.publicListBody() }));
  }
  return orderStatus(ex, ctx, account, orderQuery);
}

/** The `order` parameter, or null when it is repeated (ambiguous) or cannot be decoded. */
function statusQuery(query: string): string | null {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return null;
  }
  const values = params.getAll('order');
  if (values.length > 1) return null;
  return values[0] ?? '';
}

/** A batch query's id list; the single `order=` form cannot be mixed in. */
function batchQuery(query: string, name: string, example: string): IdList {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return { ok: false, error: errorOutcome('VALIDATION', 'The query string cannot be decoded.') };
  }
  if (name === 'orders' && params.has('order')) {
    return { ok: false, error: errorOutcome('VALIDATION', 'Pass either order=ID or orders=ID1,ID2, not both.') };
  }
  return queryIdList(params, name, `/api/v1/${name === 'orders' ? 'status' : 'refill_status'}?${example}`);
}

/** The `{"orders": [...]}` body of cancel and refill. */
function bodyList(ctx: AppContext, body: BodyResult, contentType: string): IdList {
  if (body.kind === 'too-large') return { ok: false, error: TOO_LARGE(ctx.limits.bodyBytesMax) };
  const parsed = parseJson(contentType, body.bytes);
  if (!parsed.ok) return parsed;
  return bodyIdList(parsed.value, 'orders', '{"orders": ["ID1", "ID2"]}');
}

/**
 * AUTH, and the per-IP failure limit. Credentials are always checked (the
 * same constant-time comparison whatever the address's count), and valid
 * ones are served: one bad client behind a shared NAT or proxy must not lock
 * out every customer there. Only failures are limited: an address that has
 * used up its failures gets 429 for every failed attempt instead of 401, so
 * guessing still costs it time. Sends the error and returns null on failure.
 */
function authenticate(ex: Exchange, ctx: AppContext, ip: () => string, apiKey: string, apiSecret: string, close: boolean): Account | null {
  const account = apiKey === '' || apiSecret === '' ? null : ctx.registry.authenticate(apiKey, apiSecret);
  if (account !== null) return account;
  if (refuseBlockedAddress(ex, ctx, ip, close)) return null;
  ctx.authFailures.recordFailure(ip());
  const message =
    apiKey === '' || apiSecret === '' ? 'Send your API key and secret in the X-API-Key and X-API-Secret headers.' : 'The API key or secret is not valid.';
  sendError(ex, errorOutcome('AUTH', message), [], close);
  return null;
}

function orderStatus(ex: Exchange, ctx: AppContext, account: Account, orderQuery: string | null | undefined): void {
  const delivery = account.actor.send({ kind: 'touch' });
  let invalid: ErrorOutcome | null = null;
  if (orderQuery === null) {
    invalid = errorOutcome('VALIDATION', 'Pass exactly one order query parameter: /api/v1/status?order=ID.');
  } else if (orderQuery === undefined || orderQuery === '') {
    invalid = errorOutcome('VALIDATION', 'Pass the order id as the query parameter: /api/v1/status?order=ID.');
  } else if (!ORDER_ID_PATTERN.test(orderQuery)) {
    invalid = errorOutcome('VALIDATION', 'That is not an order id; order ids are the 22-character strings returned by POST /api/v1/order.');
  }
  deliver(ex, ctx, account, delivery, () => {
    if (invalid !== null) return { status: invalid.status, body: renderError(invalid, ex.requestId) };
    const order = ctx.readOrder(orderQuery!);
    if (order === undefined || order.account !== account.profile.id) {
      return { status: ORDER_NOT_FOUND.status, body: renderError(ORDER_NOT_FOUND, ex.requestId) };
    }
    return { status: 200, body: renderStatus(order) };
  });
}


/**
 * POST /api/v1/order: parses the request, or finds the reason it is invalid,
 * and hands either to the actor; the reason is refused there, after the ban
 * and rate-limit checks (the contract's check order).
 */
function placeOrder(
  ex: Exchange,
  ctx: AppContext,
  account: Account,
  body: BodyResult,
  contentType: string,
  idempotencyHeader: string | null,
): void {
  submitOrder(ex, ctx, account, parseOrder(ctx, body, contentType, idempotencyHeader), body.kind === 'too-large');
}

/** The order as sent (without its force-join verdict, which is asked for next), or why it is invalid. */
function parseOrder(ctx: AppContext, body: BodyResult, contentType: string, idempotencyHeader: string | null): OrderRequest {
  if (body.kind === 'too-large') return refusedOrder(TOO_LARGE(ctx.limits.bodyBytesMax));
  const parsed = parseJson(contentType, body.bytes);
  if (!parsed.ok) return refusedOrder(parsed.error);
  const checked = checkOrderInput(parsed.value, ctx.limits.targetCharsMax, (id) => ctx.catalog.get(id));
  if (!checked.ok) return refusedOrder(checked.error);
  return orderRequest(checked.payload, checked.service, idempotencyHeader);
}
