/**
 * The tail of a subscription request that both customer APIs share: the
 * terms read from the dialect's fields (as text, an empty field counting as
 * absent), the Idempotency-Key, the force-join verdict (asynchronous only
 * when a channel is required), and the one command to the wallet actor.
 * Refusals go through the actor too, so the ban and the rate limit come
 * first, as for an order (order-submit.ts).
 */
import type { Account } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { readSubscriptionTerms, subscriptionFingerprint, type ServiceRecord, type SubscribeRequest } from '../../ledger/index.js';
import type { AppContext } from '../context.js';
import { deliver, type OutcomeRenderer } from '../transport/deliver.js';
import type { Exchange } from '../transport/reply.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import { afterVerdict } from './order-submit.js';

/** The subscription the fields ask for on `serviceId` (`service`: the catalogue's record, or null), or why it cannot be read. */
export function subscribeRequest(fields: Readonly<Record<string, string>>, serviceId: number, service: ServiceRecord | null, idempotencyHeader: string | null): SubscribeRequest {
  const read = readSubscriptionTerms(fields);
  if (!read.ok) return refusedSubscription(errorOutcome('VALIDATION', read.message));
  const terms = { service: serviceId, ...read.terms };
  if (idempotencyHeader === null) return { ok: true, terms, service, idempotency: null, forceJoin: null };
  const key = parseIdempotencyKey(idempotencyHeader);
  if (!key.ok) return refusedSubscription(key.error);
  return { ok: true, terms, service, idempotency: { key: key.key, fingerprint: subscriptionFingerprint(terms) }, forceJoin: null };
}

export function refusedSubscription(reason: ErrorOutcome): SubscribeRequest {
  return { ok: false, reason };
}

/**
 * Asks for the force-join verdict when the request is valid, then hands it
 * to the actor and answers once it is durable. `render` answers a placed
 * or replayed subscription in the dialect's shape (v1's is renderAnswer's).
 */
export function submitSubscription(ex: Exchange, ctx: AppContext, account: Account, request: SubscribeRequest, close: boolean, render?: OutcomeRenderer): void {
  if (!request.ok) return sendSubscribe(ex, ctx, account, request, close, render);
  const pending = ctx.forceJoinVerdict?.(account) ?? null;
  if (pending === null) return sendSubscribe(ex, ctx, account, request, false, render);
  afterVerdict(ex, ctx, account, pending, render, (forceJoin) => sendSubscribe(ex, ctx, account, { ...request, forceJoin }, false, render));
}

function sendSubscribe(ex: Exchange, ctx: AppContext, account: Account, request: SubscribeRequest, close: boolean, render: OutcomeRenderer | undefined): void {
  if (ex.aborted) return;
  const delivery = account.actor.send({ kind: 'subscribe', requestId: ex.requestId, channel: 'api', request });
  deliver(ex, ctx, account, delivery, undefined, close, render);
}
