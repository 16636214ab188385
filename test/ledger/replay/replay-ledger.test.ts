/**
 * The replay as a whole: the same verdict over the simulator's in-memory
 * image as over LMDB, a value that makes a rule
 * throw reported as a finding at its seq, and a failed read that is not the
 * log's fault failing the replay instead.
 */
import { describe, expect, it } from 'vitest';
import { replayLedger } from '../../../src/ledger/index.js';
import { imageLedgerSource } from '../../../src/wal/index.js';
import { CREDIT, Ledger, useLedgerStores } from '../../helpers/ledger.js';
import { imageOf, replayImage } from '../../helpers/ledger-image.js';

const { verify } = useLedgerStores();

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

describe('the same replay over the in-memory image', () => {
  it('gives the verdict LMDB gives on a consistent ledger', () => {
    const ledger = consistent();
    const fromMemory = replayImage(ledger);
    expect(fromMemory.firstBroken).toBeNull();
    expect(fromMemory).toEqual(verify(ledger));
  });

  it('names the same broken invariant: a refund that is not the one due', () => {
    const ledger = consistent();
    const moved = ledger.last('order.status');
    moved.refund += 1;
    moved.balance += 1;
    ledger.wallet(1).credits += 1;
    const fromMemory = replayImage(ledger);
    expect(fromMemory.broken).toMatchObject({ invariant: 'order-status', seq: 7, account: 1, order: 'o2' });
    expect(fromMemory.firstBroken).toMatch(/move to partial refunds 0.500001 credits but should refund 0.5 credits/);
    expect(fromMemory.firstBroken).toBe(verify(ledger).firstBroken);
  });

  it('a value that makes the replay throw is a finding at its seq, not a crash', () => {
    const ledger = consistent();
    const img = imageOf(ledger);
    // A stored BigInt (msgpack holds them) where a status belongs: the sentence cannot even quote it as JSON.
    (img.events[6] as { to: unknown }).to = 10n;
    const report = replayLedger(imageLedgerSource(img));
    expect(report.broken).toMatchObject({ invariant: 'order-status', seq: 7, account: 1, order: 'o2' });
    expect(report.firstBroken).toMatch(/^Order status check failed at seq 7 \(account 1, order o2\): order.status cannot be replayed: .*BigInt/);
  });

  it('such a finding names the order only when the event carries an order id', () => {
    const img = imageOf(consistent());
    // An event whose type the sentence cannot quote as JSON, with an order field that is not an id.
    Object.assign(img.events[1] as object, { type: 10n, order: 7 });
    const report = replayLedger(imageLedgerSource(img));
    expect(report.broken).toMatchObject({ invariant: 'balance', seq: 2, account: 1, order: null });
    expect(report.firstBroken).toMatch(/^Balance replay failed at seq 2 \(account 1\): 10 cannot be replayed: .*BigInt/);
  });

  it('a failure that is not the log\'s (a row that cannot be read) fails the replay instead of being blamed on the log', () => {
    const source = imageLedgerSource(imageOf(consistent()));
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
    const fromMemory = replayImage(ledger);
    expect(fromMemory.firstBroken).toBe('Order status check failed at the tables: the status index lists 0 pending orders but the log leaves 1.');
    expect(verify(ledger).firstBroken).toBe(fromMemory.firstBroken);
  });
});
