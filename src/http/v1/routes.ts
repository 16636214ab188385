/**
 * The customer API, /api/v1: one table of its routes and their handlers,
 * and the one way every request goes through it. Handlers read every
 * header synchronously, register onAborted before anything asynchronous,
 * authenticate, and then hand one command to the account's wallet actor;
 * they never touch wallet state. Check order: route, AUTH, BANNED, RATE,
 * VALIDATION, business.
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome } from '../../errors/index.js';
import type { AppContext } from '../context.js';
import { authenticate } from '../guards/authenticate.js';
import { preamble } from '../guards/preamble.js';
import { readBody, type BodyResult } from '../transport/body.js';
import { deliver } from '../transport/deliver.js';
import { idempotencyHeader } from '../transport/header-counts.js';
import { guarded, send, sendError, type Exchange } from '../transport/reply.js';
import type { HttpRequest, HttpResponse } from '../transport/uws.js';
import { cancelOrders, refillOrders, refillStatus } from './lifecycle.js';
import { placeOrder } from './order.js';
import { orderStatus } from './status.js';
import { cancelSubscription, placeSubscription, subscriptionStatus } from './subscription.js';
import { createWebhook, deleteWebhook, listWebhooks, rotateWebhook, webhookRoute, WEBHOOK_PATH, WEBHOOK_ROTATE_PATH, WEBHOOKS_PATH } from './webhooks.js';

export type ApiMethod = 'get' | 'post' | 'delete';

/** What a handler with a body reads of the request before the body arrives. */
interface RequestHead {
  contentType: string;
  /** The Idempotency-Key header (see idempotencyHeader). */
  idempotency: string | null;
  /** The path's `{id}` segment, or null. */
  id: string | null;
}

/** A route's handler: public (no credentials), one without a body (GET, DELETE), or one run once the body is read (POST). */
type Handler =
  | { kind: 'public'; body: (ctx: AppContext) => string }
  | { kind: 'read'; run: (ex: Exchange, ctx: AppContext, account: Account, query: string, id: string | null) => void }
  | { kind: 'body'; run: (ex: Exchange, ctx: AppContext, account: Account, body: BodyResult, head: RequestHead) => void };

const read = (run: Extract<Handler, { kind: 'read' }>['run']): Handler => ({ kind: 'read', run });
const withBody = (run: Extract<Handler, { kind: 'body' }>['run']): Handler => ({ kind: 'body', run });

/**
 * The customer API's routes (`{id}` for a path segment), each method with
 * its handler; test/http/openapi.test.ts holds the OpenAPI document to
 * exactly these.
 */
export const API_ROUTES: Readonly<Record<string, Readonly<Partial<Record<ApiMethod, Handler>>>>> = {
  '/api/v1/balance': { get: read((ex, ctx, account) => deliver(ex, ctx, account, account.actor.send({ kind: 'balance' }))) },
  '/api/v1/services': {
    get: read((ex, ctx, account) => deliver(ex, ctx, account, account.actor.send({ kind: 'touch' }), () => ({ status: 200, body: ctx.catalog.publicListBody() }))),
  },
  '/api/v1/order': { post: withBody((ex, ctx, account, body, head) => placeOrder(ex, ctx, account, body, head.contentType, head.idempotency)) },
  '/api/v1/status': { get: read(orderStatus) },
  '/api/v1/cancel': { post: withBody((ex, ctx, account, body, head) => cancelOrders(ex, ctx, account, body, head.contentType)) },
  '/api/v1/refill': { post: withBody((ex, ctx, account, body, head) => refillOrders(ex, ctx, account, body, head.contentType)) },
  '/api/v1/refill_status': { get: read(refillStatus) },
  '/api/v1/subscription': { post: withBody((ex, ctx, account, body, head) => placeSubscription(ex, ctx, account, body, head.contentType, head.idempotency)) },
  '/api/v1/subscription_status': { get: read(subscriptionStatus) },
  '/api/v1/subscription_cancel': { post: withBody((ex, ctx, account, body, head) => cancelSubscription(ex, ctx, account, body, head.contentType)) },
  '/api/v1/openapi.json': { get: { kind: 'public', body: (ctx) => ctx.openapiBody } },
  [WEBHOOKS_PATH]: {
    get: read(listWebhooks),
    post: withBody((ex, ctx, account, body, head) => createWebhook(ex, ctx, account, body, head.contentType)),
  },
  [WEBHOOK_PATH]: { delete: read((ex, ctx, account, _query, id) => deleteWebhook(ex, ctx, account, id!)) },
  [WEBHOOK_ROTATE_PATH]: { post: withBody((ex, ctx, account, _body, head) => rotateWebhook(ex, ctx, account, head.id!)) },
};

/** The methods a route accepts, in the table's order. */
export function routeMethods(route: Readonly<Partial<Record<ApiMethod, Handler>>>): readonly ApiMethod[] {
  return Object.keys(route) as ApiMethod[];
}

const NOT_FOUND = errorOutcome('NOT_FOUND', 'No such endpoint; see GET /api/v1/openapi.json for the API.');

/** A request to /api/v1/…: its route and method, the request preamble, then its handler once authenticated. */
export function handleV1(ctx: AppContext, ex: Exchange, res: HttpResponse, req: HttpRequest, url: string, method: string): void {
  const hook = webhookRoute(url);
  const path = hook?.path ?? url;
  const route = API_ROUTES[path];
  if (route === undefined) return sendError(ex, NOT_FOUND);
  ex.route = path;
  const handler = Object.hasOwn(route, method) ? route[method as ApiMethod] : undefined;
  if (handler === undefined) {
    const allow = routeMethods(route).map((m) => m.toUpperCase()).join(', ');
    return sendError(ex, errorOutcome('METHOD', `${path} accepts only ${allow}.`), ['Allow', allow]);
  }
  if (handler.kind === 'public') return send(ex, 200, handler.body(ctx));
  const seen = preamble(ex, ctx, req);
  if (seen === null) return;
  const apiKey = seen.apiKey > 1 ? '' : seen.values.apiKey;
  const apiSecret = seen.apiSecret > 1 ? '' : seen.values.apiSecret;
  const id = hook?.id ?? null;
  if (handler.kind === 'read') {
    const account = authenticate(ex, ctx, apiKey, apiSecret, false);
    if (account !== null) handler.run(ex, ctx, account, req.getQuery() ?? '', id);
    return;
  }
  const head: RequestHead = { contentType: seen.values.contentType, idempotency: idempotencyHeader(seen), id };
  // AUTH is answered once the body is read, though the credentials are
  // headers: answering before it would mean closing the connection with
  // the body unread, and a client whose body arrives after the close gets
  // a reset that can lose the 401 (docs/DECISIONS.md, "HTTP").
  readBody(res, seen.values.contentLength, ctx.limits.bodyBytesMax, (body) =>
    guarded(ctx, ex, () => {
      const account = authenticate(ex, ctx, apiKey, apiSecret, body.kind === 'too-large');
      if (account !== null) handler.run(ex, ctx, account, body, head);
    }),
  );
}
