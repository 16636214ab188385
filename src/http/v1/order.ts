/**
 * POST /api/v1/order: parses the request, or finds the reason it is
 * invalid, and hands either to the shared order intake (src/http/orders);
 * the reason is refused in the actor, after the ban and rate-limit checks
 * (the contract's check order).
 */
import type { Account } from '../../actors/index.js';
import type { OrderRequest } from '../../ledger/index.js';
import type { AppContext } from '../context.js';
import { checkOrderInput } from '../orders/order-input.js';
import { orderRequest, refusedOrder, submitOrder } from '../orders/order-submit.js';
import type { BodyResult } from '../transport/body.js';
import { parseJson, TOO_LARGE } from '../transport/json-request.js';
import type { Exchange } from '../transport/reply.js';

export function placeOrder(ex: Exchange, ctx: AppContext, account: Account, body: BodyResult, contentType: string, idempotencyHeader: string | null): void {
  submitOrder(ex, ctx, account, parseOrder(ctx, body, contentType, idempotencyHeader), body.kind === 'too-large');
}

/** The order as sent (without its force-join verdict, which is asked for next), or why it is invalid. */
function parseOrder(ctx: AppContext, body: BodyResult, contentType: string, idempotencyHeader: string | null): OrderRequest {
  if (body.kind === 'too-large') return refusedOrder(TOO_LARGE(ctx.limits.bodyBytesMax));
  const parsed = parseJson(contentType, body.bytes);
  if (!parsed.ok) return refusedOrder(parsed.error);
  const checked = checkOrderInput(parsed.value, ctx.limits.targetCharsMax, (id) => ctx.catalog.get(id));
  if (!checked.ok) return refusedOrder(checked.error);
  return orderRequest(checked.payload, checked.service, idempotencyHeader);
}
