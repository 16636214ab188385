/**
 * The orders the replay holds: only those still to reach the status their
 * row ends in, so what it keeps follows the processing backlog, never the
 * orders ever placed; every other order is read from its row.
 */
import { describe, expect, it } from 'vitest';
import { orderPlaced } from '../../../src/ledger/replay/order-placed.js';
import { CREDIT, Ledger, useLedgerStores } from '../../helpers/ledger.js';
import { replayLedger } from '../../../src/ledger/index.js';
import { imageLedgerSource } from '../../../src/wal/index.js';
import { tableKeyString } from '../../../src/wal/memory-wal.js';
import { imageOf, replayImage, replayStateOf } from '../../helpers/ledger-image.js';

const { verify } = useLedgerStores();

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

describe('an order the replay does not hold', () => {
  /** Account 1 with o1 completed and o2 canceled in their rows, before any event is applied. */
  function placedBoth(): { ledger: Ledger; state: ReturnType<typeof replayStateOf> } {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000).place(1, 'o2', 10, 100_000);
    ledger.move('o1', 'completed').move('o2', 'canceled');
    return { ledger, state: replayStateOf(ledger) };
  }

  it('is read from its row once its placement claimed the row, and is unknown before', () => {
    const { ledger, state } = placedBoth();
    expect(state.orders.find('o1')).toBeUndefined();
    state.accounts.set(1, { balance: 10 * CREDIT, unlimitedExpiresMs: null, hasWallet: false });
    orderPlaced(state, 3, 1, state.accounts.get(1)!, { ...ledger.events[2] });
    expect(state.orders.find('o1')).toMatchObject({ account: 1, status: 'pending', debit: 1_000_000, final: { status: 'completed', remains: null } });
    expect(state.orders.find('o2')).toBeUndefined();
    expect(state.orders.find('nowhere')).toBeUndefined();
  });

  it('is let go once it stands where its row ends, and held while it does not', () => {
    const { ledger, state } = placedBoth();
    state.accounts.set(1, { balance: 10 * CREDIT, unlimitedExpiresMs: null, hasWallet: false });
    orderPlaced(state, 3, 1, state.accounts.get(1)!, { ...ledger.events[2] });
    const open = state.orders.find('o1')!;
    expect(state.orders.peak).toBe(1);
    state.orders.update('o1', { ...open, status: 'processing' });
    expect([...state.orders.entries()].map(([id]) => id)).toEqual(['o1']);
    state.orders.update('o1', { ...open, status: 'completed' });
    expect([...state.orders.entries()]).toEqual([]);
    expect(state.orders.peak).toBe(1);
  });
});

describe('where an order stands against its row', () => {
  it('an order whose row names another worker than the log leaves stays open and is named', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000).claim('o1', 'w1');
    ledger.order('o1').worker = 'w2';
    const ends = new Date(ledger.order('o1').leaseExpiresMs!).toISOString();
    expect(replayImage(ledger).firstBroken).toBe(
      `Order status check failed at account 1, order o1: the orders row says processing with remains null, worker w2, a lease ending ${ends} but the log leaves it processing with remains null, worker w1, a lease ending ${ends}.`,
    );
  });

  it('a row that holds another order (claimed under its id) is not an order of its own key', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000);
    const image = imageOf(ledger);
    // The row stored under key a0 holds order o1, whose placement claims it at the cursor; its status is not one.
    image.tables.orders.clear();
    image.tables.orders.set(tableKeyString('a0'), { ...ledger.order('o1'), status: 'lost' });
    image.events.push({ type: 'order.status', atMs: 1_700_000_100_000, account: 1, order: 'a0', from: 'pending', to: 'canceled', remains: null, refund: 0, balance: 9 * CREDIT });
    expect(replayLedger(imageLedgerSource(image)).firstBroken).toBe('Order status check failed at seq 4 (account 1, order a0): order.status moves an order that no earlier order.placed created.');
  });
});
