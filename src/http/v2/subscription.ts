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
import { renderV2Error, storedError, v2Sentence } from './errors.js';
import type { V2Params } from './params.js';

const NOT_SUBSCRIPTION_FIELDS: readonly string[] = ['key', 'action', 'service'];
const TAKEN = SUBSCRIPTION_FIELDS.map((f) => `'${f}'`).join(', ');

/** The subscription's fields as text, or the first field it does not take (named). */
function subscriptionFields(params: V2Params): { ok: true; fields: Record<string, string> } | { ok: false; error: ErrorOutcome } {
  const fields: Record<string, string> = {};
  for (const [name, text] of params) {
    if (NOT_SUBSCRIPTION_FIELDS.includes(name)) continue;
    if ((SUBSCRIPTION_FIELDS as readonly string[]).includes(name)) fields[name] = text;
    else if (text !== '') return { ok: false, error: errorOutcome('VALIDATION', `Field '${name}' is not taken by Subscriptions orders; they take ${TAKEN}.`) };
  }
  return { ok: true, fields };
}

/**
 * `add` to a Subscriptions service, answered `{"order": N}`; a refusal goes
 * through the actor too, so the ban and the rate limit come first. An
 * Idempotency-Key works as for an order: a replay answers the subscription
 * the key placed (through either API), or the refusal it remembered, in
 * this dialect.
 */
export function subscribe(ex: Exchange, ctx: AppContext, account: Account, params: V2Params, service: ServiceRecord, idempotency: string | null): void {
  const read = subscriptionFields(params);
  const request = read.ok ? subscribeRequest(read.fields, service.id, service, idempotency) : refusedSubscription(read.error);
  submitSubscription(ex, ctx, account, request, false, (outcome) => {
    if (outcome.kind === 'subscribed') return { status: 200, body: `{"order":${outcome.subscription.id}}` };
    assert(outcome.kind === 'replay', 'a subscription add answers a placed subscription or a replay', outcome.kind);
    const { subscription } = outcome.record;
    if (subscription !== undefined) return { status: 200, body: `{"order":${subscription}}` };
    // A remembered refusal: the stored v1 error body, told in this dialect.
    return { status: 200, body: renderV2Error(v2Sentence(storedError(outcome.record.body), null)) };
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
