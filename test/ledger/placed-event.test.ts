/**
 * The order.placed event of a new order (placedEvent): it carries the
 * order's fields and the balance its debit leaves, and the optional fields
 * (order type, extras, subscription, post) only when the order has them, so
 * that the log holds no empty keys for a plain order.
 */
import { describe, expect, it } from 'vitest';
import type { OrderRecord } from '../../src/ledger/index.js';
import { placedEvent } from '../../src/ledger/placed-event.js';
import { ORDER as BASE, ORDER_AT_MS } from './order-fixture.js';

const AT_MS = ORDER_AT_MS;
const ORDER: OrderRecord = { ...BASE, channel: 'panel', number: 41 };

describe('the order.placed event', () => {
  it("carries the order's money fields, the balance it leaves and the Idempotency-Key", () => {
    expect(placedEvent(ORDER, 97_500, { key: 'k-1' }, AT_MS + 5)).toStrictEqual({
      type: 'order.placed',
      atMs: AT_MS + 5,
      account: 7,
      order: 'ord-1',
      number: 41,
      service: 3,
      quantity: 100,
      rate: 25,
      charge: 2_500,
      debit: 2_500,
      balance: 97_500,
      channel: 'panel',
      idempotencyKey: 'k-1',
    });
    expect(placedEvent(ORDER, 97_500, null, AT_MS).idempotencyKey).toBeNull();
  });

  it('leaves out the order type, extras, subscription and post of an order that has none', () => {
    const keys = Object.keys(placedEvent(ORDER, 97_500, null, AT_MS));
    for (const key of ['orderType', 'extras', 'subscription', 'post']) expect(keys, key).not.toContain(key);
  });

  it("carries a typed order's type and extras, and a subscription's id and post", () => {
    const order: OrderRecord = { ...ORDER, type: 'Poll', extras: { answerNumber: 2 }, subscription: 12, post: 'post-9' };
    expect(placedEvent(order, 97_500, null, AT_MS)).toMatchObject({ orderType: 'Poll', extras: { answerNumber: 2 }, subscription: 12, post: 'post-9' });
  });
});
