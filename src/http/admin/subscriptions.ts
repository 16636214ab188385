/**
 * The operator's subscriptions: list them (by account and status), show
 * one, report a post the processing system found (its order is placed and
 * charged in the subscription's wallet actor, or refused for funds, which
 * pauses the subscription), and cancel one. A post carries the processing
 * system's id for it (`post`): a repeated report of the same post answers
 * the order the first one placed, with `replayed: true`, and charges
 * nothing.
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome } from '../../errors/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { expiryText, isPostId, isSubscriptionStatus, POST_ID_CHARS_MAX, SUBSCRIPTION_STATUSES, type SubscriptionRecord } from '../../ledger/index.js';
import { formatMicro, formatPer1000 } from '../../money/index.js';
import { assert } from '../../platform/index.js';
import { checkOrderInput } from '../orders/order-input.js';
import { send, sendError, type Exchange } from '../transport/reply.js';
import type { AppContext } from '../context.js';
import { applied, idCursor, invalid, optionalReason, pageLimit, unknownField, type AdminHandler } from './common.js';
import { renderAdminOrder } from './render.js';
import { scanPage } from './scan.js';

/** The query parameters of the listing. */
export const SUBSCRIPTION_LIST_QUERY = ['account', 'status', 'limit', 'cursor'] as const;

/** A subscription as the operator sees it: its terms, the rate it fixed, its status and posts, its latest orders' numbers. */
export function renderAdminSubscription(s: SubscriptionRecord): string {
  return (
    `{"id":${s.id},"account":${s.account},"service":${s.service},"username":${JSON.stringify(s.username)},"min":${s.min},"max":${s.max},` +
    `"posts":${s.posts},"old_posts":${s.oldPosts},"delay":${s.delayMinutes},"expiry":${s.expiryMs === null ? null : `"${expiryText(s.expiryMs)}"`},` +
    `"expires_at":${s.expiryMs === null ? null : `"${new Date(s.expiryMs).toISOString()}"`},"rate":${formatMicro(s.rate)},"rate_per_1000":${formatPer1000(s.rate)},` +
    `"status":"${s.status}","posts_done":${s.postsDone},"orders":[${s.orders.join(',')}],"channel":"${s.channel}",` +
    `"created_at":"${new Date(s.createdAtMs).toISOString()}","updated_at":"${new Date(s.updatedAtMs).toISOString()}"}`
  );
}

/**
 * GET /admin/v1/subscriptions?account=ID&status=Active&limit=100&cursor=ID —
 * oldest first (ids grow with time); the cursor is the last id examined.
 * A filtered page examines at most the scan budget (scan.ts).
 */
export const listSubscriptions: AdminHandler = async (ex, ctx, _params, _body, query) => {
  const status = query.get('status');
  if (status !== null && !isSubscriptionStatus(status)) return sendError(ex, invalid(`status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}.`));
  const accountText = query.get('account');
  const account = accountText === null ? null : parsePositiveId(accountText);
  if (accountText !== null && account === null) return sendError(ex, invalid('account must be an account id, a positive integer.'));
  const limit = pageLimit(query);
  if (!limit.ok) return sendError(ex, limit.error);
  const cursor = idCursor(query);
  if (!cursor.ok) return sendError(ex, cursor.error);
  await ctx.wal.flushed();
  const entries = ctx.store.tables.subscriptions.getRange({ start: (cursor.after ?? 0) + 1 });
  const pick = ({ value }: { value: unknown }): SubscriptionRecord | undefined => {
    const s = value as SubscriptionRecord;
    return (status === null || s.status === status) && (account === null || s.account === account) ? s : undefined;
  };
  const page = scanPage(entries, pick, limit.limit, ctx.limits.scanEntriesMax);
  const next = page.resumeAfter === null ? 'null' : `"${page.resumeAfter.key as number}"`;
  send(ex, 200, `{"ok":true,"subscriptions":[${page.items.map(renderAdminSubscription).join(',')}],"next_cursor":${next}}`);
};

/** The durable subscription and its account, or NOT_FOUND sent. */
async function subscriptionOf(ex: Exchange, ctx: AppContext, id: string): Promise<{ sub: SubscriptionRecord; account: Account } | null> {
  await ctx.wal.flushed();
  const sub = ctx.store.tables.subscriptions.get(Number(id)) as SubscriptionRecord | undefined;
  const account = sub === undefined ? undefined : ctx.registry.get(sub.account);
  if (sub !== undefined && account !== undefined) return { sub, account };
  sendError(ex, errorOutcome('NOT_FOUND', `No subscription with id ${id}.`));
  return null;
}

/** GET /admin/v1/subscriptions/{id} */
export const showSubscription: AdminHandler = async (ex, ctx, [id]) => {
  const found = await subscriptionOf(ex, ctx, id!);
  if (found !== null) send(ex, 200, `{"ok":true,"subscription":${renderAdminSubscription(found.sub)}}`);
};

/** POST /admin/v1/subscriptions/{id}/posts {post, link, quantity} — the processing system found a post to deliver to. */
export const reportPost: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['post', 'link', 'quantity']);
  if (bad !== null) return sendError(ex, bad);
  if (!isPostId(b['post'])) return sendError(ex, invalid(`Field 'post' is required: the post's id, 1 to ${POST_ID_CHARS_MAX} printable characters without spaces.`));
  // The link and quantity are checked as an order's target and quantity are.
  const checked = checkOrderInput({ service: 1, target: b['link'], ...(b['quantity'] === undefined ? {} : { quantity: b['quantity'] }) }, ctx.limits.targetCharsMax, () => null);
  if (!checked.ok) return sendError(ex, invalid(checked.error.message.replaceAll("'target'", "'link'")));
  if (checked.payload.quantity === undefined) return sendError(ex, invalid("Field 'quantity' is required: the units to deliver to this post, within the subscription's min..max."));
  const found = await subscriptionOf(ex, ctx, id!);
  if (found === null) return;
  const { account } = found;
  const delivery = account.actor.send({ kind: 'subscription-post', subscriptionId: found.sub.id, post: b['post'], link: checked.payload.target, quantity: checked.payload.quantity });
  const decision = await applied(ex, delivery);
  if (decision === null) return;
  const outcome = decision.outcome;
  assert(outcome.kind === 'placed', 'an accepted post answers its order', outcome.kind);
  const replayed = decision.events.length === 0;
  send(ex, replayed ? 200 : 201, `{"ok":true,"order":${renderAdminOrder(outcome.order)},"replayed":${replayed},"credits":${formatMicro(account.actor.state.wallet.credits)}}`);
};

/** POST /admin/v1/subscriptions/{id}/cancel {reason?} */
export const cancelSubscription: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const found = await subscriptionOf(ex, ctx, id!);
  if (found === null) return;
  const command = { kind: 'subscription-status', subscriptionId: found.sub.id, to: 'Canceled', reason: reason.reason ?? 'canceled by the operator' } as const;
  const decision = await applied(ex, found.account.actor.send(command));
  if (decision === null) return;
  send(ex, 200, `{"ok":true,"subscription":${renderAdminSubscription(decision.subscription!)}}`);
};
