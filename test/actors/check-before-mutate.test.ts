/**
 * The wallet actor checks before it mutates: when a broken invariant stops
 * a command (a check of its rows, the answer its Idempotency-Key remembers,
 * the WAL refusing the entry), nothing in memory has moved, so memory still
 * equals what was committed: the wallet, its token bucket, the next order
 * number, the mailbox and the keys pending.
 */
import { describe, expect, it } from 'vitest';
import { WalletActor, type ActorContext, type Request } from '../../src/actors/index.js';
import { renderAnswer } from '../../src/http/transport/answer.js';
import { OrderNumbers } from '../../src/ids/order-numbers.js';
import { withServiceDefaults, type IdempotencyRecord, type OrderRecord, type WalletRecord } from '../../src/ledger/index.js';
import { assert, InvariantError, ManualClock } from '../../src/platform/index.js';
import { MemoryWal } from '../../src/wal/memory-wal.js';

const SERVICE = withServiceDefaults({ id: 1, platform: 'p', name: 'n', rate: 1_000, min: 1, max: 1_000, enabled: true, cancel: true, refill: true });
const WALLET: WalletRecord = { id: 7, credits: 1_000_000, banned: false, rateLimitPerMinute: 1_000, unlimitedExpiresMs: null };

function setup(renderFails: () => boolean): { actor: WalletActor; wal: MemoryWal; numbers: OrderNumbers } {
  const wal = new MemoryWal({ onFatal: () => {} });
  const numbers = new OrderNumbers(0);
  let ids = 0;
  const ctx: ActorContext = {
    wal,
    clock: new ManualClock(),
    mailboxMax: 100,
    idempotencyRetentionMs: 86_400_000,
    readIdempotency: (key) => wal.get('idempotency', key) as IdempotencyRecord | undefined,
    readOrder: (id) => wal.get('orders', id) as OrderRecord | undefined,
    orderKey: (id) => id,
    readService: (id) => (id === SERVICE.id ? SERVICE : null),
    newOrderId: () => ({ orderId: `o-${++ids}`, seq: ids }),
    newRefillId: () => 1,
    orderNumbers: numbers,
    // Stands for a renderer with a bug: it meets an outcome it has no answer for.
    renderAnswer: (outcome, requestId) => {
      assert(!renderFails(), 'this outcome has an answer of its own', outcome.kind);
      return renderAnswer(outcome, requestId);
    },
  };
  return { actor: WalletActor.fresh(WALLET, ctx), wal, numbers };
}

const order = (key: string | null): Request => ({
  kind: 'order',
  requestId: 'r-1',
  channel: 'api',
  request: {
    ok: true,
    payload: { serviceId: 1, target: 'https://x.test/1', quantity: 10 },
    service: SERVICE,
    idempotency: key === null ? null : { key, fingerprint: 'fp' },
    forceJoin: null,
  },
});

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
