/**
 * Admin endpoints for orders, the processing system's side: show them (by
 * id or number; order-list.ts lists them), move them (refunds happen in
 * the wallet actor, in the same commit), place an order for a customer
 * through the panel, and record progress (the claim queue and its leases
 * are claims.ts's). A move or progress that names a `worker` is that
 * worker's, which must hold the order (409 CONFLICT otherwise). Every
 * change goes through the order's wallet actor, so it is serialised with
 * the customer's cancel and every other move of that order.
 */
import { errorOutcome } from '../../errors/index.js';
import { ORDER_STATUSES, type OrderStatus } from '../../ledger/index.js';
import { formatMicro } from '../../money/index.js';
import { parsePositiveId } from '../../ids/index.js';
import { renderAdminOrder } from './render.js';
import { deliver } from '../transport/deliver.js';
import { checkOrderInput } from '../orders/order-input.js';
import { send, sendError } from '../transport/reply.js';
import { applied, findAccount, invalid, orderAccount, optionalReason, unknownField, type AdminHandler } from './common.js';
import { optionalWorker } from './claims.js';

/** Any path segment: a malformed id is answered "no such order", not "no such endpoint". */
export const ORDER_PARAM = '([^/]{1,200})';

export const showOrder: AdminHandler = async (ex, ctx, [id]) => {
  await ctx.wal.flushed();
  // An order number (what a reseller quotes from API v2) finds the order too.
  const number = parsePositiveId(id!);
  const order = number === null ? ctx.orders.read(id!) : ctx.orders.readByNumber(number);
  if (order === undefined) return sendError(ex, errorOutcome('NOT_FOUND', `No order with id ${id}.`));
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(order)}}`);
};

/** POST /admin/v1/orders/{id}/status {status, remains?, reason?, worker?} */
export const setOrderStatus: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['status', 'remains', 'reason', 'worker']);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const worker = optionalWorker(b);
  if (!worker.ok) return sendError(ex, worker.error);
  const to = b['status'] as OrderStatus;
  if (!ORDER_STATUSES.includes(to)) return sendError(ex, invalid(`status must be one of ${ORDER_STATUSES.join(', ')}.`));
  const remains = b['remains'] ?? null;
  if (remains !== null && !Number.isSafeInteger(remains)) return sendError(ex, invalid('remains must be an integer.'));
  const account = await orderAccount(ex, ctx, id!);
  if (account === null) return;
  const decision = await applied(
    ex,
    account.actor.send({
      kind: 'set-status',
      orderId: id!,
      to,
      remains: remains as number | null,
      ...(reason.reason === undefined ? {} : { reason: reason.reason }),
      ...(worker.worker === undefined ? {} : { worker: worker.worker }),
    }),
  );
  if (decision === null) return;
  const refund = decision.outcome.kind === 'moved' ? decision.outcome.refund : 0;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(decision.order!)},"refund":${formatMicro(refund)},"credits":${formatMicro(account.actor.state.wallet.credits)}}`);
};

/** POST /admin/v1/accounts/{id}/orders — a panel order, same actor, checks and ledger as the API. */
export const placePanelOrder: AdminHandler = async (ex, ctx, [id], body) => {
  const account = findAccount(ex, ctx, id!);
  if (account === null) return;
  const checked = checkOrderInput(body, ctx.limits.targetCharsMax, (serviceId) => ctx.catalog.get(serviceId));
  if (!checked.ok) return sendError(ex, checked.error);
  const forceJoin = await (ctx.forceJoinVerdict?.(account) ?? Promise.resolve(null));
  const delivery = account.actor.send({
    kind: 'order',
    requestId: ex.requestId,
    channel: 'panel',
    request: { ok: true, payload: checked.payload, service: checked.service, idempotency: null, forceJoin },
  });
  deliver(ex, ctx, account, delivery);
};

/** POST /admin/v1/orders/{id}/progress {start_count?, remains?, worker?} */
export const recordProgress: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['start_count', 'remains', 'worker']);
  if (bad !== null) return sendError(ex, bad);
  const worker = optionalWorker(b);
  if (!worker.ok) return sendError(ex, worker.error);
  for (const field of ['start_count', 'remains']) {
    const value = b[field];
    if (value !== undefined && value !== null && !Number.isSafeInteger(value)) return sendError(ex, invalid(`${field} must be an integer or null.`));
  }
  const account = await orderAccount(ex, ctx, id!);
  if (account === null) return;
  const decision = await applied(
    ex,
    account.actor.send({
      kind: 'progress',
      orderId: id!,
      ...(b['start_count'] === undefined ? {} : { startCount: b['start_count'] as number | null }),
      ...(b['remains'] === undefined ? {} : { remains: b['remains'] as number | null }),
      ...(worker.worker === undefined ? {} : { worker: worker.worker }),
    }),
  );
  if (decision === null) return;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(decision.order!)}}`);
};
