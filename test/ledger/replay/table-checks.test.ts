/**
 * The tables against the state the log leaves: wallets (b), orders rows
 * and their statuses (c, d), the status index and counts row (d'), and the
 * Idempotency-Key records (e).
 */
import { describe, expect, it } from 'vitest';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayLedger } from '../../../src/ledger/index.js';
import { imageLedgerSource } from '../../../src/wal/index.js';
import { tableKeyString } from '../../../src/wal/memory-wal.js';
import { imageOf, replayImage } from '../../helpers/ledger-image.js';

const ledger = (): Ledger => new Ledger().account(1).credit(1, 10 * CREDIT).place(1, 'o1', 10, 100_000, { idempotencyKey: 'k1' });

describe('the wallets table', () => {
  it('a wallet row without its account, an account without its row, and a row off its ledger are each named', () => {
    const stray = ledger();
    stray.rows.wallets.set(9, { ...stray.wallet(1), id: 9 });
    expect(replayImage(stray).firstBroken).toBe('Wallet check failed at account 9: the wallet row 9 has no account.created in the log.');
    const missing = ledger();
    missing.rows.wallets.delete(1);
    expect(replayImage(missing).firstBroken).toBe('Wallet check failed at account 1: the account was created in the log but has no wallet row.');
    const off = ledger();
    off.wallet(1).credits += 1;
    expect(replayImage(off).firstBroken).toBe('Wallet check failed at account 1: the wallet holds 9.000001 credits but its ledger replays to 9 credits.');
  });

  it('a plan window the grants do not leave is named', () => {
    const off = ledger();
    off.wallet(1).unlimitedExpiresMs = 0;
    expect(replayImage(off).firstBroken).toMatch(/the wallet row holds an unlimited-plan window to 1970-01-01T00:00:00.000Z but its plan grants leave no unlimited-plan window/);
  });
});

describe('the orders table and its counts', () => {
  it('an orders row whose status the log never reached is named with both', () => {
    const ahead = ledger();
    ahead.order('o1').status = 'completed';
    expect(replayImage(ahead).firstBroken).toBe('Order status check failed at account 1, order o1: the orders row says completed with remains null but the log leaves it pending with remains null.');
  });

  it('a counts row is checked when the store has one', () => {
    const counted = ledger();
    counted.countsRow = { pending: 1, processing: 0, in_progress: 0, completed: 0, partial: 0, canceled: 0 };
    expect(replayImage(counted).firstBroken).toBeNull();
    counted.countsRow = { pending: 2, processing: 0, in_progress: 0, completed: 0, partial: 0, canceled: 0 };
    expect(replayImage(counted).firstBroken).toBe('Order status check failed at the tables: the order counts row says 2 pending orders but the log leaves 1.');
  });
});

describe('the idempotency table', () => {
  it('counts its keys, and names a key of another form or pointing at another account\'s order', () => {
    expect(replayImage(ledger()).counts.idempotencyKeys).toBe(1);
    const malformed = ledger();
    malformed.rows.idempotency.set('nokey', { order: null });
    expect(replayImage(malformed).firstBroken).toBe('Idempotency check failed at the tables: the idempotency key "nokey" is not of the form accountId:key.');
    const foreign = ledger();
    foreign.rows.idempotency.set('2:k9', { order: 'o1' });
    expect(replayImage(foreign).firstBroken).toBe('Idempotency check failed at account 2, order o1: the idempotency key "k9" points at an order of account 1.');
    const dangling = ledger();
    dangling.rows.idempotency.set('1:k2', { order: 'gone' });
    expect(replayImage(dangling).firstBroken).toMatch(/the idempotency key "k2" points at an order that does not exist/);
  });

  it('names a key that points at a subscription no account placed', () => {
    const stray = ledger();
    stray.rows.idempotency.set('1:k5', { order: null, subscription: 9 });
    expect(replayImage(stray).firstBroken).toBe('Idempotency check failed at account 1: the idempotency key "k5" points at subscription 9, which account 1 did not place.');
  });

  it('names a key whose order is not an order id, rather than looking it up', () => {
    const numbered = ledger();
    numbered.rows.idempotency.set('1:k3', { order: 5 });
    expect(replayImage(numbered).firstBroken).toBe('Idempotency check failed at account 1: the idempotency key "k3" names order 5, which is not an order id.');
  });
});

describe('rows that are not what the server writes', () => {
  it('a wallet row that is not a record is named as holding no amount', () => {
    const empty = ledger();
    empty.rows.wallets.set(1, null);
    expect(replayImage(empty).firstBroken).toBe('Wallet check failed at account 1: the wallet holds undefined (not a whole number of micro-credits) but its ledger replays to 9 credits.');
  });

  it('an orders row no placement claimed is named by the id it holds, or by its key when it holds none', () => {
    const stray = ledger();
    stray.rows.orders.set('a', { ...stray.order('o1'), id: 'zz' });
    expect(replayImage(stray).firstBroken).toBe('Order charge check failed at account 1, order zz: the orders row has no order.placed in the log.');
    const nameless = ledger();
    nameless.rows.orders.set('a', { ...nameless.order('o1'), id: 5 });
    expect(replayImage(nameless).firstBroken).toBe('Order charge check failed at account 1, order a: the orders row has no order.placed in the log.');
  });

  it('a counts row that is not a record is named', () => {
    const counted = ledger();
    counted.countsRow = null;
    expect(replayImage(counted).firstBroken).toBe('Order status check failed at the tables: the order counts row says undefined pending orders but the log leaves 1.');
  });

  it('a key record that is not a record names no order, and is counted', () => {
    const odd = ledger();
    odd.rows.idempotency.set('1:k2', null);
    const report = replayImage(odd);
    expect(report.firstBroken).toBeNull();
    expect(report.counts.idempotencyKeys).toBe(2);
  });

  it('a key without an account before its colon is not of the form accountId:key', () => {
    const malformed = ledger();
    malformed.rows.idempotency.set(':k2', { order: 'o1' });
    expect(replayImage(malformed).firstBroken).toBe('Idempotency check failed at the tables: the idempotency key ":k2" is not of the form accountId:key.');
  });
});

describe('the lease index', () => {
  const claimed = (): Ledger => ledger().claim('o1', 'w1');
  const endsMs = (l: Ledger): number => l.order('o1').leaseExpiresMs!;
  const iso = (ms: number): string => new Date(ms).toISOString();
  /** The replay of the ledger with its lease index replaced by `keys`, through a source whose orderKey takes only ids. */
  function withLeases(l: Ledger, keys: unknown[]): string | null {
    const image = imageOf(l);
    image.tables.leases = new Map(keys.map((key) => [tableKeyString(key as never), 1]));
    const source = imageLedgerSource(image);
    const orderKey = (id: string): string => {
      if (typeof id !== 'string') throw new TypeError('an order id is a string');
      return source.orderKey(id);
    };
    return replayLedger({ ...source, orderKey }).firstBroken;
  }

  it('holds when each processing order under a lease has its entry at its end', () => {
    expect(withLeases(claimed(), [[endsMs(claimed()), 'o1']])).toBeNull();
  });

  it('names an entry at another end than the row\'s lease, and one of an order not processing', () => {
    const l = claimed();
    expect(withLeases(l, [[endsMs(l) + 1, 'o1']])).toBe(
      `Lifecycle check failed at account 1, order o1: the lease index holds a lease ending ${iso(endsMs(l) + 1)} but the orders row is processing with remains null, worker w1, a lease ending ${iso(endsMs(l))}.`,
    );
    expect(withLeases(ledger(), [[5_000, 'o1']])).toBe('Lifecycle check failed at account 1, order o1: the lease index holds a lease ending 1970-01-01T00:00:05.000Z but the orders row is pending with remains null.');
  });

  it('names an entry whose key is not [end, order id]', () => {
    expect(withLeases(ledger(), ['o1'])).toBe('Lifecycle check failed at account 1, order o1: the lease index holds a lease ending undefined but the orders row is pending with remains null.');
    expect(withLeases(ledger(), [[5_000, 7]])).toBe('Lifecycle check failed at order 7: the lease index holds a lease ending 1970-01-01T00:00:05.000Z but the orders row is undefined with remains undefined.');
  });

  it('names a processing order under a lease that has no entry', () => {
    expect(withLeases(claimed(), [])).toBe('Lifecycle check failed at the tables: the lease index holds 0 leases but the log leaves 1 processing orders under a lease.');
  });
});
