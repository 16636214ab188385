/**
 * The claim queue's admin endpoints: workers claim the oldest pending
 * orders for a lease, extend it while they work, or release an order back
 * to the queue. Every change goes through the order's wallet actor, whose
 * decision checks the worker holds the order (lease.ts): a worker that no
 * longer does gets 409 CONFLICT with a sentence saying why.
 */
import type { Delivery } from '../../actors/index.js';
import { LEASE_SECONDS_DEFAULT, leaseEnd, leaseSecondsRefusal, type OrderRecord } from '../../ledger/index.js';
import type { ErrorOutcome } from '../../errors/index.js';
import { renderAdminOrder } from './render.js';
import type { AppContext } from '../context.js';
import { send, sendError } from '../transport/reply.js';
import { applied, invalid, orderAccount, unknownField, type AdminHandler } from './common.js';
import { CLAIM_LIMIT_MAX, WORKER_CHARS_MAX } from '../limits.js';

type Checked<T> = { ok: true; value: T } | { ok: false; error: ErrorOutcome };

/** A body's `worker`: a non-empty name, trimmed. */
function workerName(value: unknown): Checked<string> {
  if (typeof value !== 'string' || value.trim() === '' || value.length > WORKER_CHARS_MAX) {
    return { ok: false, error: invalid(`worker must be a non-empty string of at most ${WORKER_CHARS_MAX} characters naming the worker.`) };
  }
  return { ok: true, value: value.trim() };
}

/** The optional `worker` of a move or of progress: when given, the change is that worker's, which must hold the order. */
export function optionalWorker(body: Record<string, unknown>): { ok: true; worker: string | undefined } | { ok: false; error: ErrorOutcome } {
  if (body['worker'] === undefined) return { ok: true, worker: undefined };
  const worker = workerName(body['worker']);
  return worker.ok ? { ok: true, worker: worker.value } : worker;
}

/** A body's `lease_seconds`, LEASE_SECONDS_DEFAULT when absent. */
function leaseSeconds(value: unknown): Checked<number> {
  if (value === undefined) return { ok: true, value: LEASE_SECONDS_DEFAULT };
  const refusal = leaseSecondsRefusal(value);
  return refusal === null ? { ok: true, value: value as number } : { ok: false, error: invalid(refusal) };
}

/**
 * Claims run one at a time: each first puts orders whose lease has ended
 * back in the queue (a bounded step of the lease sweep), then scans the
 * durable pending orders oldest first, and waits until its moves are
 * durable before the next one starts, so concurrent workers get disjoint
 * sets instead of racing for the same oldest orders. Exactly-once does not
 * rest on this alone: the actor refuses a second move to processing (a
 * move must go forward).
 */
const claimChains = new WeakMap<AppContext, Promise<unknown>>();

/** POST /admin/v1/orders/claim {limit, worker, lease_seconds?} */
export const claimOrders: AdminHandler = async (ex, ctx, _params, body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['limit', 'worker', 'lease_seconds']);
  if (bad !== null) return sendError(ex, bad);
  const limit = b['limit'];
  if (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > CLAIM_LIMIT_MAX) {
    return sendError(ex, invalid(`limit must be an integer from 1 to ${CLAIM_LIMIT_MAX}.`));
  }
  const worker = workerName(b['worker']);
  if (!worker.ok) return sendError(ex, worker.error);
  const lease = leaseSeconds(b['lease_seconds']);
  if (!lease.ok) return sendError(ex, lease.error);
  const run = (): Promise<OrderRecord[]> => claim(ctx, limit as number, worker.value, lease.value);
  const previous = claimChains.get(ctx) ?? Promise.resolve();
  const claimed = previous.then(run, run);
  claimChains.set(ctx, claimed.catch(() => {}));
  const orders = await claimed;
  send(ex, 200, `{"ok":true,"worker":${JSON.stringify(worker.value)},"lease_seconds":${lease.value},"orders":[${orders.map(renderAdminOrder).join(',')}]}`);
};

async function claim(ctx: AppContext, limit: number, worker: string, leaseSeconds: number): Promise<OrderRecord[]> {
  await ctx.leases.step();
  await ctx.wal.flushed();
  const moves: Delivery[] = [];
  for (const { key } of ctx.store.tables.orderIndex.getRange({ start: ['pending'], end: ['pending', Infinity] })) {
    if (moves.length === limit) break;
    const id = (key as (string | number)[])[3] as string;
    const order = ctx.orders.read(id);
    const account = order === undefined ? undefined : ctx.registry.get(order.account);
    if (account === undefined) continue;
    // Each order's lease counts from the moment it is claimed.
    const leaseExpiresMs = leaseEnd(ctx.clock.wallMs(), leaseSeconds);
    const delivery = account.actor.send({ kind: 'set-status', orderId: id, to: 'processing', remains: null, reason: `claimed by ${worker}`, claim: { worker, leaseExpiresMs } });
    // A full mailbox ends this claim early; the worker asks again.
    if (delivery === null) break;
    // An order the operator (or the customer) moved meanwhile is refused by the actor and not claimed.
    if (delivery.decision.outcome.kind === 'moved') moves.push(delivery);
  }
  await Promise.all(moves.map((m) => m.durable));
  return moves.map((m) => m.decision.order!);
}

/** POST /admin/v1/orders/{id}/extend {worker, lease_seconds?}: the lease ends lease_seconds from now. */
export const extendLease: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['worker', 'lease_seconds']);
  if (bad !== null) return sendError(ex, bad);
  const worker = workerName(b['worker']);
  if (!worker.ok) return sendError(ex, worker.error);
  const lease = leaseSeconds(b['lease_seconds']);
  if (!lease.ok) return sendError(ex, lease.error);
  const account = await orderAccount(ex, ctx, id!);
  if (account === null) return;
  const leaseExpiresMs = leaseEnd(ctx.clock.wallMs(), lease.value);
  const decision = await applied(ex, account.actor.send({ kind: 'extend-lease', orderId: id!, worker: worker.value, leaseExpiresMs }));
  if (decision === null) return;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(decision.order!)}}`);
};

/** POST /admin/v1/orders/{id}/release {worker}: the order goes back to the claim queue, pending. */
export const releaseOrder: AdminHandler = async (ex, ctx, [id], body) => {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, ['worker']);
  if (bad !== null) return sendError(ex, bad);
  const worker = workerName(b['worker']);
  if (!worker.ok) return sendError(ex, worker.error);
  const account = await orderAccount(ex, ctx, id!);
  if (account === null) return;
  const decision = await applied(ex, account.actor.send({ kind: 'release', orderId: id!, worker: worker.value }));
  if (decision === null) return;
  send(ex, 200, `{"ok":true,"order":${renderAdminOrder(decision.order!)}}`);
};
