/**
 * Admin endpoints for accounts: create, list, show, change (ban, rate
 * limit), credits, credentials (API secret, API v2 key), the Unlimited plan
 * and force-join settings. Every change of a wallet goes through that
 * wallet's actor, so it is serialised with the customer's orders and logged.
 */
import { PLAN_MONTHS_MAX, RATE_LIMIT_MAX } from '../../ledger/index.js';
import { microFromJson } from '../../money/index.js';
import { renderAccount, renderAccountView } from './render.js';
import { applied, findAccount, idCursor, invalid, optionalReason, pageLimit, unknownField, type AdminHandler } from './common.js';
import { renderAnswer } from '../transport/answer.js';
import { send, sendError } from '../transport/reply.js';
import { NAME_CHARS_MAX, REASON_CHARS_MAX } from '../limits.js';

export const createAccount: AdminHandler = async (ex, ctx, _params, body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['name']);
  if (bad !== null) return sendError(ex, bad);
  if (typeof b['name'] !== 'string' || b['name'].trim() === '' || b['name'].length > NAME_CHARS_MAX) {
    return sendError(ex, invalid(`Field 'name' is required: a non-empty string of at most ${NAME_CHARS_MAX} characters.`));
  }
  const { account, apiSecret } = await ctx.registry.create(b['name'].trim());
  send(
    ex,
    201,
    `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())},"api_key":"${account.profile.apiKey}","api_secret":"${apiSecret}"}`,
  );
};

/**
 * GET /admin/v1/accounts?limit=100&cursor=ID — in id order, a page at a
 * time; the cursor is the last id of the previous page. One page is
 * bounded work on the event loop, however many accounts there are.
 */
export const listAccounts: AdminHandler = async (ex, ctx, _params, _body, query) => {
  const limit = pageLimit(query);
  if (!limit.ok) return sendError(ex, limit.error);
  const cursor = idCursor(query);
  if (!cursor.ok) return sendError(ex, cursor.error);
  await ctx.wal.flushed();
  const now = ctx.clock.wallMs();
  // One more than the page, to know whether another page follows.
  const views = ctx.registry.list((cursor.after ?? 0) + 1, limit.limit + 1);
  const more = views.length > limit.limit;
  if (more) views.pop();
  const parts = views.map((view) => renderAccountView(view.profile, view.wallet, now));
  const next = more ? `"${views[views.length - 1]!.profile.id}"` : 'null';
  send(ex, 200, `{"ok":true,"accounts":[${parts.join(',')}],"next_cursor":${next}}`);
};

export const showAccount: AdminHandler = async (ex, ctx, [id]) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  // Report only durable state: wait for the wallet's pending events.
  await account.actor.settled();
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())}}`);
};

export const patchAccount: AdminHandler = async (ex, ctx, [id], body) => {
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
  if ((await applied(ex, account.actor.send(command))) === null) return;
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())}}`);
};

export const adjustCredits: AdminHandler = async (ex, ctx, [id], body) => {
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
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > REASON_CHARS_MAX) {
    return sendError(ex, invalid(`Field 'reason' is required: a non-empty string of at most ${REASON_CHARS_MAX} characters.`));
  }
  const decision = await applied(ex, account.actor.send({ kind: 'credit', amount, reason: reason.trim() }));
  if (decision === null) return;
  const answer = renderAnswer(decision.outcome, ex.requestId);
  send(ex, answer.status, answer.body);
};

export const rotateSecret: AdminHandler = async (ex, ctx, [id]) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const apiSecret = await ctx.registry.rotateSecret(account);
  send(ex, 200, `{"ok":true,"api_key":"${account.profile.apiKey}","api_secret":"${apiSecret}"}`);
};

/** POST /admin/v1/accounts/{id}/v2-key: issues (or rotates) the API v2 key; the key is in this answer only. */
export const issueV2Key: AdminHandler = async (ex, ctx, [id]) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const key = await ctx.registry.issueV2Key(account);
  send(ex, 200, `{"ok":true,"account":${account.profile.id},"v2_key":"${key}"}`);
};

/** DELETE /admin/v1/accounts/{id}/v2-key: the account's API v2 key stops working. */
export const revokeV2Key: AdminHandler = async (ex, ctx, [id]) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  await ctx.registry.revokeV2Key(account);
  send(ex, 200, `{"ok":true,"account":${account.profile.id}}`);
};

/** POST /admin/v1/accounts/{id}/plan {months} */
export const grantPlan: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['months', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  if (!Number.isSafeInteger(b['months'])) return sendError(ex, invalid(`months must be an integer from 1 to ${PLAN_MONTHS_MAX}.`));
  const decision = await applied(
    ex,
    account.actor.send({ kind: 'grant-plan', months: b['months'] as number, ...(reason.reason === undefined ? {} : { reason: reason.reason }) }),
  );
  if (decision === null) return;
  const granted = decision.events[0];
  const price = granted?.type === 'plan.granted' ? granted.priceInr : 0;
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())},"price_inr":${price}}`);
};

/** POST /admin/v1/accounts/{id}/forcejoin {telegram_user_id?, verified?, exempt?} */
export const setForceJoin: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['telegram_user_id', 'verified', 'exempt', 'reason']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const user = b['telegram_user_id'];
  if (user !== undefined && user !== null && (!Number.isSafeInteger(user) || (user as number) < 1)) {
    return sendError(ex, invalid('telegram_user_id must be a positive integer or null.'));
  }
  for (const flag of ['verified', 'exempt']) {
    if (b[flag] !== undefined && typeof b[flag] !== 'boolean') return sendError(ex, invalid(`${flag} must be true or false.`));
  }
  if (user === undefined && b['verified'] === undefined && b['exempt'] === undefined) {
    return sendError(ex, invalid('Send at least one of telegram_user_id, verified, exempt.'));
  }
  await ctx.registry.updateForceJoin(account, {
    ...(user === undefined ? {} : { telegramUserId: user as number | null }),
    ...(b['verified'] === undefined ? {} : { verified: b['verified'] as boolean }),
    ...(b['exempt'] === undefined ? {} : { exempt: b['exempt'] as boolean }),
    ...(reason.reason === undefined ? {} : { reason: reason.reason }),
  });
  ctx.forceJoinChanged(account.profile.id);
  send(ex, 200, `{"ok":true,"account":${renderAccount(account, ctx.clock.wallMs())}}`);
};
