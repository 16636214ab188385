/**
 * verifyLedger against hand-made logs: a consistent ledger passes with exact
 * totals, and each invariant, broken on its own, is named with its seq,
 * account and order.
 */
import { describe, expect, it } from 'vitest';
import { addMonthsUtc, type LogEvent } from '../../src/ledger/index.js';
import { renderVerifyReport, verifyLedgerAsync, type VerifyReport } from '../../src/ops/index.js';
import { CREDIT, Ledger, useLedgerStores } from '../helpers/ledger.js';

const { verify, opened } = useLedgerStores();

/** One account with 100 credits and three orders at rate 0.1 (q 10, 20, 30). */
function busy(): Ledger {
  return new Ledger()
    .account(1)
    .credit(1, 100 * CREDIT)
    .place(1, 'o1', 10, 100_000, { idempotencyKey: 'k1' })
    .place(1, 'o2', 20, 100_000)
    .place(1, 'o3', 30, 100_000);
}

function expectBroken(report: VerifyReport, invariant: string, seq: number | null, account: number | null, order: string | null, phrase: RegExp): void {
  expect(report.ok).toBe(false);
  expect(report.broken).toMatchObject({ invariant, seq, account, order });
  expect(report.firstBroken).toBe(report.broken!.sentence);
  expect(report.firstBroken).toMatch(phrase);
  if (seq !== null) expect(report.firstBroken).toContain(`seq ${seq}`);
  if (account !== null) expect(report.firstBroken).toContain(`account ${account}`);
  if (order !== null) expect(report.firstBroken).toContain(`order ${order}`);
}

describe('a consistent hand-made ledger', () => {
  it('passes with exact totals, including refunds, status moves and the unlimited plan', async () => {
    const ledger = busy()
      .move('o1', 'processing')
      .move('o1', 'in_progress')
      .move('o1', 'completed')
      .move('o2', 'canceled') // refunds 2
      .move('o3', 'partial', 7) // refunds 0.7
      .account(2)
      .credit(2, 5 * CREDIT)
      .credit(2, -1 * CREDIT)
      .plan(2)
      .place(2, 'u1', 1000, 100_000) // charge 100, debit 0 under the plan
      .move('u1', 'partial', 500) // refunds nothing: nothing was debited
      .place(2, 'u2', 10, 100_000)
      .move('u2', 'canceled');
    const report = verify(ledger);
    expect(report.firstBroken).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.counts).toEqual({ events: ledger.events.length, accounts: 2, orders: 5, idempotencyKeys: 1 });
    expect(report.totals).toEqual({ credited: 104_000_000n, debited: 6_000_000n, refunded: 2_700_000n });
    expect(ledger.wallet(1).credits).toBe(96_700_000);
    expect(ledger.wallet(2).credits).toBe(4_000_000);
    expect(JSON.parse(renderVerifyReport(report))).toMatchObject({ ok: true, first_broken: null, totals: { credited: 104, debited: 6, refunded: 2.7 } });
    expect(await verifyLedgerAsync(opened[0]!.store)).toEqual(report);
  });

  it('an empty store verifies', () => {
    expect(verify(new Ledger())).toMatchObject({ ok: true, counts: { events: 0, accounts: 0, orders: 0, idempotencyKeys: 0 } });
  });

  it('charges beyond the safe float product are checked exactly', () => {
    // 9,007,199 × 1,000,000,001 = 9,007,199,009,007,199: exact as BigInt.
    const ledger = new Ledger().account(1).credit(1, 9_007_199_254_740_991).place(1, 'big', 9_007_199, 1_000_000_001);
    expect(verify(ledger).ok).toBe(true);
    const off = new Ledger().account(1).credit(1, 9_007_199_254_740_991).place(1, 'big', 9_007_199, 1_000_000_001);
    off.last('order.placed').charge -= 1;
    off.last('order.placed').debit -= 1;
    off.last('order.placed').balance += 1;
    off.wallet(1).credits += 1;
    off.order('big').charge -= 1;
    off.order('big').debit -= 1;
    expectBroken(verify(off), 'order-charge', 3, 1, 'big', /quantity 9007199 × rate 1000.000001 credits is 9007199009.007199 credits/);
  });
});

describe('the log sequence', () => {
  it('a gap in the seqs is reported', () => {
    const ledger = busy();
    ledger.seqOf = (i) => (i < 2 ? i + 1 : i + 2);
    expectBroken(verify(ledger), 'log-sequence', 4, null, null, /expected seq 3 but found 4/);
  });

  it('an unknown event type is reported', () => {
    const ledger = busy();
    ledger.events.splice(2, 0, { type: 'credits.gifted', account: 1 } as never);
    expectBroken(verify(ledger), 'log-sequence', 3, null, null, /"credits.gifted" is unknown/);
  });
});

describe('(a) balance replay', () => {
  it('an account must open at 0', () => {
    const ledger = busy();
    (ledger.events[0] as { credits: number }).credits = 5 * CREDIT;
    expectBroken(verify(ledger), 'balance', 1, 1, null, /opens the wallet with 5 credits; an account must open with 0/);
  });

  it('a balance may never go negative', () => {
    // The order debits 3 credits from 2: the events are internally consistent
    // (balance fields follow the arithmetic) but the wallet went below zero.
    const ledger = new Ledger().account(1).credit(1, 2 * CREDIT).place(1, 'o1', 30, 100_000);
    expectBroken(verify(ledger), 'balance', 3, 1, 'o1', /debiting 3 credits takes the balance of 2 credits below zero, to -1 credits/);
  });

  it('a negative adjustment below zero is caught too', () => {
    const ledger = new Ledger().account(1).credit(1, CREDIT).credit(1, -2 * CREDIT);
    expectBroken(verify(ledger), 'balance', 3, 1, null, /credits.adjusted of -2 credits takes the balance of 1 credits below zero/);
  });

  it('the balance each event carries must equal the replayed balance', () => {
    const ledger = busy();
    ledger.last('order.placed').balance += 1;
    expectBroken(verify(ledger), 'balance', 5, 1, 'o3', /replayed balance of 94 credits but the event records 94.000001 credits/);
  });

  it('a refund must land in the balance it reports', () => {
    const ledger = busy().move('o2', 'canceled');
    ledger.last('order.status').balance -= 2 * CREDIT;
    expectBroken(verify(ledger), 'balance', 6, 1, 'o2', /replayed balance of 96 credits but the event records 94 credits/);
  });

  it('events must name an account created earlier', () => {
    const ledger = busy();
    ledger.events.push({ type: 'credits.adjusted', atMs: 1, account: 9, amount: CREDIT, reason: 'x', balance: CREDIT });
    expectBroken(verify(ledger), 'balance', 6, 9, null, /no earlier account.created opened/);
  });
});

describe('(b) wallets', () => {
  it('a wallet row that differs from its replayed balance', () => {
    const ledger = busy();
    ledger.wallet(1).credits += 500_000;
    expectBroken(verify(ledger), 'wallet', null, 1, null, /wallet holds 94.5 credits but its ledger replays to 94 credits/);
  });

  it('a wallet row with no account.created', () => {
    const ledger = busy();
    ledger.rows.wallets.set(7, { id: 7, credits: 0, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null });
    expectBroken(verify(ledger), 'wallet', null, 7, null, /wallet row 7 has no account.created/);
  });

  it('an account with no wallet row', () => {
    const ledger = busy().account(2);
    ledger.rows.wallets.delete(2);
    expectBroken(verify(ledger), 'wallet', null, 2, null, /created in the log but has no wallet row/);
  });
});

describe('(c) order charges', () => {
  it('debit must be the charge or 0', () => {
    const ledger = busy();
    const placed = ledger.last('order.placed');
    placed.debit = 1_000_000; // charge is 3
    placed.balance = 97_000_000 - 1_000_000;
    expectBroken(verify(ledger), 'order-charge', 5, 1, 'o3', /debit 1 credits is neither the charge 3 credits nor 0/);
  });

  it('charge must be quantity × rate exactly', () => {
    const ledger = busy();
    ledger.last('order.placed').charge = 3_000_001;
    expectBroken(verify(ledger), 'order-charge', 5, 1, 'o3', /charge is 3.000001 credits but quantity 30 × rate 0.1 credits is 3 credits/);
  });

  it('an order not debited outside an unlimited-plan window', () => {
    const ledger = busy();
    const placed = ledger.last('order.placed');
    placed.debit = 0;
    placed.balance = 97_000_000;
    expectBroken(verify(ledger), 'order-charge', 5, 1, 'o3', /not debited .* no unlimited-plan window/);
  });

  it('order.placed needs its orders row', () => {
    const ledger = busy();
    ledger.rows.orders.delete('o2');
    expectBroken(verify(ledger), 'order-charge', 4, 1, 'o2', /has no row in the orders table/);
  });

  it('the orders row must agree with order.placed', () => {
    const ledger = busy();
    ledger.order('o1').rate = 200_000;
    expectBroken(verify(ledger), 'order-charge', 3, 1, 'o1', /orders row has rate 200000 but order.placed says 100000/);
  });

  it('the orders row must agree with order.placed on service, type and extras', () => {
    const service = busy();
    service.order('o1').service = 2;
    expectBroken(verify(service), 'order-charge', 3, 1, 'o1', /orders row has service 2 but order.placed says 1/);
    const type = busy();
    type.order('o2').type = 'Package';
    expectBroken(verify(type), 'order-charge', 4, 1, 'o2', /orders row has type Package but order.placed says none/);
  });

  it("an order's inputs follow its type's rules, which replay reads again: each type's example verifies", () => {
    const ledger = new Ledger()
      .account(1)
      .credit(1, 100 * CREDIT)
      .place(1, 'o1', 2, 100_000, { type: 'Custom Comments', extras: { comments: 'a\nb' } })
      .place(1, 'o2', 1, 100_000, { type: 'Custom Comments Package', extras: { comments: 'a\nb\nc' } })
      .place(1, 'o3', 10, 100_000, { type: 'Comment Likes', extras: { username: 'owner' } })
      .place(1, 'o4', 10, 100_000, { type: 'Mentions with Hashtags', extras: { usernames: 'a\nb', hashtags: '#x' } })
      .place(1, 'o5', 10, 100_000, { type: 'Mentions Hashtag', extras: { hashtag: '#x' } })
      .place(1, 'o6', 10, 100_000, { type: 'Mentions User Followers', extras: { username: 'natgeo' } })
      .place(1, 'o7', 10, 100_000, { type: 'Mentions Media Likers', extras: { media: 'https://x.test/p/1' } })
      .place(1, 'o8', 10, 100_000, { type: 'SEO', extras: { keywords: 'shoes\nboots' } })
      .place(1, 'o9', 10, 100_000, { type: 'Invites from Groups', extras: { groups: 'g1\ng2' } })
      .place(1, 'o10', 10, 100_000, { type: 'Poll', extras: { answerNumber: 2 } });
    expect(verify(ledger).ok).toBe(true);
  });

  it('an order whose quantity is not what its list derives, or whose inputs break its type, or of an unknown type, is named at its placement', () => {
    const lines = new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'o1', 3, 100_000, { type: 'Custom Comments', extras: { comments: 'a\nb' } });
    expectBroken(verify(lines), 'order-charge', 3, 1, 'o1', /a Custom Comments order of these inputs is 2 units, not 3/);
    const pkg = new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'o1', 5, 100_000, { type: 'Package' });
    expectBroken(verify(pkg), 'order-charge', 3, 1, 'o1', /a Package order of these inputs is 1 unit, not 5/);
    const missing = new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'o1', 10, 100_000, { type: 'Comment Likes' });
    expectBroken(verify(missing), 'order-charge', 3, 1, 'o1', /inputs break the Comment Likes type's rules: Field 'username' is required/);
    const foreign = new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'o1', 10, 100_000, { extras: { keywords: 'k' } });
    expectBroken(verify(foreign), 'order-charge', 3, 1, 'o1', /Field 'keywords' is not taken by Default orders/);
    const unknown = new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'o1', 10, 100_000, { type: 'Likes' as never });
    expectBroken(verify(unknown), 'order-charge', 3, 1, 'o1', /unknown order type "Likes"|unknown order type Likes/);
  });

  it('a row with more drip-feed runs than its order.placed is named at the placement, not a crash at a later refund', () => {
    // o1 is 10 units × 5 runs at 0.1: 5 credits. Its row claims 50 runs.
    const ledger = new Ledger().account(1).credit(1, 100 * CREDIT).place(1, 'o1', 10, 100_000, { extras: { runs: 5, interval: 30 } });
    ledger.order('o1').extras!.runs = 50;
    ledger.move('o1', 'in_progress');
    // 60 of the row's 500 units undelivered: a refund of 6 credits, more than the debit.
    ledger.events.push({ type: 'order.status', atMs: 1, account: 1, order: 'o1', from: 'in_progress', to: 'partial', remains: 60, refund: 6 * CREDIT, balance: 101 * CREDIT });
    expectBroken(verify(ledger), 'order-charge', 3, 1, 'o1', /orders row has extras \{runs: 50, interval: 30\} but order.placed says \{runs: 5, interval: 30\}/);
  });

  it('an orders row with no order.placed', () => {
    const ledger = busy();
    ledger.rows.orders.set('ghost', { ...ledger.order('o1'), id: 'ghost' });
    expectBroken(verify(ledger), 'order-charge', null, 1, 'ghost', /has no order.placed in the log/);
  });

  it('an order id placed twice', () => {
    const ledger = busy();
    const first = { ...ledger.order('o1') };
    ledger.place(1, 'o1', 1, 100_000);
    ledger.rows.orders.set('o1', first); // one id has one row: the first order's
    expectBroken(verify(ledger), 'order-charge', 6, 1, 'o1', /already placed at seq 3/);
  });
});

describe('the unlimited plan, as the actor grants and bills it', () => {
  /** Account 1 with 10 credits and a one-month grant (seq 3). */
  function planned(): Ledger {
    return new Ledger().account(1).credit(1, 10 * CREDIT).plan(1);
  }

  it('a grant ends calendar months after the later of its time and the current expiry', () => {
    const ledger = planned().plan(1, 2);
    expect(verify(ledger).firstBroken).toBeNull();
    const first = ledger.events[2] as Extract<LogEvent, { type: 'plan.granted' }>;
    // Two months from the first grant's expiry, not from the second grant's own time.
    expect(ledger.wallet(1).unlimitedExpiresMs).toBe(addMonthsUtc(first.expiresMs, 2));
    const second = ledger.last('plan.granted');
    second.expiresMs = addMonthsUtc(second.atMs, 2);
    ledger.wallet(1).unlimitedExpiresMs = second.expiresMs;
    expectBroken(verify(ledger), 'balance', 4, 1, null, /plan.granted ends the window at .* but 2 months from 2023-12-14T.* end at 2024-02-14T/);
  });

  it('a window of 30-day months is not one the actor grants', () => {
    const ledger = new Ledger().account(1).plan(1, 3);
    const granted = ledger.last('plan.granted');
    granted.expiresMs = granted.atMs + 3 * 30 * 86_400_000;
    ledger.wallet(1).unlimitedExpiresMs = granted.expiresMs;
    expectBroken(verify(ledger), 'balance', 2, 1, null, /ends the window at 2024-02-12T.* but 3 months from 2023-11-14T.* end at 2024-02-14T/);
  });

  it('a grant logged before the month-end clamp (31 Jan + 1 month = 3 Mar, as Date overflows) still verifies, and the window it logged is the one that counts', () => {
    const ledger = new Ledger().account(1).credit(1, 10 * CREDIT).plan(1);
    const granted = ledger.last('plan.granted');
    granted.atMs = Date.UTC(2026, 0, 31, 12);
    granted.expiresMs = Date.UTC(2026, 2, 3, 12);
    ledger.wallet(1).unlimitedExpiresMs = granted.expiresMs;
    expect(verify(ledger).ok).toBe(true);
    // Not any date: a window of 30 days from 31 Jan is neither rule's.
    granted.expiresMs = Date.UTC(2026, 2, 2, 12);
    ledger.wallet(1).unlimitedExpiresMs = granted.expiresMs;
    expectBroken(verify(ledger), 'balance', 3, 1, null, /ends the window at 2026-03-02T12.* but 1 months from 2026-01-31T12.* end at 2026-02-28T12/);
  });

  it('a grant is priced by planPriceInr and lasts 1 to 120 months', () => {
    const priced = planned();
    priced.last('plan.granted').priceInr = 1;
    expectBroken(verify(priced), 'balance', 3, 1, null, /prices 1 months at 1 INR but the plan costs 9999 INR/);
    const long = new Ledger().account(1).plan(1, 121);
    expectBroken(verify(long), 'balance', 2, 1, null, /grants 121 months; a grant is a whole number of months from 1 to 120/);
  });

  it('inside the window an order is debited 0, never its charge', () => {
    const ledger = planned().place(1, 'u1', 10, 100_000);
    const placed = ledger.last('order.placed');
    placed.debit = placed.charge;
    placed.balance -= placed.charge;
    ledger.wallet(1).credits -= placed.charge;
    ledger.order('u1').debit = placed.charge;
    expectBroken(verify(ledger), 'order-charge', 4, 1, 'u1', /debited 1 credits but an unlimited-plan window to .* covered its time; it must be debited 0/);
  });

  it("the orders row's unlimited flag says whether the window covered the order", () => {
    const ledger = planned().place(1, 'u1', 10, 100_000);
    ledger.order('u1').unlimited = false;
    expectBroken(verify(ledger), 'order-charge', 4, 1, 'u1', /orders row has unlimited false but the order was placed inside an unlimited-plan window/);
  });

  it("the wallet row's window is the one its grants leave (the actor bills from it after a restart)", () => {
    const ledger = planned();
    ledger.wallet(1).unlimitedExpiresMs = null;
    expectBroken(verify(ledger), 'wallet', null, 1, null, /wallet row holds no unlimited-plan window but its plan grants leave an unlimited-plan window to 2023-12-14T/);
  });
});

describe('(d) order status history', () => {
  it('the status index lists every order under the status the log leaves it in', () => {
    const ledger = busy().move('o1', 'processing');
    ledger.unindexed.add('o2');
    expectBroken(verify(ledger), 'order-status', null, null, null, /the status index lists 1 pending orders but the log leaves 2/);
  });

  it('the counts row that stats and metrics report matches the log', () => {
    const right = busy().move('o1', 'processing');
    right.countsRow = { pending: 2, processing: 1, in_progress: 0, completed: 0, partial: 0, canceled: 0 };
    expect(verify(right).firstBroken).toBeNull();
    const wrong = busy().move('o1', 'processing');
    wrong.countsRow = { pending: 3, processing: 0, in_progress: 0, completed: 0, partial: 0, canceled: 0 };
    expectBroken(verify(wrong), 'order-status', null, null, null, /the order counts row says 3 pending orders but the log leaves 2/);
  });

  it('a status may not move backwards', () => {
    const ledger = busy().move('o1', 'in_progress').move('o1', 'processing');
    expectBroken(verify(ledger), 'order-status', 7, 1, 'o1', /moves backwards or sideways, from in_progress to processing/);
  });

  it('a final state never moves again, not even to itself', () => {
    const ledger = busy().move('o1', 'completed').move('o1', 'completed');
    expectBroken(verify(ledger), 'order-status', 7, 1, 'o1', /already completed, a final state, and cannot move again/);
  });

  it('from must be the status the order is in', () => {
    const ledger = busy().move('o1', 'processing');
    (ledger.last('order.status') as { from: string }).from = 'in_progress';
    expectBroken(verify(ledger), 'order-status', 6, 1, 'o1', /moves from in_progress but the order is pending/);
  });

  it('a cancel refunds exactly the debit', () => {
    const ledger = busy().move('o2', 'canceled');
    const moved = ledger.last('order.status');
    moved.refund -= 1;
    moved.balance -= 1;
    ledger.wallet(1).credits -= 1;
    expectBroken(verify(ledger), 'order-status', 6, 1, 'o2', /refunds 1.999999 credits but should refund 2 credits/);
  });

  it('a partial refunds exactly remains × rate', () => {
    const ledger = busy().move('o3', 'partial', 7);
    const moved = ledger.last('order.status');
    moved.refund = 3_000_000; // the whole debit instead of 7 × 0.1
    moved.balance = 97_000_000;
    ledger.wallet(1).credits = 97_000_000;
    expectBroken(verify(ledger), 'order-status', 6, 1, 'o3', /move to partial refunds 3 credits but should refund 0.7 credits/);
  });

  it('a partial of an order billed under the plan refunds nothing', () => {
    const ledger = new Ledger().account(1).plan(1).place(1, 'u1', 100, 100_000).move('u1', 'partial', 40);
    const moved = ledger.last('order.status');
    moved.refund = 4_000_000;
    moved.balance = 4_000_000;
    ledger.wallet(1).credits = 4_000_000;
    expectBroken(verify(ledger), 'order-status', 4, 1, 'u1', /refunds 4 credits but should refund 0 credits \(debit 0 credits\)/);
  });

  it('a move that is not a cancel or a partial refunds nothing', () => {
    const ledger = busy().move('o1', 'completed');
    const moved = ledger.last('order.status');
    moved.refund = 1_000_000;
    moved.balance += 1_000_000;
    ledger.wallet(1).credits += 1_000_000;
    expectBroken(verify(ledger), 'order-status', 6, 1, 'o1', /move to completed refunds 1 credits but should refund 0 credits/);
  });

  it('a move of an order that was never placed', () => {
    const ledger = busy().move('o1', 'processing');
    ledger.last('order.status').order = 'nope';
    expectBroken(verify(ledger), 'order-status', 6, 1, 'nope', /no earlier order.placed created/);
  });

  it("the orders row's status must match the last move", () => {
    const ledger = busy().move('o1', 'processing').move('o1', 'completed');
    ledger.order('o1').status = 'processing';
    expectBroken(verify(ledger), 'order-status', null, 1, 'o1', /orders row says processing with remains null but the log leaves it completed/);
  });

  it("the orders row's remains must match the partial move", () => {
    const ledger = busy().move('o3', 'partial', 7);
    ledger.order('o3').remains = 8;
    expectBroken(verify(ledger), 'order-status', null, 1, 'o3', /remains 8 but the log leaves it partial with remains 7/);
  });
});

describe('(e) idempotency records', () => {
  it('a key must point at an existing order', () => {
    const ledger = busy();
    ledger.rows.idempotency.set('1:k2', { fingerprint: 'fp', status: 201, body: '{}', order: 'missing', atMs: 1 });
    expectBroken(verify(ledger), 'idempotency', null, 1, 'missing', /key "k2" points at an order that does not exist/);
  });

  it("a key must point at its own account's order", () => {
    const ledger = busy().account(2).credit(2, CREDIT).place(2, 'b1', 1, 100_000);
    ledger.rows.idempotency.set('2:k:with:colons', { fingerprint: 'fp', status: 201, body: '{}', order: 'o1', atMs: 1 });
    expectBroken(verify(ledger), 'idempotency', null, 2, 'o1', /key "k:with:colons" points at an order of account 1/);
  });

  it('a remembered rejection (order null) needs no order', () => {
    const ledger = busy();
    ledger.rows.idempotency.set('1:rejected', { fingerprint: 'fp', status: 402, body: '{}', order: null, atMs: 1 });
    expect(verify(ledger)).toMatchObject({ ok: true, counts: { idempotencyKeys: 2 } });
  });
});

describe('stopping at the first broken invariant', () => {
  it('reports the earliest seq when several are broken', () => {
    const ledger = busy();
    ledger.wallet(1).credits = 0; // (b), found only at the end
    ledger.last('order.placed').charge += 1; // (c) at seq 5
    (ledger.events[3] as { balance: number }).balance = 1; // (a) at seq 4
    expectBroken(verify(ledger), 'balance', 4, 1, 'o2', /event records 0.000001 credits/);
  });
});
