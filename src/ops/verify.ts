/**
 * Ledger verification: replays the whole event log in seq order and checks
 * that the log and the tables tell the same, self-consistent story about
 * money. It stops at the first broken invariant and names it in a plain
 * sentence with the seq, account and order involved, so an operator can go
 * straight to the event.
 *
 * What is checked, in log order and then over the tables:
 *   (log)      seqs are integers 1, 2, 3, … without gaps (a gap is a lost event)
 *              and every event is of a known type (an unknown one could move
 *              money in a way this replay cannot see);
 *   (a)        per account: account.created opens at 0, credits.adjusted adds its
 *              amount, order.placed takes its debit, order.status adds its refund;
 *              the running balance never goes negative and equals the `balance`
 *              each event carries; events only name accounts created before them;
 *   (b)        every `wallets` row's credits equal the replayed balance, and
 *              wallets and account.created events match one to one;
 *   (c)        every order.placed has debit = charge or 0 (0 with a positive
 *              charge only inside an unlimited-plan window), charge = quantity ×
 *              rate exactly (BigInt), and its `orders` row agrees on account,
 *              charge, debit, rate and quantity;
 *   (d)        status only moves forward, a final state never moves again, the
 *              refund is the debit on `canceled`, remains × rate on `partial`
 *              (0 when the debit was 0) and 0 otherwise; each `orders` row's
 *              status and remains equal the last order.status event, and every
 *              `orders` row has its order.placed;
 *   (e)        every `idempotency` row that names an order names an existing
 *              order of the account in its key (`${accountId}:${key}`).
 *
 * The replay is pure: no clock reads, no writes. It streams the log through
 * one LMDB read transaction, so on a live store it checks one consistent
 * moment (the log and the tables are always committed together); memory is
 * one small record per account and per order.
 */
import type { Transaction } from 'lmdb';
import { formatMicro } from '../money/index.js';
import { formatBig } from './money-big.js';
import { ShardedMap } from './sharded-map.js';
import { isOrderStatus, ORDER_STATUSES, refundFor, remainsRefusal, statusMoveRefusal, type LogEvent, type OrderStatus } from '../ledger/index.js';
import { countIndex, isOrderCounts, noOrders, ORDER_COUNTS_KEY } from '../wal/order-counts.js';
import type { Store } from '../wal/store.js';

/** Which family of invariants a failure belongs to. */
export type Invariant = 'log-sequence' | 'balance' | 'wallet' | 'order-charge' | 'order-status' | 'idempotency';

export interface BrokenInvariant {
  invariant: Invariant;
  /** The log entry at fault, or null for a table-only finding. */
  seq: number | null;
  account: number | null;
  order: string | null;
  /** The same plain sentence as `VerifyReport.firstBroken`. */
  sentence: string;
}

export interface VerifyReport {
  ok: boolean;
  /** A plain sentence naming the first broken invariant, or null when all hold. */
  firstBroken: string | null;
  /** The same finding, structured (for callers that act on it). */
  broken: BrokenInvariant | null;
  /** What was examined (up to the first failure, when there is one). */
  counts: { events: number; accounts: number; orders: number; idempotencyKeys: number };
  /**
   * Micro-credits, exact. BigInt because a sum over many wallets may leave
   * the safe-integer range even though each wallet stays inside it.
   * `credited` is the net of operator adjustments (negative adjustments
   * subtract), so Σ wallets = credited − debited + refunded.
   */
  totals: { credited: bigint; debited: bigint; refunded: bigint };
}

interface AccountState {
  balance: number;
  /** Expiry of the unlimited-plan window from the latest plan.granted, if any. */
  planExpiresMs: number | null;
  hasWallet: boolean;
}

interface OrderState {
  account: number;
  quantity: number;
  rate: number;
  charge: number;
  debit: number;
  status: OrderStatus;
  remains: number | null;
  placedSeq: number;
  hasRow: boolean;
}

/** pending < processing < in_progress < every final state. */

const LABEL: Record<Invariant, string> = {
  'log-sequence': 'Log sequence check',
  balance: 'Balance replay',
  wallet: 'Wallet check',
  'order-charge': 'Order charge check',
  'order-status': 'Order status check',
  idempotency: 'Idempotency check',
};

/** Thrown inside the replay to stop at the first failure; never escapes `verifyLedger`. */
class Broken extends Error {
  constructor(readonly finding: BrokenInvariant) {
    super(finding.sentence);
  }
}

function fail(invariant: Invariant, seq: number | null, account: number | null, order: string | null, detail: string): never {
  const who = [account === null ? null : `account ${account}`, order === null ? null : `order ${order}`].filter((p) => p !== null);
  let where: string;
  if (seq !== null) where = who.length > 0 ? `seq ${seq} (${who.join(', ')})` : `seq ${seq}`;
  else where = who.length > 0 ? who.join(', ') : 'the tables';
  const sentence = `${LABEL[invariant]} failed at ${where}: ${detail}`;
  throw new Broken({ invariant, seq, account, order, sentence });
}

/** Rows replayed between pauses of the async variant (about a few milliseconds of work). */
const YIELD_EVERY = 10_000;

const isInt = (n: unknown): n is number => Number.isSafeInteger(n);

/** "3.5 credits", or the raw value when it is not even a valid amount. */
function credits(n: unknown): string {
  return isInt(n) ? `${formatMicro(n)} credits` : `${String(n)} (not a whole number of micro-credits)`;
}

/** A loosely typed view of a stored event: the log may hold anything. */
type RawEvent = Record<string, unknown> & { type?: unknown };

/**
 * Every event type the replay understands. Typed against the LogEvent union
 * so that adding an event type fails to compile here until someone decides
 * whether it moves money (and teaches the replay), instead of the verifier
 * silently skipping it.
 */
const KNOWN_TYPES: Record<LogEvent['type'], true> = {
  'account.created': true,
  'credits.adjusted': true,
  'account.updated': true,
  'secret.rotated': true,
  'service.saved': true,
  'order.placed': true,
  'order.rejected': true,
  'order.status': true,
  'plan.granted': true,
  'forcejoin.updated': true,
};

class LedgerReplay {
  readonly accounts = new Map<number, AccountState>();
  readonly orders = new ShardedMap<OrderState>();
  readonly counts = { events: 0, accounts: 0, orders: 0, idempotencyKeys: 0 };
  credited = 0n;
  debited = 0n;
  refunded = 0n;

  constructor(
    private readonly store: Store,
    private readonly txn: Transaction,
  ) {}

  /**
   * The whole replay as a generator that pauses every `YIELD_EVERY` rows, so
   * an async caller can let the event loop breathe on a large log while the
   * synchronous caller simply drains it.
   */
  *run(): Generator<void, void, void> {
    let expectedSeq = 1;
    let rows = 0;
    for (const { key, value } of this.store.log.getRange({ transaction: this.txn })) {
      const seq = key as unknown;
      if (!isInt(seq) || seq !== expectedSeq) {
        fail(
          'log-sequence',
          isInt(seq) ? seq : null,
          null,
          null,
          `expected seq ${expectedSeq} but found ${String(seq)}; a gap or a foreign key means events are missing or the log was altered.`,
        );
      }
      expectedSeq++;
      this.counts.events++;
      this.apply(seq, value as unknown);
      if (++rows % YIELD_EVERY === 0) yield;
    }
    yield* this.checkWallets();
    yield* this.checkOrderRows();
    this.checkOrderCounts();
    yield* this.checkIdempotency();
  }

  /**
   * (d'): the status index and the counts row (what stats and metrics
   * report) hold as many orders in each status as the log leaves there.
   */
  private checkOrderCounts(): void {
    const replayed = noOrders();
    for (const order of this.orders.values()) replayed[order.status]++;
    const indexed = countIndex(this.store, this.txn);
    const row: unknown = this.store.tables.meta.get(ORDER_COUNTS_KEY, { transaction: this.txn });
    for (const status of ORDER_STATUSES) {
      if (indexed[status] !== replayed[status]) {
        fail('order-status', null, null, null, `the status index lists ${indexed[status]} ${status} orders but the log leaves ${replayed[status]}.`);
      }
      if (row !== undefined && (!isOrderCounts(row) || row[status] !== replayed[status])) {
        fail('order-status', null, null, null, `the order counts row says ${String((row as Record<string, unknown> | null)?.[status])} ${status} orders but the log leaves ${replayed[status]}.`);
      }
    }
  }

  private apply(seq: number, raw: unknown): void {
    if (raw === null || typeof raw !== 'object') fail('log-sequence', seq, null, null, 'the entry is not an event object.');
    const e = raw as RawEvent;
    if (typeof e.type !== 'string' || !Object.hasOwn(KNOWN_TYPES, e.type)) {
      fail('log-sequence', seq, null, null, `the event type ${JSON.stringify(e.type)} is unknown, so its effect on balances cannot be checked.`);
    }
    if (e.type === 'service.saved') return;
    const accountId = e.account;
    if (!isInt(accountId)) fail('balance', seq, null, null, `${e.type} does not name a valid account id (${String(accountId)}).`);
    if (e.type === 'account.created') return this.accountCreated(seq, accountId, e);
    const account = this.accounts.get(accountId);
    if (account === undefined) {
      fail('balance', seq, accountId, typeof e.order === 'string' ? e.order : null, `${e.type} names an account that no earlier account.created opened.`);
    }
    switch (e.type) {
      case 'credits.adjusted':
        return this.creditsAdjusted(seq, accountId, account, e);
      case 'order.placed':
        return this.orderPlaced(seq, accountId, account, e);
      case 'order.status':
        return this.orderStatus(seq, accountId, account, e);
      case 'plan.granted':
        if (!isInt(e.expiresMs)) fail('balance', seq, accountId, null, `plan.granted carries an invalid expiry (${String(e.expiresMs)}).`);
        account.planExpiresMs = e.expiresMs;
        return;
      default:
        // account.updated, secret.rotated, forcejoin.updated, order.rejected:
        // they move no money; naming a known account is all they must do.
        return;
    }
  }

  private accountCreated(seq: number, id: number, e: RawEvent): void {
    if (this.accounts.has(id)) fail('balance', seq, id, null, 'account.created opens an account that was already opened earlier in the log.');
    // Money reaches a wallet only through logged adjustments and refunds, so
    // an account opens empty; anything else would be credit with no reason.
    if (e.credits !== 0) fail('balance', seq, id, null, `account.created opens the wallet with ${credits(e.credits)}; an account must open with 0.`);
    this.accounts.set(id, { balance: 0, planExpiresMs: null, hasWallet: false });
    this.counts.accounts++;
  }

  private creditsAdjusted(seq: number, id: number, account: AccountState, e: RawEvent): void {
    if (!isInt(e.amount)) fail('balance', seq, id, null, `credits.adjusted carries an invalid amount ${credits(e.amount)}.`);
    const next = this.move(seq, id, null, account, e.amount, e.balance, () => `credits.adjusted of ${credits(e.amount)}`);
    account.balance = next;
    this.credited += BigInt(e.amount);
  }

  private orderPlaced(seq: number, id: number, account: AccountState, e: RawEvent): void {
    const orderId = e.order;
    if (typeof orderId !== 'string' || orderId.length === 0) fail('order-charge', seq, id, null, 'order.placed does not carry an order id.');
    if (this.orders.has(orderId)) {
      fail('order-charge', seq, id, orderId, `the order id was already placed at seq ${this.orders.get(orderId)!.placedSeq}; order ids must be unique.`);
    }
    const { quantity, rate, charge, debit } = e;
    if (!isInt(quantity) || quantity < 1) fail('order-charge', seq, id, orderId, `order.placed carries an invalid quantity (${String(quantity)}).`);
    if (!isInt(rate) || rate < 0) fail('order-charge', seq, id, orderId, `order.placed carries an invalid rate ${credits(rate)}.`);
    if (!isInt(charge) || charge < 0) fail('order-charge', seq, id, orderId, `order.placed carries an invalid charge ${credits(charge)}.`);
    if (!isInt(debit)) fail('order-charge', seq, id, orderId, `order.placed carries an invalid debit ${credits(debit)}.`);
    if (BigInt(quantity) * BigInt(rate) !== BigInt(charge)) {
      fail('order-charge', seq, id, orderId, `the charge is ${credits(charge)} but quantity ${quantity} × rate ${credits(rate)} is ${formatBig(BigInt(quantity) * BigInt(rate))} credits.`);
    }
    if (debit !== charge && debit !== 0) {
      fail('order-charge', seq, id, orderId, `the debit ${credits(debit)} is neither the charge ${credits(charge)} nor 0.`);
    }
    if (debit === 0 && charge > 0) {
      // An order goes undebited only under the unlimited plan, which the
      // actor checks against the same wall time it stamps on the event.
      const active = account.planExpiresMs !== null && isInt(e.atMs) && e.atMs < account.planExpiresMs;
      if (!active) {
        fail('order-charge', seq, id, orderId, `the order was not debited (charge ${credits(charge)}) but no unlimited-plan window covered its time.`);
      }
    }
    const next = this.move(seq, id, orderId, account, -debit, e.balance, () => `order.placed debiting ${credits(debit)}`);
    account.balance = next;
    this.debited += BigInt(debit);
    // The orders row is compared in the sequential scan at the end (a random
    // lookup per order here costs about twice as much on a large log).
    this.orders.set(orderId, { account: id, quantity, rate, charge, debit, status: 'pending', remains: null, placedSeq: seq, hasRow: false });
    this.counts.orders++;
  }

  private orderStatus(seq: number, id: number, account: AccountState, e: RawEvent): void {
    const orderId = e.order;
    if (typeof orderId !== 'string') fail('order-status', seq, id, null, 'order.status does not carry an order id.');
    const order = this.orders.get(orderId);
    if (order === undefined) fail('order-status', seq, id, orderId, 'order.status moves an order that no earlier order.placed created.');
    if (order.account !== id) fail('order-status', seq, id, orderId, `order.status names account ${id} but the order belongs to account ${order.account}.`);
    const to = e.to;
    if (!isOrderStatus(to)) fail('order-status', seq, id, orderId, `order.status moves to an unknown status ${JSON.stringify(to)}.`);
    const toStatus = to;
    const moveRefusal = statusMoveRefusal(order.status, toStatus);
    if (moveRefusal === 'final') {
      fail('order-status', seq, id, orderId, `the order is already ${order.status}, a final state, and cannot move again (here to ${toStatus}).`);
    }
    if (e.from !== order.status) {
      fail('order-status', seq, id, orderId, `order.status says it moves from ${String(e.from)} but the order is ${order.status}.`);
    }
    if (moveRefusal === 'backwards') {
      fail('order-status', seq, id, orderId, `the order moves backwards or sideways, from ${order.status} to ${toStatus}.`);
    }
    const remains = e.remains;
    const remainsProblem = remainsRefusal(order.quantity, toStatus, remains);
    if (remainsProblem === 'partial-needs-remains') {
      fail('order-status', seq, id, orderId, `a partial order needs remains from 1 to ${order.quantity - 1}, not ${String(remains)}.`);
    }
    if (remainsProblem === 'remains-only-on-partial') {
      fail('order-status', seq, id, orderId, `remains is set (${String(remains)}) on a move to ${toStatus}; only partial carries it.`);
    }
    const expectedRefund = BigInt(refundFor(order, toStatus, remains as number | null));
    const refund = e.refund;
    if (!isInt(refund) || BigInt(refund) !== expectedRefund) {
      fail(
        'order-status',
        seq,
        id,
        orderId,
        `the move to ${toStatus} refunds ${credits(refund)} but should refund ${formatBig(expectedRefund)} credits (debit ${credits(order.debit)}).`,
      );
    }
    const next = this.move(seq, id, orderId, account, refund, e.balance, () => `order.status to ${toStatus} refunding ${credits(refund)}`);
    account.balance = next;
    this.refunded += BigInt(refund);
    order.status = toStatus;
    order.remains = toStatus === 'partial' ? (remains as number) : null;
  }

  /**
   * Applies a signed change to a balance and checks (a): never negative,
   * equal to the balance the event carries. `what` describes the event and
   * is only called on failure (formatting money per event would double the
   * cost of a replay).
   */
  private move(seq: number, id: number, orderId: string | null, account: AccountState, delta: number, carried: unknown, what: () => string): number {
    const next = account.balance + delta;
    if (!isInt(next)) fail('balance', seq, id, orderId, `${what()} takes the balance of ${credits(account.balance)} out of the exact range.`);
    if (next < 0) {
      fail('balance', seq, id, orderId, `${what()} takes the balance of ${credits(account.balance)} below zero, to ${credits(next)}.`);
    }
    if (carried !== next) {
      fail('balance', seq, id, orderId, `${what()} leaves a replayed balance of ${credits(next)} but the event records ${credits(carried)}.`);
    }
    return next;
  }

  /** (b): the wallets table against the replay, both ways. */
  private *checkWallets(): Generator<void, void, void> {
    let rows = 0;
    for (const { key, value } of this.store.tables.wallets.getRange({ transaction: this.txn })) {
      if (++rows % YIELD_EVERY === 0) yield;
      const id = key as unknown;
      const wallet = value as Record<string, unknown> | null;
      const account = isInt(id) ? this.accounts.get(id) : undefined;
      if (account === undefined) fail('wallet', null, isInt(id) ? id : null, null, `the wallet row ${String(id)} has no account.created in the log.`);
      account.hasWallet = true;
      if (wallet === null || wallet.credits !== account.balance) {
        fail('wallet', null, id as number, null, `the wallet holds ${credits(wallet?.credits)} but its ledger replays to ${credits(account.balance)}.`);
      }
    }
    for (const [id, account] of this.accounts) {
      if (!account.hasWallet) fail('wallet', null, id, null, 'the account was created in the log but has no wallet row.');
    }
  }

  /**
   * (c) and (d) against the orders table, in one sequential scan: every row
   * was placed in the log and agrees with order.placed, its status and
   * remains are those of the last move, and every placed order has a row.
   */
  private *checkOrderRows(): Generator<void, void, void> {
    let rows = 0;
    for (const { key, value } of this.store.tables.orders.getRange({ transaction: this.txn })) {
      if (++rows % YIELD_EVERY === 0) yield;
      const row = (value ?? {}) as Record<string, unknown>;
      // Rows are stored under an internal key; the public id is in the row.
      const id = typeof row.id === 'string' ? row.id : String(key);
      const order = this.orders.get(id);
      if (order === undefined) {
        fail('order-charge', null, isInt(row.account) ? row.account : null, id, 'the orders row has no order.placed in the log.');
      }
      order.hasRow = true;
      const field =
        row.account !== order.account ? 'account'
        : row.charge !== order.charge ? 'charge'
        : row.debit !== order.debit ? 'debit'
        : row.rate !== order.rate ? 'rate'
        : row.quantity !== order.quantity ? 'quantity'
        : null;
      if (field !== null) {
        fail('order-charge', order.placedSeq, order.account, id, `the orders row has ${field} ${String(row[field])} but order.placed says ${String(order[field])}.`);
      }
      if (row.status !== order.status || row.remains !== order.remains) {
        fail(
          'order-status',
          null,
          order.account,
          id,
          `the orders row says ${String(row.status)} with remains ${String(row.remains)} but the log leaves it ${order.status} with remains ${String(order.remains)}.`,
        );
      }
    }
    for (const [id, order] of this.orders) {
      if (!order.hasRow) fail('order-charge', order.placedSeq, order.account, id, 'order.placed has no row in the orders table.');
    }
  }

  /** (e): idempotency rows point at orders of their own account. */
  private *checkIdempotency(): Generator<void, void, void> {
    let rows = 0;
    for (const { key, value } of this.store.tables.idempotency.getRange({ transaction: this.txn })) {
      if (++rows % YIELD_EVERY === 0) yield;
      this.counts.idempotencyKeys++;
      const k = String(key);
      const colon = k.indexOf(':');
      const accountId = colon > 0 ? Number(k.slice(0, colon)) : NaN;
      if (!isInt(accountId)) fail('idempotency', null, null, null, `the idempotency key ${JSON.stringify(k)} is not of the form accountId:key.`);
      const orderId = (value as { order?: unknown } | null)?.order ?? null;
      if (orderId === null) continue;
      const order = typeof orderId === 'string' ? this.orders.get(orderId) : undefined;
      if (order === undefined) {
        fail('idempotency', null, accountId, String(orderId), `the idempotency key ${JSON.stringify(k.slice(colon + 1))} points at an order that does not exist.`);
      }
      if (order.account !== accountId) {
        fail(
          'idempotency',
          null,
          accountId,
          orderId as string,
          `the idempotency key ${JSON.stringify(k.slice(colon + 1))} points at an order of account ${order.account}.`,
        );
      }
    }
  }
}

function report(replay: LedgerReplay, broken: BrokenInvariant | null): VerifyReport {
  return {
    ok: broken === null,
    firstBroken: broken?.sentence ?? null,
    broken,
    counts: { ...replay.counts },
    totals: { credited: replay.credited, debited: replay.debited, refunded: replay.refunded },
  };
}

/**
 * Replays the store's whole log and checks every invariant above, stopping
 * at the first one that breaks. Read-only; safe on a live store. Runs to the
 * end without yielding: on a large live log prefer `verifyLedgerAsync`.
 */
export function verifyLedger(store: Store): VerifyReport {
  // One explicit read transaction: the log and all tables are read at the
  // same commit, even if a write lands while we iterate.
  const txn = store.root.useReadTransaction();
  const replay = new LedgerReplay(store, txn);
  try {
    for (const _ of replay.run());
    return report(replay, null);
  } catch (error) {
    if (!(error instanceof Broken)) throw error;
    return report(replay, error.finding);
  } finally {
    txn.done();
  }
}

/**
 * The same check, pausing with `setImmediate` every 10,000 rows so a server
 * verifying a large log keeps answering requests. The explicit read
 * transaction keeps the whole replay on one commit across the pauses.
 */
export async function verifyLedgerAsync(store: Store): Promise<VerifyReport> {
  const txn = store.root.useReadTransaction();
  const replay = new LedgerReplay(store, txn);
  try {
    for (const _ of replay.run()) await new Promise<void>((resolve) => setImmediate(resolve));
    return report(replay, null);
  } catch (error) {
    if (!(error instanceof Broken)) throw error;
    return report(replay, error.finding);
  } finally {
    txn.done();
  }
}
