/**
 * A wallet actor's surroundings without a server: its context over an
 * in-memory WAL (one service, ids counting from 1, answers rendered as the
 * HTTP front end renders them) and the order request a customer sends.
 */
import type { ActorContext, Request } from '../../src/actors/index.js';
import { renderAnswer } from '../../src/http/transport/answer.js';
import { OrderNumbers } from '../../src/ids/order-numbers.js';
import { withServiceDefaults, type IdempotencyRecord, type OrderRecord } from '../../src/ledger/index.js';
import { ManualClock } from '../../src/platform/clock.js';
import type { MemoryWal } from '../../src/wal/memory-wal.js';

/** The one service: 1,000 micro-credits a unit, cancels and refills allowed. */
export const SERVICE = withServiceDefaults({ id: 1, platform: 'p', name: 'n', rate: 1_000, min: 1, max: 1_000, enabled: true, cancel: true, refill: true });

export function actorContext(wal: MemoryWal, overrides: Partial<ActorContext> = {}): ActorContext {
  let ids = 0;
  let refills = 0;
  return {
    wal,
    clock: new ManualClock(),
    mailboxMax: 100,
    idempotencyRetentionMs: 86_400_000,
    readIdempotency: (key) => wal.get('idempotency', key) as IdempotencyRecord | undefined,
    orders: {
      newId: () => ({ id: `o-${++ids}`, key: `o-${ids}`, seq: ids }),
      keyOf: (id) => id,
      read: (id) => wal.get('orders', id) as OrderRecord | undefined,
    },
    services: { get: (id) => (id === SERVICE.id ? SERVICE : null) },
    refillIds: { next: () => ++refills },
    orderNumbers: new OrderNumbers(0),
    renderAnswer,
    ...overrides,
  };
}

/** An order of 10 units of SERVICE, with an Idempotency-Key or without. */
export function orderRequest(key: string | null): Request {
  return {
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
  };
}
