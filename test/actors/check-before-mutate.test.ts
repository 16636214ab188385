/**
 * The wallet actor checks before it mutates: when a broken invariant stops
 * a command (a check of its rows, the answer its Idempotency-Key remembers,
 * the WAL refusing the entry), nothing in memory has moved, so memory still
 * equals what was committed: the wallet, its token bucket, the next order
 * number, the mailbox and the keys pending.
 */
import { describe, expect, it } from 'vitest';
import { WalletActor } from '../../src/actors/index.js';
import { renderAnswer } from '../../src/http/transport/answer.js';
import { OrderNumbers } from '../../src/ids/order-numbers.js';
import type { WalletRecord } from '../../src/ledger/index.js';
import { assert, InvariantError } from '../../src/platform/index.js';
import { MemoryWal } from '../../src/wal/memory-wal.js';
import { actorContext, orderRequest as order } from '../helpers/actor.js';

const WALLET: WalletRecord = { id: 7, credits: 1_000_000, banned: false, rateLimitPerMinute: 1_000, unlimitedExpiresMs: null };

function setup(renderFails: () => boolean): { actor: WalletActor; wal: MemoryWal; numbers: OrderNumbers } {
  const wal = new MemoryWal({ onFatal: () => {} });
  const numbers = new OrderNumbers(0);
  const ctx = actorContext(wal, {
    orderNumbers: numbers,
    // Stands for a renderer with a bug: it meets an outcome it has no answer for.
    renderAnswer: (outcome, requestId) => {
      assert(!renderFails(), 'this outcome has an answer of its own', outcome.kind);
      return renderAnswer(outcome, requestId);
    },
  });
  return { actor: WalletActor.fresh(WALLET, ctx), wal, numbers };
}

/** Everything the actor holds in memory that a command may change. */
function memory(actor: WalletActor, numbers: OrderNumbers, key: string): unknown {
  return { wallet: { ...actor.state.wallet }, bucket: { ...actor.state.bucket }, number: numbers.peek(), depth: actor.depth, idle: actor.idle, keyPending: actor.idempotencyKeyPending(key) };
}

describe('the wallet actor checks before it mutates', () => {
  it('an order whose remembered answer breaks an invariant leaves memory as committed; the next order is the first', async () => {
    let fails = true;
    const { actor, wal, numbers } = setup(() => fails);
    const before = memory(actor, numbers, 'k');
    expect(() => actor.send(order('k'))).toThrow(InvariantError);
    expect(memory(actor, numbers, 'k')).toEqual(before);
    expect(wal.unsyncedEntries).toBe(0);

    fails = false;
    const placed = actor.send(order('k'))!;
    expect(placed.decision.order).toMatchObject({ number: 1, debit: 10_000 });
    expect(actor.state.wallet.credits).toBe(1_000_000 - 10_000);
    expect(actor.idempotencyKeyPending('k')).toBe(true);
    wal.syncAll();
    await placed.durable;
    expect(wal.get('wallets', 7)).toMatchObject({ credits: 1_000_000 - 10_000 });
  });

  it('an order the WAL refuses (closed) leaves memory as committed', async () => {
    const { actor, wal, numbers } = setup(() => false);
    const placed = actor.send(order(null))!;
    wal.syncAll();
    await placed.durable;
    await wal.close();
    const before = memory(actor, numbers, 'k');
    expect(() => actor.send(order('k'))).toThrow(/invariant: no append after the WAL was closed/);
    expect(memory(actor, numbers, 'k')).toEqual(before);
    expect(actor.state.wallet).toEqual(wal.get('wallets', 7));
  });
});
