/**
 * The tables against the state the log leaves: wallets (b), orders rows
 * and their statuses (c, d), the status index and counts row (d'), and the
 * Idempotency-Key records (e).
 */
import { describe, expect, it } from 'vitest';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { replayImage } from '../../helpers/ledger-image.js';

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
});
