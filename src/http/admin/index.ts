/**
 * The admin API, on its own listener (loopback by default) behind a bearer
 * token: the one table of its routes (ADMIN_ROUTES, which the operator
 * guide's admin table is checked against) and the one convention every
 * route follows — the token before the route, then NOT_FOUND / METHOD, a
 * query parameter the route does not read refused VALIDATION naming it (a
 * typo such as `statuss=` must not widen a listing a bulk script then acts
 * on), a JSON-object body for POST and PATCH, and any failure of a handler
 * answered INTERNAL (a broken invariant instead stops the process). The
 * handlers live one file per resource (accounts, services, orders, claims,
 * refills, ops); every change of a wallet goes through that wallet's actor
 * (see `applied` in common.ts), so it is serialised with the customer's
 * orders and logged as an event.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { errorOutcome } from '../../errors/index.js';
import { newRequestId } from '../../ids/index.js';
import { readBody } from '../transport/body.js';
import { unavailable } from '../transport/deliver.js';
import {
  adjustCredits,
  createAccount,
  grantPlan,
  issueV2Key,
  listAccounts,
  patchAccount,
  revokeV2Key,
  rotateSecret,
  setForceJoin,
  showAccount,
} from './accounts.js';
import { invalid, unknownParameter, type AdminHandler } from './common.js';
import { claimOrders, extendLease, releaseOrder } from './claims.js';
import { ORDER_PARAM, placePanelOrder, recordProgress, setOrderStatus, showOrder } from './orders.js';
import { listOrders, ORDER_LIST_QUERY } from './order-list.js';
import { accountStatement, STATEMENT_QUERY } from './statement.js';
import { metrics, snapshot, stats, verify } from './ops.js';
import { listRefills, setRefillStatus } from './refills.js';
import { createService, listServices, patchService } from './services.js';
import * as webhooks from './webhooks.js';
import { cancelSubscription, listSubscriptions, reportPost, showSubscription, SUBSCRIPTION_LIST_QUERY } from './subscriptions.js';
import type { AppContext } from '../context.js';
import { parseJson, TOO_LARGE } from '../transport/json-request.js';
import { failed, guarded, newExchange, send, sendError, type Exchange } from '../transport/reply.js';
import { requestObserver } from '../transport/request-observer.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../transport/uws.js';

type Handler = AdminHandler;

interface Route {
  path: string;
  method: string;
  pattern: RegExp;
  withBody: boolean;
  handler: Handler;
  /** The query parameters the route reads; any other is refused before the handler runs. */
  query: readonly string[];
}

const ID = '([1-9][0-9]{0,15})';

function route(method: string, path: string, handler: Handler, query: readonly string[] = []): Route {
  return { path, method, pattern: new RegExp(`^${path.replaceAll(':id', ID).replaceAll(':order', ORDER_PARAM)}$`), withBody: method === 'post' || method === 'patch', handler, query };
}

/** The paging parameters every listing reads. */
const PAGE = ['limit', 'cursor'] as const;

/** Every admin route, declared once. */
export const ADMIN_ROUTES: readonly Route[] = [
  route('post', '/admin/v1/accounts', createAccount),
  route('get', '/admin/v1/accounts', listAccounts, PAGE),
  route('get', '/admin/v1/accounts/:id/statement', accountStatement, STATEMENT_QUERY),
  route('get', '/admin/v1/accounts/:id', showAccount),
  route('patch', '/admin/v1/accounts/:id', patchAccount),
  route('post', '/admin/v1/accounts/:id/credits', adjustCredits),
  route('post', '/admin/v1/accounts/:id/rotate-secret', rotateSecret),
  route('post', '/admin/v1/accounts/:id/v2-key', issueV2Key),
  route('delete', '/admin/v1/accounts/:id/v2-key', revokeV2Key),
  route('post', '/admin/v1/services', createService),
  route('get', '/admin/v1/services', listServices),
  route('patch', '/admin/v1/services/:id', patchService),
  route('get', '/admin/v1/orders', listOrders, ORDER_LIST_QUERY),
  route('post', '/admin/v1/orders/claim', claimOrders),
  route('post', '/admin/v1/orders/:order/progress', recordProgress),
  route('post', '/admin/v1/orders/:order/extend', extendLease),
  route('post', '/admin/v1/orders/:order/release', releaseOrder),
  route('get', '/admin/v1/refills', listRefills, ['status', ...PAGE]),
  route('post', '/admin/v1/refills/:id/status', setRefillStatus),
  route('get', '/admin/v1/orders/:order', showOrder),
  route('post', '/admin/v1/orders/:order/status', setOrderStatus),
  route('post', '/admin/v1/accounts/:id/orders', placePanelOrder),
  route('post', '/admin/v1/accounts/:id/plan', grantPlan),
  route('post', '/admin/v1/accounts/:id/forcejoin', setForceJoin),
  route('get', '/admin/v1/subscriptions', listSubscriptions, SUBSCRIPTION_LIST_QUERY),
  route('get', '/admin/v1/subscriptions/:id', showSubscription),
  route('post', '/admin/v1/subscriptions/:id/posts', reportPost),
  route('post', '/admin/v1/subscriptions/:id/cancel', cancelSubscription),
  route('get', '/admin/v1/webhooks', webhooks.listWebhooks, ['account', 'failing', ...PAGE]),
  route('post', '/admin/v1/accounts/:id/webhooks', webhooks.createWebhook),
  route('patch', '/admin/v1/webhooks/:id', webhooks.patchWebhook),
  route('delete', '/admin/v1/webhooks/:id', webhooks.deleteWebhook),
  route('post', '/admin/v1/webhooks/:id/rotate', webhooks.rotateWebhook),
  route('post', '/admin/v1/webhooks/:id/replay', webhooks.replayWebhook),
  route('get', '/admin/v1/webhooks/:id/deliveries', webhooks.listDeliveries, ['limit']),
  route('get', '/admin/v1/stats', stats),
  route('post', '/admin/v1/snapshot', snapshot),
  route('get', '/admin/v1/verify', verify),
  route('get', '/metrics', metrics),
];

/**
 * The admin listener. `view` is the context each request is served with:
 * a server's own, or (a replicated follower) a function that gives a view
 * of the store refreshed as the log is applied.
 */
export function mountAdmin(app: TemplatedApp, view: AppContext | (() => AppContext)): void {
  const current = typeof view === 'function' ? view : () => view;
  const tokenHash = sha256(`Bearer ${current().adminToken}`);
  const observer = requestObserver(current().metrics, current().log);
  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const ctx = current();
    const ex = newExchange(res, newRequestId(), observer);
    // Listings and reads look at the store after waiting for the WAL; a commit
    // visible there may still be unsynced (overlapping sync): every admin reply
    // waits for what it could have seen (the admin API is not the hot path).
    ex.barrier = () => ctx.wal.readBarrier();
    guarded(ctx, ex, () => handleAdmin(ctx, ex, res, req, tokenHash));
  });
}

function handleAdmin(ctx: AppContext, ex: Exchange, res: HttpResponse, req: HttpRequest, tokenHash: Buffer): void {
  const url = req.getUrl();
  const method = req.getMethod();
  ex.method = method;
  ex.head = method === 'head';
  if (url === '/healthz' && method === 'get') return send(ex, 200, '{"ok":true}');
  // The token first, before the route: without it every request gets the
  // same 401, so an anonymous client cannot map the routes and methods.
  if (!timingSafeEqual(sha256(req.getHeader('authorization')), tokenHash)) {
    return sendError(ex, errorOutcome('AUTH', 'Send the admin token as Authorization: Bearer <token>.'));
  }
  if (url === '/healthz') return sendError(ex, errorOutcome('METHOD', '/healthz accepts only GET.'), ['Allow', 'GET']);
  const matching = ADMIN_ROUTES.filter((r) => r.pattern.test(url));
  if (matching.length === 0) return sendError(ex, errorOutcome('NOT_FOUND', 'No such admin endpoint.'));
  const match = matching.find((r) => r.method === method);
  if (match === undefined) {
    const allow = matching.map((r) => r.method.toUpperCase()).join(', ');
    return sendError(ex, errorOutcome('METHOD', `${url} accepts only ${allow}.`), ['Allow', allow]);
  }
  ex.route = match.path;
  // Reads are served by every live node; what changes state only where the
  // wallets are (a replicated follower, a leader whose lease is not current,
  // a server shutting down answer 503).
  const why = method === 'get' ? null : ctx.unavailable();
  if (why !== null) return unavailable(ex, why);
  const params = match.pattern.exec(url)!.slice(1);
  const query = new URLSearchParams(req.getQuery() ?? '');
  const unknown = unknownParameter(query, match.query);
  if (unknown !== null) return sendError(ex, unknown);
  const run = (body: unknown): void => {
    Promise.resolve(match.handler(ex, ctx, params, body, query)).catch((error: unknown) => failed(ctx, ex, error, 'admin request failed'));
  };
  if (!match.withBody) return run(undefined);
  const contentType = req.getHeader('content-type');
  readBody(res, req.getHeader('content-length'), ctx.limits.bodyBytesMax, (body) => guarded(ctx, ex, () => {
    if (body.kind === 'too-large') return sendError(ex, TOO_LARGE(ctx.limits.bodyBytesMax), [], true);
    if (body.bytes.length === 0) return run({});
    const parsed = parseJson(contentType, body.bytes);
    if (!parsed.ok) return sendError(ex, parsed.error);
    if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
      return sendError(ex, invalid('The request body must be a JSON object.'));
    }
    run(parsed.value);
  }));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
