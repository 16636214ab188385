/**
 * The admin API, on its own listener (loopback by default) behind a bearer
 * token. Every mutation of a wallet goes through that wallet's actor, so it
 * is serialised with the customer's orders and logged as an event.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { RATE_LIMIT_MAX } from '../ledger/index.js';
import { errorOutcome, type ErrorOutcome } from '../errors.js';
import { newRequestId } from '../ids.js';
import { microFromJson, multiplyMicro } from '../money/index.js';
import { renderAdminService } from '../render.js';
import { isOrderType, ORDER_TYPE_NAMES, SERVICE_DEFAULTS, type ServiceRecord } from '../ledger/index.js';
import { renderAnswer } from './answer.js';
import { readBody } from './body.js';
import { busy, findAccount, invalid, optionalReason, renderAccount, renderAccountView, unknownField, type AdminHandler } from './admin-common.js';
import { grantPlan, listOrders, ORDER_PARAM, placePanelOrder, setForceJoin, setOrderStatus, showOrder, stats } from './admin-orders.js';
import { metrics, snapshot, verify } from './admin-ops.js';
import { claimOrders, recordProgress } from './admin-order-queue.js';
import { listRefills, setRefillStatus } from './admin-refills.js';
import type { AppContext } from './context.js';
import { parseJson, TOO_LARGE } from './json-request.js';
import { guarded, newExchange, send, sendError, type Exchange } from './reply.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

type Handler = AdminHandler;

interface Route {
  path: string;
  method: string;
  pattern: RegExp;
  withBody: boolean;
  handler: Handler;
}

const ID = '([1-9][0-9]{0,15})';

function route(method: string, path: string, handler: Handler): Route {
  return { path, method, pattern: new RegExp(`^${path.replaceAll(':id', ID).replaceAll(':order', ORDER_PARAM)}$`), withBody: method === 'post' || method === 'patch', handler };
}

const ROUTES: Route[] = [
  route('post', '/admin/v1/accounts', createAccount),
  route('get', '/admin/v1/accounts', listAccounts),
  route('get', '/admin/v1/accounts/:id', showAccount),
  route('patch', '/admin/v1/accounts/:id', patchAccount),
  route('post', '/admin/v1/accounts/:id/credits', adjustCredits),
  route('post', '/admin/v1/accounts/:id/rotate-secret', rotateSecret),
  route('post', '/admin/v1/accounts/:id/v2-key', issueV2Key),
  route('delete', '/admin/v1/accounts/:id/v2-key', revokeV2Key),
  route('post', '/admin/v1/services', createService),
  route('get', '/admin/v1/services', listServices),
  route('patch', '/admin/v1/services/:id', patchService),
  route('get', '/admin/v1/orders', listOrders),
  route('post', '/admin/v1/orders/claim', claimOrders),
  route('post', '/admin/v1/orders/:order/progress', recordProgress),
  route('get', '/admin/v1/refills', listRefills),
  route('post', '/admin/v1/refills/:id/status', setRefillStatus),
  route('get', '/admin/v1/orders/:order', showOrder),
  route('post', '/admin/v1/orders/:order/status', setOrderStatus),
  route('post', '/admin/v1/accounts/:id/orders', placePanelOrder),
  route('post', '/admin/v1/accounts/:id/plan', grantPlan),
  route('post', '/admin/v1/accounts/:id/forcejoin', setForceJoin),
  route('get', '/admin/v1/stats', stats),
  route('post', '/admin/v1/snapshot', snapshot),
  route('get', '/admin/v1/verify', verify),
  route('get', '/metrics', metrics),
];

export function mountAdmin(app: TemplatedApp, ctx: AppContext): void {
  const tokenHash = sha256(`Bearer ${ctx.adminToken}`);
  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const ex = newExchange(res, newRequestId(), ctx.metrics);
    guarded(ctx, ex, () => handleAdmin(ctx, ex, res, req, tokenHash));
  });
}

function handleAdmin(ctx: AppContext, ex: Exchange, res: HttpResponse, req: HttpRequest, tokenHash: Buffer): void {
  const url = req.getUrl();
  const method = req.getMethod();
  ex.head = method === 'head';
  if (url === '/healthz' && method === 'get') return send(ex, 200, '{"ok":true}');
  // The token first, before the route: without it every request gets the
  // same 401, so an anonymous client cannot map the routes and methods.
  if (!timingSafeEqual(sha256(req.getHeader('authorization')), tokenHash)) {
    return sendError(ex, errorOutcome('AUTH', 'Send the admin token as Authorization: Bearer <token>.'));
  }
  if (url === '/healthz') return sendError(ex, errorOutcome('METHOD', '/healthz accepts only GET.'), ['Allow', 'GET']);
  const matching = ROUTES.filter((r) => r.pattern.test(url));
  if (matching.length === 0) return sendError(ex, errorOutcome('NOT_FOUND', 'No such admin endpoint.'));
  const match = matching.find((r) => r.method === method);
  if (match === undefined) {
    const allow = matching.map((r) => r.method.toUpperCase()).join(', ');
    return sendError(ex, errorOutcome('METHOD', `${url} accepts only ${allow}.`), ['Allow', allow]);
  }
  ex.route = match.path;
  const params = match.pattern.exec(url)!.slice(1);
  const query = new URLSearchParams(req.getQuery() ?? '');
  const run = (body: unknown): void => {
    Promise.resolve(match.handler(ex, ctx, params, body, query)).catch((error: unknown) => {
      ctx.log.error({ err: error, url }, 'admin request failed');
      sendError(ex, errorOutcome('INTERNAL', 'The server failed to complete this request.'));
    });
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

async function createAccount(ex: Exchange, ctx: AppContext, _params: string[], body: unknown): Promise<void> {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['name']);
  if (bad !== null) return sendError(ex, bad);
  if (typeof b['name'] !== 'string' || b['name'].trim() === '' || b['name'].length > 200) {
    return sendError(ex, invalid("Field 'name' is required: a non-empty string of at most 200 characters."));
  }
  const { account, apiSecret } = await ctx.registry.create(b['name'].trim());
  send(
    ex,
    201,
    `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())},"api_key":"${account.profile.apiKey}","api_secret":"${apiSecret}"}`,
  );
}

async function listAccounts(ex: Exchange, ctx: AppContext): Promise<void> {
  await ctx.wal.flushed();
  const now = ctx.clock.wallMs();
  const parts: string[] = [];
  for (const view of ctx.registry.list()) parts.push(renderAccountView(view.profile, view.wallet, now));
  send(ex, 200, `{"ok":true,"accounts":[${parts.join(',')}]}`);
}

async function showAccount(ex: Exchange, ctx: AppContext, [id]: string[]): Promise<void> {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  // Report only durable state: wait for the wallet's pending events.
  await account.actor.settled();
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())}}`);
}

async function patchAccount(ex: Exchange, ctx: AppContext, [id]: string[], body: unknown): Promise<void> {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['banned', 'rate_limit_per_minute', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const banned = b['banned'];
  const limit = b['rate_limit_per_minute'];
  if (banned !== undefined && typeof banned !== 'boolean') return sendError(ex, invalid("Field 'banned' must be true or false."));
  if (limit !== undefined && (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > RATE_LIMIT_MAX)) {
    return sendError(ex, invalid(`Field 'rate_limit_per_minute' must be an integer from 1 to ${RATE_LIMIT_MAX}.`));
  }
  if (banned === undefined && limit === undefined) return sendError(ex, invalid('Send at least one of banned, rate_limit_per_minute.'));
  const command: { kind: 'update'; banned?: boolean; rateLimitPerMinute?: number; reason?: string } = { kind: 'update' };
  if (reason.reason !== undefined) command.reason = reason.reason;
  if (banned !== undefined) command.banned = banned as boolean;
  if (limit !== undefined) command.rateLimitPerMinute = limit as number;
  const delivery = account.actor.send(command);
  if (delivery === null) return busy(ex);
  await delivery.durable;
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())}}`);
}

async function adjustCredits(ex: Exchange, ctx: AppContext, [id]: string[], body: unknown): Promise<void> {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['amount', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const amount = microFromJson(b['amount']);
  if (amount === null || amount === 0) {
    return sendError(ex, invalid("Field 'amount' must be a non-zero decimal number of credits with at most 6 decimal places."));
  }
  const reason = b['reason'];
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 500) {
    return sendError(ex, invalid("Field 'reason' is required: a non-empty string of at most 500 characters."));
  }
  const delivery = account.actor.send({ kind: 'credit', amount, reason: reason.trim() });
  if (delivery === null) return busy(ex);
  await delivery.durable;
  const outcome = delivery.decision.outcome;
  if (outcome.kind === 'error') return sendError(ex, outcome.error);
  const answer = renderAnswer(outcome, ex.requestId);
  send(ex, answer.status, answer.body);
}

async function rotateSecret(ex: Exchange, ctx: AppContext, [id]: string[]): Promise<void> {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const apiSecret = await ctx.registry.rotateSecret(account);
  send(ex, 200, `{"ok":true,"api_key":"${account.profile.apiKey}","api_secret":"${apiSecret}"}`);
}

/** POST /admin/v1/accounts/{id}/v2-key: issues (or rotates) the API v2 key; the key is in this answer only. */
async function issueV2Key(ex: Exchange, ctx: AppContext, [id]: string[]): Promise<void> {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const key = await ctx.registry.issueV2Key(account);
  send(ex, 200, `{"ok":true,"account":${account.profile.id},"v2_key":"${key}"}`);
}

/** DELETE /admin/v1/accounts/{id}/v2-key: the account's API v2 key stops working. */
async function revokeV2Key(ex: Exchange, ctx: AppContext, [id]: string[]): Promise<void> {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  await ctx.registry.revokeV2Key(account);
  send(ex, 200, `{"ok":true,"account":${account.profile.id}}`);
}

function listServices(ex: Exchange, ctx: AppContext): void {
  const services = ctx.catalog.all().sort((a, b) => a.id - b.id);
  send(ex, 200, `{"ok":true,"services":[${services.map(renderAdminService).join(',')}]}`);
}

const SERVICE_FIELDS = ['platform', 'name', 'rate', 'min', 'max', 'enabled', 'category', 'type', 'refill', 'refill_days', 'cancel', 'dripfeed', 'description', 'reason'];
/** The longest refill window an operator may offer (ten years). */
export const REFILL_DAYS_MAX = 3650;
const DESCRIPTION_CHARS_MAX = 2000;

/** Applies the body's fields to a service, checking each; returns an error value to refuse. */
function buildService(b: Record<string, unknown>, current: ServiceRecord | null, id: number): ServiceRecord | ErrorOutcome {
  const next: ServiceRecord =
    current === null ? { id, platform: '', name: '', rate: 0, min: 0, max: 0, enabled: true, ...SERVICE_DEFAULTS } : { ...current };
  for (const field of ['platform', 'name'] as const) {
    const value = b[field];
    if (value === undefined && current !== null) continue;
    if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
      return invalid(`Field '${field}' must be a non-empty string of at most 200 characters.`);
    }
    next[field] = value.trim();
  }
  if (b['rate'] !== undefined || current === null) {
    const rate = microFromJson(b['rate']);
    if (rate === null || rate < 0) return invalid("Field 'rate' must be a non-negative decimal number with at most 6 decimal places.");
    next.rate = rate;
  }
  for (const field of ['min', 'max'] as const) {
    const value = b[field];
    if (value === undefined && current !== null) continue;
    if (!Number.isSafeInteger(value) || (value as number) < 1) return invalid(`Field '${field}' must be a positive integer.`);
    next[field] = value as number;
  }
  if (b['enabled'] !== undefined) {
    if (typeof b['enabled'] !== 'boolean') return invalid("Field 'enabled' must be true or false.");
    next.enabled = b['enabled'];
  }
  for (const [field, key, charsMax] of [['category', 'category', 200], ['description', 'description', DESCRIPTION_CHARS_MAX]] as const) {
    const value = b[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length > charsMax) return invalid(`Field '${field}' must be a string of at most ${charsMax} characters.`);
    next[key] = value.trim();
  }
  if (b['type'] !== undefined) {
    if (!isOrderType(b['type'])) return invalid(`Field 'type' must be one of ${ORDER_TYPE_NAMES.join(', ')}.`);
    next.type = b['type'];
  }
  for (const field of ['refill', 'cancel', 'dripfeed'] as const) {
    if (b[field] === undefined) continue;
    if (typeof b[field] !== 'boolean') return invalid(`Field '${field}' must be true or false.`);
    next[field] = b[field];
  }
  if (b['refill_days'] !== undefined) {
    const days = b['refill_days'];
    if (!Number.isSafeInteger(days) || (days as number) < 1 || (days as number) > REFILL_DAYS_MAX) {
      return invalid(`Field 'refill_days' must be an integer from 1 to ${REFILL_DAYS_MAX}.`);
    }
    next.refillDays = days as number;
  }
  if (next.min > next.max) return invalid(`min (${next.min}) must not exceed max (${next.max}).`);
  if (multiplyMicro(next.max, next.rate) === null) {
    return invalid('max × rate is larger than the largest supported charge; lower the rate or the max.');
  }
  return next;
}

async function saveService(ex: Exchange, ctx: AppContext, id: number | null, body: unknown): Promise<void> {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, SERVICE_FIELDS);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const saved = await ctx.catalog.save<ErrorOutcome>(id, (current, nextId) => buildService(b, current, nextId), reason.reason);
  if (saved === null) return sendError(ex, errorOutcome('NOT_FOUND', `No service with id ${id}.`));
  if ('code' in saved) return sendError(ex, saved);
  send(ex, id === null ? 201 : 200, `{"ok":true,"service":${renderAdminService(saved)}}`);
}

function createService(ex: Exchange, ctx: AppContext, _params: string[], body: unknown): Promise<void> {
  return saveService(ex, ctx, null, body);
}

function patchService(ex: Exchange, ctx: AppContext, [id]: string[], body: unknown): Promise<void> {
  return saveService(ex, ctx, Number(id), body);
}
