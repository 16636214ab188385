/**
 * The stores the replay reads: an LMDB store through one read transaction
 * and the simulator's durable image, each handing over its tables as
 * stored; and the counts row a store keeps (orders per status), read only
 * when every status holds a whole count.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OrderIds } from '../../../src/ids/index.js';
import { isCounts, type LogEvent, type SourceRow } from '../../../src/ledger/index.js';
import { compareOrderKeys, imageLedgerSource, storeLedgerSource, type Store } from '../../../src/wal/index.js';
import { emptyImage, type DurableImage } from '../../../src/wal/memory-wal.js';
import { tempStores } from '../../helpers/temp-store.js';

describe('isCounts', () => {
  const counts = { pending: 1, processing: 0, in_progress: 2, completed: 3, partial: 0, canceled: 4 };

  it('accepts a count for every status', () => {
    expect(isCounts(counts)).toBe(true);
  });

  it('refuses a row missing a status, with a count that is not a whole number, or not a record', () => {
    const { canceled: _, ...missing } = counts;
    expect(isCounts(missing)).toBe(false);
    expect(isCounts({ ...counts, partial: 1.5 })).toBe(false);
    expect(isCounts({ ...counts, partial: '1' })).toBe(false);
    expect(isCounts(null)).toBe(false);
    expect(isCounts(7)).toBe(false);
  });
});

/** The rows of a source's table as plain key and value pairs. */
function pairs(rows: Iterable<SourceRow>): SourceRow[] {
  return [...rows].map(({ key, value }) => ({ key, value }));
}

const event = (atMs: number): LogEvent => ({ type: 'credits.adjusted', atMs, account: 1, amount: 1, reason: 'test', balance: atMs });
const counts = { pending: 1, processing: 0, in_progress: 0, completed: 2, partial: 0, canceled: 0 };

describe('compareOrderKeys', () => {
  it('orders keys by their code units, as LMDB orders their bytes', () => {
    expect(compareOrderKeys('a', 'b')).toBe(-1);
    expect(compareOrderKeys('b', 'a')).toBe(1);
    expect(compareOrderKeys('ab', 'ab')).toBe(0);
    expect(compareOrderKeys('B', 'a')).toBe(-1);
    expect(compareOrderKeys('a1', 'a')).toBe(1);
  });
});

describe('storeLedgerSource', () => {
  const { open, cleanup } = tempStores('credit-order-api-ledger-source');
  afterEach(cleanup);
  const secret = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');

  /** A store with one row in each table the replay reads. */
  function written(): Store {
    const { store } = open();
    const { tables } = store;
    store.log.putSync(1, event(10));
    store.log.putSync(2, event(20));
    tables.wallets.putSync(1, { id: 1 });
    tables.orders.putSync('b-order', { id: 'b-order' });
    tables.orders.putSync('a-order', { id: 'a-order' });
    tables.idempotency.putSync('1:k', { fingerprint: 'f' });
    tables.leases.putSync([5, 'a-order'], 1);
    tables.orderIndex.putSync(['completed', 1, 1, 'a-order'], 1);
    tables.orderIndex.putSync(['pending', 1, 2, 'b-order'], 1);
    tables.orderIndex.putSync(['completed', 2, 3, 'c-order'], 1);
    tables.meta.putSync('orderCounts', counts);
    tables.subscriptions.putSync(4, { id: 4 });
    return store;
  }

  it('hands over every table as one read transaction saw it, not what was written after', () => {
    const store = written();
    const txn = store.root.useReadTransaction();
    try {
      const { tables } = store;
      store.log.putSync(3, event(30));
      tables.wallets.putSync(2, { id: 2 });
      tables.orders.putSync('c-order', { id: 'c-order' });
      tables.idempotency.putSync('1:l', { fingerprint: 'g' });
      tables.leases.putSync([6, 'b-order'], 1);
      tables.orderIndex.putSync(['pending', 3, 4, 'd-order'], 1);
      tables.meta.putSync('orderCounts', { ...counts, pending: 2 });
      tables.subscriptions.putSync(5, { id: 5 });
      const source = storeLedgerSource(store, txn);
      expect(pairs(source.events())).toEqual([{ key: 1, value: event(10) }, { key: 2, value: event(20) }]);
      expect(pairs(source.wallets())).toEqual([{ key: 1, value: { id: 1 } }]);
      expect(pairs(source.orderRows())).toEqual([{ key: 'a-order', value: { id: 'a-order' } }, { key: 'b-order', value: { id: 'b-order' } }]);
      expect(source.orderRow('a-order')).toEqual({ id: 'a-order' });
      expect(source.orderRow('c-order')).toBeUndefined();
      expect(pairs(source.idempotency())).toEqual([{ key: '1:k', value: { fingerprint: 'f' } }]);
      expect(pairs(source.leases())).toEqual([{ key: [5, 'a-order'], value: 1 }]);
      expect(source.indexCounts()).toStrictEqual({ pending: 1, processing: 0, in_progress: 0, completed: 2, partial: 0, canceled: 0 });
      expect(source.countsRow()).toStrictEqual(counts);
      expect(pairs(source.subscriptions!())).toEqual([{ key: 4, value: { id: 4 } }]);
      expect(source.compareOrderKeys).toBe(compareOrderKeys);
    } finally {
      txn.done();
    }
  });

  it('finds no counts row in a store without one', () => {
    const { store } = open();
    const txn = store.root.useReadTransaction();
    try {
      expect(storeLedgerSource(store, txn).countsRow()).toBeUndefined();
    } finally {
      txn.done();
    }
  });

  it('finds an order by the key its id decrypts to with the store’s secret, and by the text itself otherwise', () => {
    const store = written();
    store.tables.meta.putSync('orderIdSecret', secret);
    const { id, key } = new OrderIds(secret).next(1_700_000_000_000);
    const txn = store.root.useReadTransaction();
    try {
      const source = storeLedgerSource(store, txn);
      expect(source.orderKey(id)).toBe(key);
      expect(source.orderKey('a-order')).toBe('a-order');
    } finally {
      txn.done();
    }
  });

  it('takes ids as keys in a store without a secret of 16 bytes, or whose secret came after the transaction', () => {
    const { id } = new OrderIds(secret).next(1_700_000_000_000);
    for (const stored of [undefined, secret.subarray(0, 15), Buffer.concat([secret, secret.subarray(0, 1)])]) {
      const store = written();
      if (stored !== undefined) store.tables.meta.putSync('orderIdSecret', stored);
      const txn = store.root.useReadTransaction();
      try {
        expect(storeLedgerSource(store, txn).orderKey(id)).toBe(id);
      } finally {
        txn.done();
      }
    }
    const store = written();
    const txn = store.root.useReadTransaction();
    try {
      store.tables.meta.putSync('orderIdSecret', secret);
      expect(storeLedgerSource(store, txn).orderKey(id)).toBe(id);
    } finally {
      txn.done();
    }
  });
});

describe('imageLedgerSource', () => {
  /** The simulator's durable image with rows in each table the replay reads, keyed as MemoryWal keys them (JSON). */
  function image(): DurableImage {
    const img = emptyImage();
    img.events.push(event(10), event(20));
    img.tables.wallets.set('1', { id: 1 });
    for (const id of ['order-b', 'order-c', 'order-a']) img.tables.orders.set(JSON.stringify(id), { id });
    img.tables.idempotency.set('"1:k"', { fingerprint: 'f' });
    img.tables.leases.set('[5,"order-a"]', 1);
    img.tables.orderIndex.set('["completed",1,1,"order-a"]', 1);
    img.tables.orderIndex.set('["pending",1,2,"order-b"]', 1);
    img.tables.orderIndex.set('["completed",2,3,"order-c"]', 1);
    img.tables.subscriptions.set('4', { id: 4 });
    return img;
  }

  it('numbers the events from 1 and hands over each table with its keys parsed', () => {
    const source = imageLedgerSource(image());
    expect(pairs(source.events())).toEqual([{ key: 1, value: event(10) }, { key: 2, value: event(20) }]);
    expect(pairs(source.wallets())).toEqual([{ key: 1, value: { id: 1 } }]);
    expect(pairs(source.idempotency())).toEqual([{ key: '1:k', value: { fingerprint: 'f' } }]);
    expect(pairs(source.leases())).toEqual([{ key: [5, 'order-a'], value: 1 }]);
    expect(pairs(source.subscriptions!())).toEqual([{ key: 4, value: { id: 4 } }]);
  });

  it('hands over the orders in key order, kept under their public ids', () => {
    const source = imageLedgerSource(image());
    expect(pairs(source.orderRows()).map(({ key }) => key)).toEqual(['order-a', 'order-b', 'order-c']);
    expect(source.orderKey('order-b')).toBe('order-b');
    expect(source.orderRow('order-b')).toEqual({ id: 'order-b' });
    expect(source.orderRow('order-d')).toBeUndefined();
    expect(source.compareOrderKeys).toBe(compareOrderKeys);
  });

  it('counts the status index per status, zero where it has none', () => {
    expect(imageLedgerSource(image()).indexCounts()).toStrictEqual({ pending: 1, processing: 0, in_progress: 0, completed: 2, partial: 0, canceled: 0 });
    expect(imageLedgerSource(emptyImage()).indexCounts()).toStrictEqual({ pending: 0, processing: 0, in_progress: 0, completed: 0, partial: 0, canceled: 0 });
  });

  it('reads the counts row under `orderCounts`, and nothing where the image has none', () => {
    const img = image();
    expect(imageLedgerSource(img).countsRow()).toBeUndefined();
    img.tables.meta.set('"orderCounts"', counts);
    expect(imageLedgerSource(img).countsRow()).toStrictEqual(counts);
  });
});
