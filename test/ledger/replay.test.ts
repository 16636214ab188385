/**
 * The ledger replay itself: what it keeps in memory (per open order, never
 * per order ever placed), placements that arrive out of storage-key order,
 * and the same verdict over the simulator's in-memory image as over LMDB.
 */
import { describe, expect, it } from 'vitest';
import { type OrderRecord, replayLedger } from '../../src/ledger/index.js';
import { imageLedgerSource, orderIndexKey } from '../../src/wal/index.js';
import { emptyImage, tableKeyString, type DurableImage } from '../../src/wal/memory-wal.js';
import { CREDIT, Ledger, useLedgerStores } from '../helpers/ledger.js';

const { verify } = useLedgerStores();

/** The same ledger as the simulator's durable image (tables keyed as MemoryWal keys them). */
function image(ledger: Ledger): DurableImage {
  const out = emptyImage();
  out.events = structuredClone(ledger.events);
  for (const table of ['wallets', 'orders', 'idempotency'] as const) {
    for (const [key, value] of ledger.rows[table]) out.tables[table].set(tableKeyString(key), structuredClone(value));
  }
  for (const order of ledger.rows.orders.values() as Iterable<OrderRecord>) {
    if (!ledger.unindexed.has(order.id)) out.tables.orderIndex.set(tableKeyString(orderIndexKey(order)), order.account);
  }
  return out;
}

/** `n` orders of account 1, each completed `lag` orders after it was placed (the rest at the end). */
function processed(n: number, lag: number): Ledger {
  const ledger = new Ledger().account(1).credit(1, 1_000_000 * CREDIT);
  const id = (i: number): string => `o${String(i).padStart(8, '0')}`;
  for (let i = 0; i < n; i++) {
    ledger.place(1, id(i), 10, 100_000);
    if (i >= lag) ledger.move(id(i - lag), 'completed');
  }
  for (let i = Math.max(0, n - lag); i < n; i++) ledger.move(id(i), 'completed');
  return ledger;
}

describe('what the replay keeps', () => {
  it('per-order state follows the backlog, not the orders placed: 200 or 2,000 closed orders, the same peak', () => {
    const small = verify(processed(200, 3));
    const large = verify(processed(2_000, 3));
    expect(small.ok && large.ok).toBe(true);
    expect(large.counts.orders).toBe(2_000);
    // Open at once: the `lag` orders awaiting completion and the one just placed.
    expect(small.retained).toEqual({ openOrdersPeak: 4, passedRowsPeak: 0 });
    expect(large.retained).toEqual(small.retained);
  });

  it('orders that stay where their row says (pending) are never kept', () => {
    const ledger = new Ledger().account(1).credit(1, 100 * CREDIT);
    for (let i = 0; i < 500; i++) ledger.place(1, `p${String(i).padStart(4, '0')}`, 1, 100_000);
    expect(verify(ledger)).toMatchObject({ ok: true, counts: { orders: 500 }, retained: { openOrdersPeak: 0, passedRowsPeak: 0 } });
  });

  it('a backlog is what it keeps: every order placed before any is completed is held until its move', () => {
    expect(verify(processed(300, 300)).retained.openOrdersPeak).toBe(300);
  });
});

describe('placements out of storage-key order', () => {
  it('rows the walk passes wait for their placement, and still verify', () => {
    // Keys sort c < d < e but the log places e first (a wall clock stepped back).
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'e', 1, 100_000).place(1, 'c', 1, 100_000).place(1, 'd', 1, 100_000);
    ledger.move('c', 'canceled');
    const report = verify(ledger);
    expect(report.firstBroken).toBeNull();
    expect(report.retained.passedRowsPeak).toBe(2);
  });

  it('a second placement of an order is still named with the seq of the first', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'e', 1, 100_000).place(1, 'c', 1, 100_000);
    const first = { ...ledger.order('c') };
    ledger.place(1, 'c', 1, 100_000);
    ledger.rows.orders.set('c', first);
    expect(verify(ledger).broken).toMatchObject({ invariant: 'order-charge', seq: 5, order: 'c' });
    expect(verify(ledger).firstBroken).toMatch(/already placed at seq 4/);
  });

  it('an orders row passed by the walk and never placed is reported', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'e', 1, 100_000);
    ledger.rows.orders.set('a', { ...ledger.order('e'), id: 'a' });
    expect(verify(ledger).broken).toMatchObject({ invariant: 'order-charge', seq: null, order: 'a' });
  });
});

describe('the same replay over the in-memory image', () => {
  const consistent = (): Ledger =>
    new Ledger()
      .account(1)
      .credit(1, 100 * CREDIT)
      .place(1, 'o1', 10, 100_000, { idempotencyKey: 'k1' })
      .place(1, 'o2', 20, 100_000)
      .move('o1', 'processing')
      .move('o1', 'canceled')
      .move('o2', 'partial', 5)
      .account(2)
      .plan(2)
      .place(2, 'u1', 10, 100_000);

  it('gives the verdict LMDB gives on a consistent ledger', () => {
    const ledger = consistent();
    const fromMemory = replayLedger(imageLedgerSource(image(ledger)));
    expect(fromMemory.firstBroken).toBeNull();
    expect(fromMemory).toEqual(verify(ledger));
  });

  it('names the same broken invariant: a refund that is not the one due', () => {
    const ledger = consistent();
    const moved = ledger.last('order.status');
    moved.refund += 1;
    moved.balance += 1;
    ledger.wallet(1).credits += 1;
    const fromMemory = replayLedger(imageLedgerSource(image(ledger)));
    expect(fromMemory.broken).toMatchObject({ invariant: 'order-status', seq: 7, account: 1, order: 'o2' });
    expect(fromMemory.firstBroken).toMatch(/move to partial refunds 0.500001 credits but should refund 0.5 credits/);
    expect(fromMemory.firstBroken).toBe(verify(ledger).firstBroken);
  });

  it('a value that makes the replay throw is a finding at its seq, not a crash', () => {
    const ledger = consistent();
    const img = image(ledger);
    // A stored BigInt (msgpack holds them) where a status belongs: the sentence cannot even quote it as JSON.
    (img.events[6] as { to: unknown }).to = 10n;
    const report = replayLedger(imageLedgerSource(img));
    expect(report.broken).toMatchObject({ invariant: 'order-status', seq: 7, account: 1, order: 'o2' });
    expect(report.firstBroken).toMatch(/^Order status check failed at seq 7 \(account 1, order o2\): order.status cannot be replayed: .*BigInt/);
  });

  it('a failure that is not the log\'s (a row that cannot be read) fails the replay instead of being blamed on the log', () => {
    const source = imageLedgerSource(image(consistent()));
    const readError = new Error('EIO: the orders table could not be read');
    // The first row reads, the next one fails (while an event is replayed).
    const failing = {
      ...source,
      orderRows: () => {
        const rows = source.orderRows()[Symbol.iterator]();
        let reads = 0;
        return {
          [Symbol.iterator]: () => ({
            next: () => {
              if (++reads > 1) throw readError;
              return rows.next();
            },
          }),
        };
      },
    };
    expect(() => replayLedger(failing)).toThrow(readError);
  });

  it('names the same broken invariant: a status index that lost an order', () => {
    const ledger = consistent();
    ledger.unindexed.add('u1');
    const fromMemory = replayLedger(imageLedgerSource(image(ledger)));
    expect(fromMemory.firstBroken).toBe('Order status check failed at the tables: the status index lists 0 pending orders but the log leaves 1.');
    expect(verify(ledger).firstBroken).toBe(fromMemory.firstBroken);
  });
});
