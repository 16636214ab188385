/**
 * API v2's subscriptions: `add` to a service of type Subscriptions places a
 * subscription (`username`, `min`, `max`, `posts`, `old_posts`, `delay`,
 * `expiry`), answered `{"order": N}` like an order, N being its id; `status`
 * of such an id answers `{"status", "expiry", "posts", "orders"}`; `cancel`
 * of it stops it. Placing one charges nothing (src/ledger/subscription-
 * decide.ts). Empty fields count as absent, as for every `add`; a field of
 * another type with a value is refused by name.
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { expiryText, readSubscriptionTerms, SUBSCRIPTION_FIELDS, type ForceJoinVerdict, type ServiceRecord, type SubscribeRequest, type SubscriptionRecord } from '../../ledger/index.js';
import { assert } from '../../platform/index.js';
import type { AppContext } from '../context.js';
import { deliver } from '../transport/deliver.js';
import { failed, guarded, type Exchange } from '../transport/reply.js';
import type { V2Params } from './params.js';

const NOT_SUBSCRIPTION_FIELDS: readonly string[] = ['key', 'action', 'service'];
const TAKEN = SUBSCRIPTION_FIELDS.map((f) => `'${f}'`).join(', ');

/** The subscription's fields as text, or the first field it does not take (named). */
function subscriptionFields(params: V2Params, idempotency: string | null): { ok: true; fields: Record<string, string> } | { ok: false; error: ErrorOutcome } {
  if (idempotency !== null) {
    return { ok: false, error: errorOutcome('VALIDATION', 'Subscriptions are placed without an Idempotency-Key: a retry could place a second one; send the header only with orders.') };
  }
  const fields: Record<string, string> = {};
  for (const [name, text] of params) {
    if (NOT_SUBSCRIPTION_FIELDS.includes(name)) continue;
    if ((SUBSCRIPTION_FIELDS as readonly string[]).includes(name)) fields[name] = text;
    else if (text !== '') return { ok: false, error: errorOutcome('VALIDATION', `Field '${name}' is not taken by Subscriptions orders; they take ${TAKEN}.`) };
  }
  return { ok: true, fields };
}

/** `add` to a Subscriptions service. Refusals go through the actor too, so the ban and the rate limit come first. */
export function subscribe(ex: Exchange, ctx: AppContext, account: Account, params: V2Params, service: ServiceRecord, idempotency: string | null): void {
  const read = subscriptionFields(params, idempotency);
  const terms = read.ok ? readSubscriptionTerms(read.fields) : null;
  let request: SubscribeRequest;
  if (!read.ok) request = { ok: false, reason: read.error };
  else if (!terms!.ok) request = { ok: false, reason: errorOutcome('VALIDATION', terms!.message) };
  else request = { ok: true, terms: { service: service.id, ...terms!.terms }, service, forceJoin: null };
  const pending = request.ok ? ctx.forceJoinVerdict?.(account) ?? null : null;
  if (pending === null) return sendSubscribe(ex, ctx, account, request);
  // While Telegram is asked, the request holds a mailbox place, as an order does (orders/order-submit.ts).
  const release = account.actor.reserve();
  if (release === null) return deliver(ex, ctx, account, null);
  const asked = request as Extract<SubscribeRequest, { ok: true }>;
  pending.then(
    (forceJoin: ForceJoinVerdict) => {
      release();
      guarded(ctx, ex, () => sendSubscribe(ex, ctx, account, { ...asked, forceJoin }));
    },
    (error: unknown) => {
      release();
      failed(ctx, ex, error, 'force-join check failed', 'The server failed to check the Telegram channel membership.');
    },
  );
}

function sendSubscribe(ex: Exchange, ctx: AppContext, account: Account, request: SubscribeRequest): void {
  if (ex.aborted) return;
  const delivery = account.actor.send({ kind: 'subscribe', channel: 'api', request });
  deliver(ex, ctx, account, delivery, undefined, false, (outcome) => {
    assert(outcome.kind === 'subscribed', 'a subscription add answers a placed subscription', outcome.kind);
    return { status: 200, body: `{"order":${outcome.subscription.id}}` };
  });
}

/** The account's subscription with this id, or null (unknown, malformed and other accounts' ids alike). */
export function ownSubscription(ctx: AppContext, account: Account, text: string): SubscriptionRecord | null {
  const id = parsePositiveId(text);
  const sub = id === null ? undefined : (ctx.store.tables.subscriptions.get(id) as SubscriptionRecord | undefined);
  return sub === undefined || sub.account !== account.profile.id ? null : sub;
}

/**
 * A subscription's status as this dialect shows it: its status, its expiry
 * as DD/MM/YYYY (null: none), `posts` the posts delivered to so far (as
 * text, as panels write counts), and the numbers of its latest orders.
 */
export function renderSubscriptionStatus(sub: SubscriptionRecord): string {
  const expiry = sub.expiryMs === null ? 'null' : `"${expiryText(sub.expiryMs)}"`;
  return `{"status":"${sub.status}","expiry":${expiry},"posts":"${sub.postsDone}","orders":[${sub.orders.join(',')}]}`;
}
