/**
 * The customer's webhook endpoints on /api/v1/webhooks: register, list,
 * rotate the secret, delete. Each request is one request for the rate limit
 * (a `touch` checks the ban and takes a token, as every v1 route does), then
 * VALIDATION, then the change, answered once it is durable. The secret is in
 * the answer that creates or rotates it, and never again.
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { reportFault } from '../../platform/index.js';
import { readEndpointInput, renderWebhook, type WebhookEndpoint } from '../../webhooks/index.js';
import type { BodyResult } from '../transport/body.js';
import type { AppContext } from '../context.js';
import { deliver, unavailable } from '../transport/deliver.js';
import { parseJson, TOO_LARGE } from '../transport/json-request.js';
import { errorAnswer, guarded, type Exchange } from '../transport/reply.js';

export const WEBHOOKS_PATH = '/api/v1/webhooks';
export const WEBHOOK_PATH = '/api/v1/webhooks/{id}';
export const WEBHOOK_ROTATE_PATH = '/api/v1/webhooks/{id}/rotate';

const ITEM = /^\/api\/v1\/webhooks\/([^/]*)(\/rotate)?$/;
const ID = /^[1-9][0-9]{0,15}$/;

/** The route pattern of a webhooks URL and the id segment it carries, or null for any other URL. */
export function webhookRoute(url: string): { path: string; id: string | null } | null {
  if (url === WEBHOOKS_PATH) return { path: WEBHOOKS_PATH, id: null };
  const m = ITEM.exec(url);
  if (m === null) return null;
  return { path: m[2] === undefined ? WEBHOOK_PATH : WEBHOOK_ROTATE_PATH, id: m[1]! };
}

type Answer = { status: number; body: string };

/** The rate-limit token first; then `run`, whose answer goes out with the rate-limit headers. */
function admitted(ex: Exchange, ctx: AppContext, account: Account, run: () => Promise<Answer>): void {
  const touch = account.actor.send({ kind: 'touch' });
  if (touch === null) return unavailable(ex, 'This wallet has too many requests in flight; retry in a second.');
  if (touch.decision.outcome.kind !== 'pass') return deliver(ex, ctx, account, touch);
  run().then(
    (answer) => guarded(ctx, ex, () => deliver(ex, ctx, account, touch, () => answer)),
    // A failed commit stops the process (fail-stop), and so does a broken invariant: this request is not answered.
    (error: unknown) => void reportFault(ctx, error, 'a webhook change failed'),
  );
}

const refuse = (ex: Exchange, error: ErrorOutcome): Answer => errorAnswer(ex, error);
const invalid = (message: string): ErrorOutcome => errorOutcome('VALIDATION', message);
const NOT_FOUND = errorOutcome('NOT_FOUND', 'No webhook endpoint with this id exists on this account.');

/** POST /api/v1/webhooks {url, events, enabled?} */
export function createWebhook(ex: Exchange, ctx: AppContext, account: Account, body: BodyResult, contentType: string): void {
  admitted(ex, ctx, account, async () => {
    if (body.kind === 'too-large') return refuse(ex, TOO_LARGE(ctx.limits.bodyBytesMax));
    const parsed = parseJson(contentType, body.bytes);
    if (!parsed.ok) return refuse(ex, parsed.error);
    const input = readEndpointInput(parsed.value, ctx.webhooks.rules);
    if (!input.ok) return refuse(ex, invalid(input.message));
    const id = account.profile.id;
    const max = ctx.webhooks.directory.perAccountMax;
    if (ctx.webhooks.directory.forAccount(id).length >= max) {
      return refuse(ex, invalid(`This account already has ${max} webhook endpoints, the most allowed; delete one before adding another.`));
    }
    const { endpoint, secret } = await ctx.webhooks.directory.create(id, input.url, input.events, input.enabled);
    return { status: 201, body: `{"ok":true,"webhook":${renderWebhook(endpoint, { secret })}}` };
  });
}

/** GET /api/v1/webhooks: the account's endpoints, without secrets. */
export function listWebhooks(ex: Exchange, ctx: AppContext, account: Account): void {
  admitted(ex, ctx, account, async () => {
    // Only durable registrations are shown.
    await ctx.wal.flushed();
    const items = ctx.webhooks.directory.forAccount(account.profile.id).map((e) => renderWebhook(e));
    return { status: 200, body: `{"ok":true,"webhooks":[${items.join(',')}]}` };
  });
}

/** POST /api/v1/webhooks/{id}/rotate: a new secret (shown once); the old one still signs beside it for 24 hours. */
export function rotateWebhook(ex: Exchange, ctx: AppContext, account: Account, id: string): void {
  admitted(ex, ctx, account, async () => {
    const found = ownEndpoint(ctx, account, id);
    if ('code' in found) return refuse(ex, found);
    const { endpoint, secret } = await ctx.webhooks.directory.rotate(found);
    return { status: 200, body: `{"ok":true,"webhook":${renderWebhook(endpoint, { secret })}}` };
  });
}

/** DELETE /api/v1/webhooks/{id}: no message is sent to it after this answer. */
export function deleteWebhook(ex: Exchange, ctx: AppContext, account: Account, id: string): void {
  admitted(ex, ctx, account, async () => {
    const found = ownEndpoint(ctx, account, id);
    if ('code' in found) return refuse(ex, found);
    await ctx.webhooks.remove(found);
    return { status: 200, body: `{"ok":true,"deleted":${found.id}}` };
  });
}

function ownEndpoint(ctx: AppContext, account: Account, id: string): WebhookEndpoint | ErrorOutcome {
  if (!ID.test(id)) return invalid('That is not a webhook id; ids are the positive integers POST /api/v1/webhooks returns.');
  const endpoint = ctx.webhooks.directory.get(Number(id));
  // Another account's endpoint is not found, never forbidden: ids reveal nothing.
  if (endpoint === undefined || endpoint.account !== account.profile.id) return NOT_FOUND;
  return endpoint;
}
