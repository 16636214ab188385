/**
 * A finding's sentence: the check that failed, then where (seq, account,
 * order, or the tables), then what; `fail` stops the replay with it.
 */
import { describe, expect, it } from 'vitest';
import { Broken, fail, finding } from '../../../src/ledger/replay/finding.js';

describe('where a finding is', () => {
  it('at a seq, with the account and order it names', () => {
    expect(finding('order-status', 7, 1, 'o2', 'the refund is wrong.')).toEqual({
      invariant: 'order-status',
      seq: 7,
      account: 1,
      order: 'o2',
      sentence: 'Order status check failed at seq 7 (account 1, order o2): the refund is wrong.',
    });
  });

  it('at a seq alone, at an account alone, or in the tables', () => {
    expect(finding('log-sequence', 3, null, null, 'x.').sentence).toBe('Log sequence check failed at seq 3: x.');
    expect(finding('wallet', null, 4, null, 'x.').sentence).toBe('Wallet check failed at account 4: x.');
    expect(finding('idempotency', null, null, null, 'x.').sentence).toBe('Idempotency check failed at the tables: x.');
  });

  it('each family of invariants has its own label', () => {
    const labels = (['balance', 'order-charge', 'lifecycle'] as const).map((i) => finding(i, 1, null, null, 'x.').sentence.split(' failed')[0]);
    expect(labels).toEqual(['Balance replay', 'Order charge check', 'Lifecycle check']);
  });
});

describe('fail', () => {
  it('throws the finding as Broken, its message the sentence', () => {
    const thrown = (() => {
      try {
        fail('balance', 2, 1, null, 'below zero.');
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(Broken);
    expect((thrown as Broken).finding).toEqual(finding('balance', 2, 1, null, 'below zero.'));
    expect((thrown as Broken).message).toBe('Balance replay failed at seq 2 (account 1): below zero.');
  });
});
