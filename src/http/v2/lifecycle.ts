/**
 * API v2's lifecycle actions: `status`, `cancel`, `refill` and
 * `refill_status`, each for one id (`order`, `refill`) or many (`orders`,
 * `refills`), orders named by their numbers. The sending and the rate-limit
 * token are shared with v1 (src/http/lifecycle); the answers are this
 * dialect's: money and counts as strings, an error sentence in place of a
 * record that is not the caller's.
 */
import type { Account, Delivery, Request } from '../../actors/index.js';
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { BATCH_IDS_MAX, chargeDelivered, remainsShown, type OrderRecord, type RefillStatus } from '../../ledger/index.js';
import { formatMicro } from '../../money/index.js';
import { assert } from '../../platform/index.js';
import type { AppContext } from '../context.js';
import { answerLookup } from '../lifecycle/admit.js';
import { ownOrderByNumber, ownRefill, ownSubscription } from '../lifecycle/own-records.js';
import { sendPerOrder } from '../lifecycle/per-order.js';
import { listOf, type IdList } from '../orders/id-list.js';
import { errorAnswer, type Exchange } from '../transport/reply.js';
import { INCORRECT_ORDER_ID, INCORRECT_REFILL_ID, renderV2Error } from './errors.js';
import type { V2Params } from './params.js';
import { renderSubscriptionStatus } from './subscription.js';

/** Told 'Incorrect order ID' in this dialect (v2/errors.ts). */
const ORDER_NOT_FOUND = errorOutcome('NOT_FOUND', INCORRECT_ORDER_ID);

const V2_STATUS: Record<OrderRecord['status'], string> = {
  pending: 'Pending',
  processing: 'Processing',
  in_progress: 'In progress',
  completed: 'Completed',
  partial: 'Partial',
  canceled: 'Canceled',
};

const V2_REFILL_STATUS: Record<RefillStatus, string> = {
  pending: 'Pending',
  in_progress: 'In progress',
  completed: 'Completed',
  rejected: 'Rejected',
};

/**
 * One order's status as panels show it: money and counts as strings;
 * start_count "0" until the operator records one; the charge net of a
 * partial or cancel refund (chargeDelivered).
 */
function renderV2Status(order: OrderRecord, currency: string): string {
  return (
    `{"charge":"${formatMicro(chargeDelivered(order))}","start_count":"${order.startCount ?? 0}","status":"${V2_STATUS[order.status]}",` +
    `"remains":"${remainsShown(order)}","currency":${JSON.stringify(currency)}}`
  );
}

/** An id as it goes back to the client: a number when it is one, else the text sent. */
function echoId(text: string): string {
  return parsePositiveId(text) === null ? JSON.stringify(text) : text;
}

/** `order=N` alone, or `orders=N1,N2,…`, as an id list; single tells which form was sent. */
function numbersAsked(params: V2Params, single: string, multi: string): { single: boolean; list: IdList } {
  const one = params.get(single);
  const many = params.get(multi);
  if (many !== undefined) return { single: false, list: listOf(many.split(',').map((v) => v.trim()), multi, `${multi}=1,2,3`) };
  if (one !== undefined && one.trim() !== '') return { single: true, list: { ok: true, ids: [one.trim()] } };
  return { single: false, list: { ok: false, error: errorOutcome('VALIDATION', `Send ${single} (one ID) or ${multi} (IDs separated by commas, at most ${BATCH_IDS_MAX}).`) } };
}

export function status(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  const { single, list } = numbersAsked(params, 'order', 'orders');
  answerLookup(ex, ctx, account, list, (ids) => {
    const shown = (id: string): string => {
      const order = ownOrderByNumber(ctx, account, id);
      if (order !== null) return renderV2Status(order, ctx.currency);
      const sub = ownSubscription(ctx, account, id);
      return sub === null ? renderV2Error(INCORRECT_ORDER_ID) : renderSubscriptionStatus(sub);
    };
    if (single) return shown(ids[0]!);
    return `{${ids.map((id) => `${JSON.stringify(id)}:${shown(id)}`).join(',')}}`;
  });
}

/**
 * Sends one command per order named (by number) and answers once all are
 * durable: `item` renders each order's result, the error sentence in place
 * of it for an order that is not the caller's or was refused.
 */
function perOrder(
  ex: Exchange,
  ctx: AppContext,
  account: Account,
  list: IdList,
  kind: 'cancel' | 'refill',
  answer: (items: [string, string][]) => string,
  item: (delivery: Delivery) => string,
): void {
  sendPerOrder(
    ex,
    ctx,
    account,
    list,
    (id): Request | ErrorOutcome => {
      const order = ownOrderByNumber(ctx, account, id);
      if (order !== null) return { kind, orderId: order.id };
      // A subscription's id cancels the subscription; it has nothing to refill.
      const sub = kind === 'cancel' ? ownSubscription(ctx, account, id) : null;
      return sub === null ? ORDER_NOT_FOUND : { kind: 'subscription-status', subscriptionId: sub.id, to: 'Canceled', reason: 'canceled by the customer' };
    },
    (results) =>
      answer(
        results.map(([id, r]): [string, string] => {
          if (!('decision' in r)) return [id, errorAnswer(ex, r).body];
          const outcome = r.decision.outcome;
          return [id, outcome.kind === 'error' ? errorAnswer(ex, outcome.error).body : item(r)];
        }),
      ),
  );
}

/** `cancel` with `orders` (or one `order`): `[{"order": N, "cancel": 1}, …]`; a started order's cancel is a request the operator resolves. */
export function cancel(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  perOrder(
    ex,
    ctx,
    account,
    numbersAsked(params, 'order', 'orders').list,
    'cancel',
    (items) => `[${items.map(([id, item]) => `{"order":${echoId(id)},"cancel":${item}}`).join(',')}]`,
    () => '1',
  );
}

/** `refill` with `order` → `{"refill": "<id>"}`; with `orders` → `[{"order": N, "refill": <id>}, …]`. */
export function refill(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  const { single, list } = numbersAsked(params, 'order', 'orders');
  const refillId = (d: Delivery): number => {
    assert(d.decision.outcome.kind === 'refill-opened', 'an accepted refill answers refill-opened', d.decision.outcome.kind);
    return d.decision.outcome.refill.id;
  };
  perOrder(
    ex,
    ctx,
    account,
    list,
    'refill',
    (items) => (single ? items[0]![1] : `[${items.map(([id, item]) => `{"order":${echoId(id)},"refill":${item}}`).join(',')}]`),
    // The single form answers the whole object; the list form one id per order.
    (d) => (single ? `{"refill":"${refillId(d)}"}` : String(refillId(d))),
  );
}

/** `refill_status` with `refill` → `{"status": "…"}`; with `refills` → `[{"refill": N, "status": "…"}, …]`. */
export function refillStatus(ex: Exchange, ctx: AppContext, account: Account, params: V2Params): void {
  const { single, list } = numbersAsked(params, 'refill', 'refills');
  answerLookup(ex, ctx, account, list, (ids) => {
    const statusOf = (id: string): string => {
      const found = ownRefill(ctx, account, id);
      return found === null ? renderV2Error(INCORRECT_REFILL_ID) : `"${V2_REFILL_STATUS[found.status]}"`;
    };
    if (single) {
      const shown = statusOf(ids[0]!);
      return shown.startsWith('{') ? shown : `{"status":${shown}}`;
    }
    return `[${ids.map((id) => `{"refill":${echoId(id)},"status":${statusOf(id)}}`).join(',')}]`;
  });
}
