import { describe, expect, it } from 'vitest';
import { readOrderPayload, type Command, type OrderRequest } from '../../src/ledger/decide.js';
import type { OrderPayload, ServiceRecord } from '../../src/ledger/index.js';
import { CREDIT, decideAt, refusalOf, service, stateOf } from './decide-fixture.js';

/**
 * Placing an order, decided in process: how its payload is read by its
 * service's type, the sentences of its refusals, and the record it leaves.
 * Charges are worked out here: units × runs × rate in micro-credits.
 */

function orderCommand(payload: OrderPayload, svc: ServiceRecord | null, idempotency: { key: string; fingerprint: string; prior: string | null } | null = null): Extract<Command, { kind: 'order' }> {
  const request: OrderRequest = {
    ok: true,
    payload,
    service: svc,
    idempotency: idempotency === null ? null : { key: idempotency.key, fingerprint: idempotency.fingerprint },
    forceJoin: null,
  };
  const prior = idempotency?.prior == null ? null : { fingerprint: idempotency.prior, status: 201, body: '{}', order: 'ord-0', atMs: 0 };
  return { kind: 'order', requestId: 'req-1', channel: 'api', request, orderId: 'ord-1', seq: 1, number: 1, prior };
}

describe('readOrderPayload', () => {
  it("an unknown service's payload is taken as sent, its quantity 0 when absent", () => {
    expect(readOrderPayload({ serviceId: 9, target: 't', quantity: 5 }, null)).toEqual({ ok: true, input: { serviceId: 9, target: 't', quantity: 5, extras: {} } });
    expect(readOrderPayload({ serviceId: 9, target: 't' }, null)).toEqual({ ok: true, input: { serviceId: 9, target: 't', quantity: 0, extras: {} } });
  });

  it('a Subscriptions service takes no orders', () => {
    const subs = service({ id: 12, type: 'Subscriptions' });
    expect(readOrderPayload({ serviceId: 12, target: 't', quantity: 5, username: 'bob' }, subs)).toEqual({
      ok: false,
      error: {
        code: 'VALIDATION',
        status: 400,
        message:
          'Service 12 takes subscriptions, not orders: place one with POST /api/v1/subscription {service, username, min, max, posts, old_posts, delay, expiry} (API v2: action=add with the same fields); each post\'s delivery becomes an order of its own.',
      },
    });
  });
});

describe('order refusals, with their sentences', () => {
  it('SERVICE names the id sent', () => {
    expect(refusalOf(decideAt(stateOf(), orderCommand({ serviceId: 999, target: 't', quantity: 100 }, null)))).toEqual({
      code: 'SERVICE',
      message: 'Service 999 does not exist or is disabled.',
    });
  });

  it('BALANCE names the charge and the credits held', () => {
    const d = decideAt(stateOf({ credits: 5 * CREDIT + 250_000 }), orderCommand({ serviceId: 7, target: 't', quantity: 100 }, service()));
    expect(refusalOf(d)).toEqual({ code: 'BALANCE', message: 'This order costs 10 credits but the wallet holds 5.25.' });
  });

  it('IDEMPOTENCY when a key comes back with another payload', () => {
    const d = decideAt(stateOf(), orderCommand({ serviceId: 7, target: 't', quantity: 100 }, service(), { key: 'k1', fingerprint: 'new', prior: 'old' }));
    expect(refusalOf(d)).toEqual({ code: 'IDEMPOTENCY', message: 'This Idempotency-Key was already used with a different payload; use a new key for a new order.' });
    expect(d.events).toEqual([]);
  });

  it('a stored record without the key it is stored under is a broken command: the decision stops', () => {
    const keyless = orderCommand({ serviceId: 7, target: 't', quantity: 100 }, service(), { key: 'k1', fingerprint: 'f1', prior: 'f1' });
    expect(() => decideAt(stateOf(), { ...keyless, request: { ...keyless.request, idempotency: null } as OrderRequest })).toThrow(
      'invariant: a stored Idempotency-Key record is gathered only for a request that sent its key',
    );
  });

  it('drip-feed runs that take the charge past the largest amount are QTY', () => {
    const big = service({ rate: 1_000_000_000, dripfeed: true });
    const d = decideAt(stateOf(), orderCommand({ serviceId: 7, target: 't', quantity: 10_000, runs: 1_000, interval: 10 }, big));
    expect(refusalOf(d)).toEqual({ code: 'QTY', message: 'quantity × runs × rate is larger than the largest supported charge; order fewer runs.' });
    expect(d.events).toEqual([]);
  });

  it('a single run whose charge does not fit is a broken catalogue: the decision stops', () => {
    const broken = service({ rate: 1_000_000_000_000 });
    expect(() => decideAt(stateOf(), orderCommand({ serviceId: 7, target: 't', quantity: 10_000 }, broken))).toThrow(
      'invariant: the charge of a single run must fit (10000 × 1000000000000 overflows)',
    );
  });
});

describe('the placed order', () => {
  it('a Default order without inputs keeps no extras field; a drip-feed one keeps its runs and is charged for them', () => {
    const plain = decideAt(stateOf(), orderCommand({ serviceId: 7, target: 't', quantity: 100 }, service()));
    expect(plain.order).not.toHaveProperty('extras');
    expect(plain.order).not.toHaveProperty('type');
    expect(plain.order?.charge).toBe(100 * 100_000);
    const drip = decideAt(stateOf(), orderCommand({ serviceId: 7, target: 't', quantity: 100, runs: 3, interval: 10 }, service({ dripfeed: true })));
    expect(drip.order?.extras).toEqual({ runs: 3, interval: 10 });
    expect(drip.order?.charge).toBe(3 * 100 * 100_000);
    expect(drip.state.wallet.credits).toBe(100 * CREDIT - 3 * 100 * 100_000);
  });
});
