/**
 * The walk of the `orders` table beside the log: each placement claims its
 * row once; placements ahead of the walk leave the rows they pass waiting
 * for their own placement; rows no placement claims are reported.
 */
import { describe, expect, it } from 'vitest';
import type { LedgerSource, SourceRow } from '../../../src/ledger/index.js';
import { OrderRowCursor } from '../../../src/ledger/replay/order-row-cursor.js';
import { CREDIT, Ledger, useLedgerStores } from '../../helpers/ledger.js';

const { verify } = useLedgerStores();

/** A source of order rows only, keyed by their id (storage key = public id), in key order. */
function rowsSource(ids: string[]): LedgerSource {
  const rows: SourceRow<string>[] = ids.map((id) => ({ key: id, value: { id } }));
  const byKey = new Map(rows.map((r) => [r.key, r.value]));
  const none = (): never => expect.fail('the cursor reads only the orders table');
  return {
    events: none,
    wallets: none,
    idempotency: none,
    leases: none,
    indexCounts: none,
    countsRow: none,
    orderRows: () => rows,
    orderKey: (id) => id,
    orderRow: (key) => byKey.get(key),
    compareOrderKeys: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  };
}

describe('claiming rows', () => {
  it('placements in key order each meet their row at the cursor, and pass none', () => {
    const cursor = new OrderRowCursor(rowsSource(['a', 'b', 'c']));
    expect(['a', 'b', 'c'].map((id) => cursor.claim(id))).toEqual([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    expect(cursor.passedPeak).toBe(0);
    expect([...cursor.unclaimed()]).toEqual([]);
  });

  it('a placement ahead passes rows, which wait for their own placement', () => {
    const cursor = new OrderRowCursor(rowsSource(['a', 'b', 'c', 'd']));
    expect(cursor.claim('c')).toEqual({ id: 'c' });
    expect(cursor.passedPeak).toBe(2);
    expect(cursor.claimed('a')).toBe(false);
    expect(cursor.claimed('c')).toBe(true);
    expect(cursor.claimed('d')).toBe(false);
    expect(cursor.claim('a')).toEqual({ id: 'a' });
    expect(cursor.claimed('a')).toBe(true);
    expect([...cursor.unclaimed()].map((r) => r.key)).toEqual(['b', 'd']);
  });

  it('a second claim of a row says claimed; a claim of no row says missing', () => {
    const cursor = new OrderRowCursor(rowsSource(['a', 'b']));
    cursor.claim('a');
    expect(cursor.claim('a')).toBe('claimed');
    expect(cursor.claim('zz')).toBe('missing');
  });
});

describe('the row at the cursor', () => {
  it('is claimed by the order it names without computing a storage key', () => {
    const source = rowsSource(['a', 'b']);
    let keysComputed = 0;
    const counting: LedgerSource = { ...source, orderKey: (id) => (keysComputed++, source.orderKey(id)) };
    const cursor = new OrderRowCursor(counting);
    expect([cursor.claim('a'), cursor.claim('b')]).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(keysComputed).toBe(0);
  });

  it('may hold no record at all: the claim then looks the order up by its key', () => {
    const source = rowsSource(['a', 'b']);
    const rows: SourceRow<string>[] = [{ key: 'a', value: null }, { key: 'b', value: { id: 'b' } }];
    const cursor = new OrderRowCursor({ ...source, orderRows: () => rows });
    expect(cursor.claim('b')).toEqual({ id: 'b' });
    expect([...cursor.unclaimed()]).toEqual([{ key: 'a', value: null }]);
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
