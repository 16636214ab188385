/**
 * The durable orders as the order path reads them: by public id (the key
 * the id decrypts to), by number through the `numbers` table, and fresh ids
 * that come with the key they decrypt to.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OrderIds } from '../../src/ids/index.js';
import type { OrderRecord } from '../../src/ledger/index.js';
import { StoredOrders } from '../../src/wal/index.js';
import { tempStores } from '../helpers/temp-store.js';

const { open, cleanup } = tempStores('credit-order-api-stored-orders');
afterEach(cleanup);

const secret = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');

function row(id: string, number: number): OrderRecord {
  return { id, account: 1, service: 1, target: 'https://example.com/p/1', quantity: 10, rate: 100, charge: 1000, debit: 1000, status: 'pending', remains: null, channel: 'api', unlimited: false, createdAtMs: 1, seq: number, number };
}

/** Stored orders over a fresh store, with one order placed under a new id as number 7. */
function withOneOrder(): { orders: StoredOrders; id: string; key: string; placed: OrderRecord } {
  const { store } = open();
  const orders = new StoredOrders(store, new OrderIds(secret));
  const { id, key } = orders.newId(1_700_000_000_000);
  const placed = row(key, 7);
  store.tables.orders.putSync(key, placed);
  store.tables.numbers.putSync(7, id);
  return { orders, id, key, placed };
}

describe('StoredOrders', () => {
  it('makes ids whose storage key is the one their text decrypts to, one after another', () => {
    const { orders } = withOneOrder();
    const first = orders.newId(1_700_000_000_000);
    const second = orders.newId(1_700_000_000_000);
    expect(orders.keyOf(first.id)).toBe(first.key);
    expect(orders.keyOf(second.id)).toBe(second.key);
    expect(second.seq).toBe(first.seq + 1);
    expect(second.key).not.toBe(first.key);
  });

  it('keeps an order under the key of its id, and takes text that cannot be an id as its own key', () => {
    const { orders, id, key } = withOneOrder();
    expect(orders.keyOf(id)).toBe(key);
    expect(key).not.toBe(id);
    expect(orders.keyOf('not-an-order-id')).toBe('not-an-order-id');
  });

  it('reads an order by its public id, and nothing for an unknown id or text that cannot be one', () => {
    const { orders, id, placed } = withOneOrder();
    expect(orders.read(id)).toStrictEqual(placed);
    expect(orders.read(orders.newId(1_700_000_000_001).id)).toBeUndefined();
    expect(orders.read('not-an-order-id')).toBeUndefined();
  });

  it('finds no order for text that cannot be an id even when a row is stored under that text', () => {
    const { store } = open();
    const orders = new StoredOrders(store, new OrderIds(secret));
    store.tables.orders.putSync('written-by-hand', row('written-by-hand', 1));
    expect(orders.read('written-by-hand')).toBeUndefined();
  });

  it('reads an order by its number, and nothing for a number no order has', () => {
    const { orders, placed } = withOneOrder();
    expect(orders.readByNumber(7)).toStrictEqual(placed);
    expect(orders.readByNumber(8)).toBeUndefined();
  });
});
