/**
 * The tail of an order request that both customer APIs share: the parsed
 * order (or the reason it is invalid) with its Idempotency-Key, the
 * force-join verdict (asynchronous only when a channel is required), and the
 * one command to the account's wallet actor. From here on a v1 order and a
 * v2 order are the same order.
 */
import type { Account } from '../../actors/index.js';
import type { ErrorOutcome } from '../../errors/index.js';
import { orderFingerprint, readOrderPayload, type ForceJoinVerdict, type OrderPayload, type OrderRequest, type ServiceRecord } from '../../ledger/index.js';
import type { Answer } from '../transport/answer.js';
import type { AppContext } from '../context.js';
import { deliver, type OutcomeRenderer } from '../transport/deliver.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import { failed, guarded, type Exchange } from '../transport/reply.js';

/** A checked order and its Idempotency-Key header (null when none was sent), or the header's problem. */
export function orderRequest(payload: OrderPayload, service: ServiceRecord | null, idempotencyHeader: string | null): OrderRequest {
  if (idempotencyHeader === null) return { ok: true, payload, service, idempotency: null, forceJoin: null };
  const key = parseIdempotencyKey(idempotencyHeader);
  if (!key.ok) return refusedOrder(key.error);
  return { ok: true, payload, service, idempotency: { key: key.key, fingerprint: orderFingerprint(payload) }, forceJoin: null };
}

export function refusedOrder(reason: ErrorOutcome): OrderRequest {
  return { ok: false, reason };
}

/**
 * Asks for the force-join verdict when the order is valid, then hands the
 * order to the actor and answers once it is durable. `render` answers an
 * accepted or replayed order (API v2 has its own shapes); errors follow the
 * exchange's dialect.
 */
export function submitOrder(ex: Exchange, ctx: AppContext, account: Account, request: OrderRequest, close: boolean, render?: OutcomeRenderer): void {
  // An unread body may hold a request the client is still sending: answer, then close.
  if (!request.ok) return sendOrder(ex, ctx, account, request, close, render);
  // Without force-join nothing waits here. With it, a payload its service's
  // type refuses gets VALIDATION (or its key's replay) from the actor,
  // neither of which needs the verdict: no Telegram call and no mailbox
  // place for it (the payload is read here only when that can happen).
  const askVerdict = ctx.forceJoinVerdict;
  const pending = askVerdict === null || !readOrderPayload(request.payload, request.service).ok ? null : askVerdict(account);
  // The common path (no channel required) builds no closure.
  if (pending === null) return sendOrder(ex, ctx, account, request, false, render);
  afterVerdict(ex, ctx, account, pending, render, (forceJoin) => sendOrder(ex, ctx, account, { ...request, forceJoin }, false, render));
}

/**
 * Runs `send` with the force-join verdict once Telegram answers. While
 * Telegram is asked, the request holds a mailbox place: a client cannot
 * park more requests on one check than the wallet's mailbox takes. Orders
 * and subscriptions wait for it alike.
 */
export function afterVerdict(
  ex: Exchange,
  ctx: AppContext,
  account: Account,
  pending: Promise<ForceJoinVerdict>,
  render: OutcomeRenderer | undefined,
  send: (forceJoin: ForceJoinVerdict) => void,
): void {
  const release = account.actor.reserve();
  if (release === null) return deliver(ex, ctx, account, null, undefined, false, render);
  pending.then(
    (forceJoin) => {
      release();
      guarded(ctx, ex, () => send(forceJoin));
    },
    (error: unknown) => {
      release();
      failed(ctx, ex, error, 'force-join check failed', 'The server failed to check the Telegram channel membership.');
    },
  );
}

function sendOrder(ex: Exchange, ctx: AppContext, account: Account, request: OrderRequest, close: boolean, render: OutcomeRenderer | undefined): void {
  if (ex.aborted) return;
  deliver(ex, ctx, account, account.actor.send({ kind: 'order', requestId: ex.requestId, channel: 'api', request }), undefined, close, render);
}

export type { Answer };
