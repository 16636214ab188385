/**
 * API v1's subscriptions, in v1's own style: `POST /api/v1/subscription`
 * places one (201, the subscription; an Idempotency-Key works as on
 * `/order`), `GET /api/v1/subscription_status?subscription=ID` reads one,
 * `POST /api/v1/subscription_cancel {"subscription": ID}` cancels one. A
 * subscription's id is its number, the id API v2, the admin API and the
 * CLI use for it too (docs/DECISIONS.md, "Subscriptions"). The terms are
 * read by the reader API v2's `add` uses and placed by the same ledger
 * command, so every rule and sentence about them is one.
 */
import type { Account, Delivery } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { parsePositiveId } from '../../ids/index.js';
import type { OrderRecord, SubscribeRequest, SubscriptionRecord } from '../../ledger/index.js';
import { assert } from '../../platform/index.js';
import { renderSubscription } from '../../wire/index.js';
import type { AppContext } from '../context.js';
import { admit } from '../lifecycle/admit.js';
import { ownSubscription } from '../lifecycle/own-records.js';
import { compile, SubscriptionBody, SubscriptionCancelBody } from '../orders/schemas.js';
import { refusedSubscription, subscribeRequest, submitSubscription } from '../orders/subscription-submit.js';
import type { Answer } from '../transport/answer.js';
import type { BodyResult } from '../transport/body.js';
import { deliver } from '../transport/deliver.js';
import { parseJson, TOO_LARGE } from '../transport/json-request.js';
import { errorAnswer, guarded, type Exchange } from '../transport/reply.js';

const placeBody = compile(SubscriptionBody);
const cancelBody = compile(SubscriptionCancelBody);
const invalid = (message: string): ErrorOutcome => errorOutcome('VALIDATION', message);
const NOT_FOUND = errorOutcome('NOT_FOUND', 'No subscription with this id exists on this account.');
const STATUS_QUERY = '/api/v1/subscription_status?subscription=ID';

/** POST /api/v1/subscription */
export function placeSubscription(ex: Exchange, ctx: AppContext, account: Account, body: BodyResult, contentType: string, idempotencyHeader: string | null): void {
  submitSubscription(ex, ctx, account, parseSubscription(ctx, body, contentType, idempotencyHeader), body.kind === 'too-large');
}

/** The subscription as sent, its integers as the decimal text the shared reader takes, or why it is invalid. */
function parseSubscription(ctx: AppContext, body: BodyResult, contentType: string, idempotencyHeader: string | null): SubscribeRequest {
  if (body.kind === 'too-large') return refusedSubscription(TOO_LARGE(ctx.limits.bodyBytesMax));
  const parsed = parseJson(contentType, body.bytes);
  if (!parsed.ok) return refusedSubscription(parsed.error);
  const checked = placeBody.check(parsed.value);
  if (!checked.ok) return refusedSubscription(checked.error);
  const { service, username, min, max, posts, old_posts, delay, expiry } = checked.value;
  // The reader also takes '' and '0' for no end, as panels' forms send it; this dialect says null.
  if (expiry === '' || expiry === '0') return refusedSubscription(invalid("Field 'expiry' must be a date as DD/MM/YYYY, or null (or left out) for no end."));
  const fields: Record<string, string> = { username, min: String(min), max: String(max) };
  if (posts !== undefined) fields['posts'] = String(posts);
  if (old_posts !== undefined) fields['old_posts'] = String(old_posts);
  if (delay !== undefined) fields['delay'] = String(delay);
  if (typeof expiry === 'string') fields['expiry'] = expiry;
  return subscribeRequest(fields, service, ctx.catalog.get(service), idempotencyHeader);
}

/** Its latest orders, stored in the commit of the subscription's row that names them. */
function ordersOf(ctx: AppContext, sub: SubscriptionRecord): OrderRecord[] {
  return sub.orders.map((number) => {
    const order = ctx.orders.readByNumber(number);
    assert(order !== undefined, "a subscription's order is stored with its row", number);
    return order;
  });
}

function shown(ctx: AppContext, sub: SubscriptionRecord): Answer {
  return { status: 200, body: renderSubscription(sub, ordersOf(ctx, sub)) };
}

/**
 * The one `subscription` query parameter, or why the query lacks it. Other
 * parameters are ignored, as on every v1 GET (cache-busters are common in
 * client libraries; docs/DECISIONS.md, "HTTP").
 */
function statusQuery(query: string): { ok: true; id: string } | { ok: false; error: ErrorOutcome } {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return { ok: false, error: invalid('The query string cannot be decoded.') };
  }
  const values = params.getAll('subscription');
  if (values.length !== 1 || values[0] === '') return { ok: false, error: invalid(`Pass the subscription id once: ${STATUS_QUERY}.`) };
  return { ok: true, id: values[0]! };
}

const NOT_AN_ID = invalid('That is not a subscription id; subscription ids are the numbers POST /api/v1/subscription returns.');

/** GET /api/v1/subscription_status?subscription=ID */
export function subscriptionStatus(ex: Exchange, ctx: AppContext, account: Account, query: string): void {
  const asked = statusQuery(query);
  const list = !asked.ok ? asked : parsePositiveId(asked.id) === null ? { ok: false as const, error: NOT_AN_ID } : { ok: true as const, ids: [asked.id] };
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  deliver(ex, ctx, account, touch, () => {
    const sub = ownSubscription(ctx, account, list.ids[0]!);
    return sub === null ? errorAnswer(ex, NOT_FOUND) : shown(ctx, sub);
  });
}

/** POST /api/v1/subscription_cancel {"subscription": ID}: after the request's token, one command to the wallet; answered once durable. */
export function cancelSubscription(ex: Exchange, ctx: AppContext, account: Account, body: BodyResult, contentType: string): void {
  const checked = body.kind === 'too-large' ? null : parseJson(contentType, body.bytes);
  const read = checked === null ? { ok: false as const, error: TOO_LARGE(ctx.limits.bodyBytesMax) } : checked.ok ? cancelBody.check(checked.value) : checked;
  const list = read.ok ? { ok: true as const, ids: [String(read.value.subscription)] } : read;
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  const sub = ownSubscription(ctx, account, list.ids[0]!);
  if (sub === null) return deliver(ex, ctx, account, touch, () => errorAnswer(ex, NOT_FOUND));
  const delivery = account.actor.send({ kind: 'subscription-status', subscriptionId: sub.id, to: 'Canceled', reason: 'canceled by the customer' });
  if (delivery === null) return deliver(ex, ctx, account, null);
  const answer = (): Answer => canceledAnswer(ex, ctx, delivery, sub.id);
  if (delivery.durable === null) return deliver(ex, ctx, account, touch, answer);
  delivery.durable.then(
    () => guarded(ctx, ex, () => deliver(ex, ctx, account, touch, answer)),
    // A failed commit stops the process: nothing is answered.
    () => {},
  );
}

/** The canceled subscription as stored (its row is durable by now), or the refusal (already final, or found expired). */
function canceledAnswer(ex: Exchange, ctx: AppContext, delivery: Delivery, id: number): Answer {
  const outcome = delivery.decision.outcome;
  if (outcome.kind === 'error') return errorAnswer(ex, outcome.error);
  const sub = ctx.store.tables.subscriptions.get(id) as SubscriptionRecord | undefined;
  assert(sub !== undefined, 'a canceled subscription is stored', id);
  return shown(ctx, sub);
}
