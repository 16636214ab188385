/**
 * The actor's one prepare step: callers hand the actor a request without its
 * lookups, and the actor gathers them into a new command. A request is never
 * written to (each one here is deep-frozen, so a write would throw), and the
 * decision sees what the actor gathered: the order as last applied (a change
 * not yet durable included), its service, the stored Idempotency-Key record
 * and fresh ids.
 */
import { describe, expect, it } from 'vitest';
import { WalletActor, type Delivery, type Request } from '../../src/actors/index.js';
import type { RefillRecord, WalletRecord } from '../../src/ledger/index.js';
import { MemoryWal } from '../../src/wal/memory-wal.js';
import { actorContext, orderRequest as order } from '../helpers/actor.js';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

function setup(): { actor: WalletActor; wal: MemoryWal; send: (request: Request) => Delivery } {
  const wal = new MemoryWal({ onFatal: () => {} });
  const wallet: WalletRecord = { id: 7, credits: 1_000_000_000, banned: false, rateLimitPerMinute: 1_000, unlimitedExpiresMs: null };
  const actor = WalletActor.fresh(wallet, actorContext(wal));
  return { actor, wal, send: (request) => actor.send(deepFreeze(request))! };
}

describe('the actor prepare step', () => {
  it('gathers fresh ids and numbers; a refused order takes no number', () => {
    const { send } = setup();
    const first = send(order(null)).decision.order!;
    expect(first).toMatchObject({ id: 'o-1', number: 1 });
    const refused = send({ kind: 'order', requestId: 'r-2', channel: 'api', request: { ok: false, reason: { code: 'VALIDATION', status: 400, message: 'no' } } });
    expect(refused.decision.outcome.kind).toBe('error');
    expect(send(order(null)).decision.order).toMatchObject({ number: 2 });
  });

  it('gathers the Idempotency-Key record written by an earlier, not yet durable, order', () => {
    const { send, wal } = setup();
    const first = send(order('k'));
    expect(wal.unsyncedEntries).toBe(1);
    const again = send(order('k'));
    expect(again.decision.outcome).toEqual({ kind: 'replay', record: expect.objectContaining({ order: first.decision.order!.id, status: 201 }) });
    expect(again.decision.events).toEqual([]);
  });

  it('gathers the order as last applied and its service, for moves, cancels and refills', async () => {
    const { send, wal } = setup();
    const placed = send(order(null)).decision.order!;
    // Not yet durable: the next commands must see the pending row, not the stored one (none).
    const moved = send({ kind: 'set-status', orderId: placed.id, to: 'processing', remains: null });
    expect(moved.decision.outcome).toMatchObject({ kind: 'moved', order: { status: 'processing' } });
    const cancel = send({ kind: 'cancel', orderId: placed.id });
    expect(cancel.decision.outcome).toMatchObject({ kind: 'cancel-requested', order: { status: 'processing', cancelRequested: true } });
    send({ kind: 'set-status', orderId: placed.id, to: 'completed', remains: null });
    const refill = send({ kind: 'refill', orderId: placed.id });
    expect(refill.decision.outcome).toMatchObject({ kind: 'refill-opened', refill: { id: 1, order: placed.id } });
    wal.syncNext();
    await refill.durable;
    const stored = wal.get('refills', 1) as RefillRecord;
    const refillMove = send({ kind: 'refill-status', stored, to: 'in_progress' });
    expect(refillMove.decision.outcome.kind).toBe('changed');
    expect(refillMove.decision.refill).toMatchObject({ id: 1, status: 'in_progress' });
    expect(wal.get('numbers', 1)).toBe(placed.id);
  });
});
