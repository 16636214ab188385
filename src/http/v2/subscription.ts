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
import { expiryText, SUBSCRIPTION_FIELDS, type ServiceRecord, type SubscriptionRecord } from '../../ledger/index.js';
import { assert } from '../../platform/index.js';
import type { AppContext } from '../context.js';
import { refusedSubscription, subscribeRequest, submitSubscription } from '../orders/subscription-submit.js';
import type { Exchange } from '../transport/reply.js';
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

/** `add` to a Subscriptions service, answered `{"order": N}`; a refusal goes through the actor too, so the ban and the rate limit come first. */
export function subscribe(ex: Exchange, ctx: AppContext, account: Account, params: V2Params, service: ServiceRecord, idempotency: string | null): void {
  const read = subscriptionFields(params, idempotency);
  const request = read.ok ? subscribeRequest(read.fields, service.id, service, null) : refusedSubscription(read.error);
  submitSubscription(ex, ctx, account, request, false, (outcome) => {
    assert(outcome.kind === 'subscribed', 'a subscription add answers a placed subscription', outcome.kind);
    return { status: 200, body: `{"order":${outcome.subscription.id}}` };
  });
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
