/**
 * A lifecycle request (status of many orders, cancel, refill, refill
 * status) is one request for the rate limit, whatever the number of ids it
 * names: a `touch` checks the ban and takes one token before anything else,
 * and the answer carries that token's rate-limit headers.
 */
import type { Account, Delivery } from '../../actors/index.js';
import type { AppContext } from '../context.js';
import { deliver, unavailable } from '../transport/deliver.js';
import type { IdList } from '../orders/id-list.js';
import { errorAnswer, guarded, type Exchange } from '../transport/reply.js';

/**
 * Takes the request's one rate-limit token. Returns the delivery to answer
 * with when the request may go on, or null after sending the refusal
 * (ban, rate limit, full mailbox) or the list's VALIDATION error.
 */
export function admit(ex: Exchange, ctx: AppContext, account: Account, list: IdList): Delivery | null {
  const touch = account.actor.send({ kind: 'touch' });
  if (touch === null) {
    unavailable(ex, 'This wallet has too many requests in flight; retry in a second.');
    return null;
  }
  if (touch.decision.outcome.kind !== 'pass' || !list.ok) {
    const invalid = list.ok ? null : list.error;
    deliver(ex, ctx, account, touch, () => errorAnswer(ex, invalid!));
    return null;
  }
  return touch;
}

/** Answers once every per-order command is durable (a failed commit stops the process: no answer). */
export function answerWhenDurable(ex: Exchange, ctx: AppContext, account: Account, touch: Delivery, pending: (Promise<void> | null)[], body: () => string): void {
  Promise.all(pending).then(
    () => guarded(ctx, ex, () => deliver(ex, ctx, account, touch, () => ({ status: 200, body: body() }))),
    () => {},
  );
}

/**
 * A look-up of many ids (order or refill status): the request's token,
 * then `body` renders the answer from what the store holds, and the reply
 * waits until all it could see is durable.
 */
export function answerLookup(ex: Exchange, ctx: AppContext, account: Account, list: IdList, body: (ids: string[]) => string): void {
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  deliver(ex, ctx, account, touch, () => ({ status: 200, body: body(list.ids) }));
}
