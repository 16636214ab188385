/**
 * The operator's webhook endpoints: every endpoint (or one account's, or
 * only the failing ones), a page at a time, with what each still holds, registration for an account, enable /
 * disable, secret rotation, deletion, the replay of a failing endpoint and
 * its delivery log. Changes are answered once durable.
 */
import { errorOutcome } from '../../errors/index.js';
import { readEndpointInput, renderDeliveryAttempt, renderWebhook, type WebhookEndpoint } from '../../webhooks/index.js';
import type { AppContext } from '../context.js';
import { send, sendError, type Exchange } from '../transport/reply.js';
import { findAccount, idCursor, invalid, pageLimit, unknownField, type AdminHandler } from './common.js';
import { scanPage } from './scan.js';
import { DELIVERY_LOG_PAGE_DEFAULT, DELIVERY_LOG_PAGE_MAX } from '../../ops/index.js';

function found(ex: Exchange, ctx: AppContext, id: string): WebhookEndpoint | null {
  const endpoint = ctx.webhooks.directory.get(Number(id));
  if (endpoint === undefined) sendError(ex, errorOutcome('NOT_FOUND', `No webhook endpoint with id ${id}.`));
  return endpoint ?? null;
}

/** An endpoint with its account and what it holds: messages not yet delivered and the oldest one's time. */
function withBacklog(ctx: AppContext, e: WebhookEndpoint, secret?: string): string {
  const held = ctx.webhooks.dispatcher.heldCount(e.id);
  // Counted in memory: an endpoint that holds nothing costs no read of its rows.
  const oldest = held === 0 ? undefined : ctx.webhooks.dispatcher.held(e.id, 1)[0];
  return (
    renderWebhook(e, { account: true, ...(secret === undefined ? {} : { secret }) }).slice(0, -1) +
    `,"held":${held},"oldest_held_at":${oldest === undefined ? 'null' : `"${new Date(oldest.atMs).toISOString()}"`}}`
  );
}

/**
 * GET /admin/v1/webhooks?account=ID&failing=true&limit=100&cursor=ID — in
 * id order, a page at a time; the cursor is the last id examined. One
 * account's endpoints come from the directory's index of them (at most
 * WEBHOOKS_PER_ACCOUNT), every endpoint from the `webhooks` table from the
 * cursor on. `failing` skips endpoints, so a request examines at most the
 * scan budget of them (scan.ts): a page may hold fewer than `limit` while
 * next_cursor is not null.
 */
export const listWebhooks: AdminHandler = async (ex, ctx, _params, _body, query) => {
  const accountText = query.get('account');
  if (accountText !== null && !/^[1-9][0-9]{0,15}$/.test(accountText)) return sendError(ex, invalid('account must be an account id.'));
  const failing = query.get('failing');
  if (failing !== null && failing !== 'true' && failing !== 'false') return sendError(ex, invalid('failing must be true or false.'));
  const limit = pageLimit(query);
  if (!limit.ok) return sendError(ex, limit.error);
  const cursor = idCursor(query);
  if (!cursor.ok) return sendError(ex, cursor.error);
  await ctx.wal.flushed();
  const after = cursor.after ?? 0;
  const directory = ctx.webhooks.directory;
  const ids: Iterable<number> =
    accountText === null
      ? (ctx.store.tables.webhooks.getKeys({ start: after + 1 }) as Iterable<number>)
      : directory
          .forAccount(Number(accountText))
          .map((e) => e.id)
          .filter((id) => id > after);
  const pick = (id: number): WebhookEndpoint | undefined => {
    // Not there: deleted since its row was read (the directory changes as a deletion is appended).
    const e = directory.get(id);
    return e !== undefined && (failing === null || (e.failingSinceMs !== null) === (failing === 'true')) ? e : undefined;
  };
  const page = scanPage(ids, pick, limit.limit, ctx.limits.scanEntriesMax);
  const next = page.resumeAfter === null ? 'null' : `"${page.resumeAfter}"`;
  send(ex, 200, `{"ok":true,"webhooks":[${page.items.map((e) => withBacklog(ctx, e)).join(',')}],"next_cursor":${next}}`);
};

/** POST /admin/v1/accounts/{id}/webhooks {url, events, enabled?}: the secret is in this answer only. */
export const createWebhook: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const input = readEndpointInput(body, ctx.webhooks.rules);
  if (!input.ok) return sendError(ex, invalid(input.message));
  const directory = ctx.webhooks.directory;
  if (directory.forAccount(account.profile.id).length >= directory.perAccountMax) {
    return sendError(ex, invalid(`Account ${account.profile.id} already has ${directory.perAccountMax} webhook endpoints, the most allowed (WEBHOOKS_PER_ACCOUNT).`));
  }
  const { endpoint, secret } = await directory.create(account.profile.id, input.url, input.events, input.enabled);
  send(ex, 201, `{"ok":true,"webhook":${withBacklog(ctx, endpoint, secret)}}`);
};

/** PATCH /admin/v1/webhooks/{id} {enabled} */
export const patchWebhook: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['enabled']);
  if (bad !== null) return sendError(ex, bad);
  if (typeof b['enabled'] !== 'boolean') return sendError(ex, invalid("Field 'enabled' must be true or false."));
  const endpoint = found(ex, ctx, id!);
  if (endpoint === null) return;
  const next = await ctx.webhooks.setEnabled(endpoint, b['enabled']);
  send(ex, 200, `{"ok":true,"webhook":${withBacklog(ctx, next)}}`);
};

/** POST /admin/v1/webhooks/{id}/rotate: a new secret, in this answer only; the old one signs beside it for 24 hours. */
export const rotateWebhook: AdminHandler = async (ex, ctx, [id]) => {
  const endpoint = found(ex, ctx, id!);
  if (endpoint === null) return;
  const { endpoint: next, secret } = await ctx.webhooks.directory.rotate(endpoint);
  send(ex, 200, `{"ok":true,"webhook":${withBacklog(ctx, next, secret)}}`);
};

/** DELETE /admin/v1/webhooks/{id}: what it holds is dropped. */
export const deleteWebhook: AdminHandler = async (ex, ctx, [id]) => {
  const endpoint = found(ex, ctx, id!);
  if (endpoint === null) return;
  await ctx.webhooks.remove(endpoint);
  send(ex, 200, `{"ok":true,"deleted":${endpoint.id}}`);
};

/** POST /admin/v1/webhooks/{id}/replay: clears the failing mark; held messages are sent again at once, oldest first. */
export const replayWebhook: AdminHandler = async (ex, ctx, [id]) => {
  const endpoint = found(ex, ctx, id!);
  if (endpoint === null) return;
  const next = await ctx.webhooks.replay(endpoint);
  send(ex, 200, `{"ok":true,"webhook":${withBacklog(ctx, next)}}`);
};

/** GET /admin/v1/webhooks/{id}/deliveries?limit=50: the endpoint's last attempts, newest first. */
export const listDeliveries: AdminHandler = async (ex, ctx, [id], _body, query) => {
  const limitText = query.get('limit') ?? String(DELIVERY_LOG_PAGE_DEFAULT);
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > DELIVERY_LOG_PAGE_MAX) return sendError(ex, invalid(`limit must be an integer from 1 to ${DELIVERY_LOG_PAGE_MAX}.`));
  const endpoint = found(ex, ctx, id!);
  if (endpoint === null) return;
  await ctx.wal.flushed();
  const items = ctx.webhooks.dispatcher.log(endpoint.id, limit).map(renderDeliveryAttempt);
  send(ex, 200, `{"ok":true,"webhook":${endpoint.id},"deliveries":[${items.join(',')}]}`);
};
