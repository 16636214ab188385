/**
 * The event types the replay knows and where each is applied: an unknown
 * type stops the replay (it could move money unseen), every known type
 * must name an account opened before it (service.saved names none), and
 * the types that move no money need nothing more.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../src/ledger/index.js';
import { applyEvent, invariantOfType } from '../../../src/ledger/replay/known-events.js';
import { CREDIT, Ledger } from '../../helpers/ledger.js';
import { findingOf, replayImage, replayStateOf } from '../../helpers/ledger-image.js';

function push(ledger: Ledger, event: Record<string, unknown>): Ledger {
  ledger.events.push({ atMs: 1_700_000_100_000, ...event } as unknown as LogEvent);
  return ledger;
}

describe('which entries are events', () => {
  it('an unknown type, or an entry that is not an event, is a log-sequence finding', () => {
    const state = replayStateOf(new Ledger());
    expect(findingOf(() => applyEvent(state, 1, { type: 'credits.gifted', account: 1 })).sentence).toBe(
      'Log sequence check failed at seq 1: the event type "credits.gifted" is unknown, so its effect on balances cannot be checked.',
    );
    const notAnEvent = 'Log sequence check failed at seq 1: the entry is not an event object.';
    expect(findingOf(() => applyEvent(state, 1, 'account.created')).sentence).toBe(notAnEvent);
    expect(findingOf(() => applyEvent(state, 1, null)).sentence).toBe(notAnEvent);
    expect(findingOf(() => applyEvent(state, 1, { account: 1 })).sentence).toBe(
      'Log sequence check failed at seq 1: the event type undefined is unknown, so its effect on balances cannot be checked.',
    );
    expect(findingOf(() => applyEvent(state, 1, { type: 'toString', account: 1 })).sentence).toBe(
      'Log sequence check failed at seq 1: the event type "toString" is unknown, so its effect on balances cannot be checked.',
    );
    // A type that is not a string, even one that reads as a known type's name.
    expect(findingOf(() => applyEvent(state, 1, { type: ['account.updated'], account: 1 })).sentence).toBe(
      'Log sequence check failed at seq 1: the event type ["account.updated"] is unknown, so its effect on balances cannot be checked.',
    );
  });
});

describe('the account an event names', () => {
  it('must be a valid id of an account opened earlier', () => {
    const state = replayStateOf(new Ledger());
    expect(findingOf(() => applyEvent(state, 1, { type: 'account.updated', account: 'one' })).sentence).toBe('Balance replay failed at seq 1: account.updated does not name a valid account id (one).');
    expect(findingOf(() => applyEvent(state, 1, { type: 'order.rejected', account: 3 })).sentence).toBe('Balance replay failed at seq 1 (account 3): order.rejected names an account that no earlier account.created opened.');
    expect(findingOf(() => applyEvent(state, 1, { type: 'order.status', account: 3, order: 'o1' })).sentence).toBe(
      'Balance replay failed at seq 1 (account 3, order o1): order.status names an account that no earlier account.created opened.',
    );
  });

  it('service.saved names none and needs none', () => {
    expect(replayImage(new Ledger().service()).firstBroken).toBeNull();
  });
});

describe('events that move no money', () => {
  it('each is accepted when it names a known account, and changes no balance', () => {
    const ledger = new Ledger().account(1).credit(1, 2 * CREDIT);
    for (const type of ['account.updated', 'secret.rotated', 'v2key.issued', 'v2key.revoked', 'forcejoin.updated', 'order.rejected', 'webhook.saved', 'webhook.secret_rotated', 'webhook.deleted', 'webhook.failing', 'webhook.queued']) {
      push(ledger, { type, account: 1 });
    }
    const report = replayImage(ledger);
    expect(report.firstBroken).toBeNull();
    expect(report.counts.events).toBe(13);
    expect(report.totals).toEqual({ credited: 2_000_000n, debited: 0n, refunded: 0n });
  });
});

describe('the invariant of an event that cannot be replayed', () => {
  it('is its subject\'s: charges for placements, statuses for moves, lifecycle for the rest of an order\'s life, balance otherwise', () => {
    expect(['order.placed', 'order.status', 'refill.status', 'order.cancel_requested', 'credits.adjusted', 'plan.granted', 42].map(invariantOfType)).toEqual([
      'order-charge',
      'order-status',
      'lifecycle',
      'lifecycle',
      'balance',
      'balance',
      'balance',
    ]);
  });
});
