/**
 * Cancel and refill, for many orders at once: after the request's one
 * token, each order named goes to the wallet actor as its own command (so
 * a cancel is serialised with every operator move of the same order), and
 * the answer waits until all of them are durable. Each dialect names the
 * orders its own way and renders the answer; the sending is shared.
 */
import type { Account, Delivery, Request } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import type { AppContext } from '../context.js';
import type { IdList } from '../orders/id-list.js';
import type { Exchange } from '../transport/reply.js';
import { admit, answerWhenDurable } from './admit.js';

const BUSY = errorOutcome('UNAVAILABLE', 'The wallet is busy; retry this order shortly.');

/** What one order's command came to: its delivery, or the refusal that kept it from being sent. */
export type OrderResult = Delivery | ErrorOutcome;

/**
 * Sends `command(id)` for each id (or keeps the refusal it returns instead)
 * and answers with `answer(results)`, in the order the ids were named.
 */
export function sendPerOrder(
  ex: Exchange,
  ctx: AppContext,
  account: Account,
  list: IdList,
  command: (id: string) => Request | ErrorOutcome,
  answer: (results: [string, OrderResult][]) => string,
): void {
  const touch = admit(ex, ctx, account, list);
  if (touch === null || !list.ok) return;
  const results = list.ids.map((id): [string, OrderResult] => {
    const request = command(id);
    if (!('kind' in request)) return [id, request];
    return [id, account.actor.send(request) ?? BUSY];
  });
  const pending = results.map(([, r]) => ('decision' in r ? r.durable : null));
  answerWhenDurable(ex, ctx, account, touch, pending, () => answer(results));
}
