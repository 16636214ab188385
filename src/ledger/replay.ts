/**
 * The ledger check: replays an event log in seq order and checks that the
 * log and the tables tell the same, self-consistent story about money. It
 * stops at the first broken invariant and names it in a plain sentence with
 * the seq, account and order involved, so an operator can go straight to the
 * event. An event that makes a rule throw is reported the same way: verify
 * never crashes on what a log holds.
 *
 * What is checked, in log order and then over the tables:
 *   (log)      seqs are integers 1, 2, 3, … without gaps (a gap is a lost event)
 *              and every event is of a known type (an unknown one could move
 *              money in a way this replay cannot see);
 *   (a)        per account: account.created opens at 0, credits.adjusted adds its
 *              amount, order.placed takes its debit, order.status adds its refund;
 *              the running balance never goes negative and equals the `balance`
 *              each event carries; events only name accounts created before them;
 *              every plan.granted is one the actor makes: 1 to PLAN_MONTHS_MAX
 *              months at planPriceInr, ending where planExpiryAfter puts it;
 *   (b)        every `wallets` row's credits equal the replayed balance and its
 *              unlimited window the one its grants leave, and wallets and
 *              account.created events match one to one;
 *   (c)        every order.placed has charge = chargeFor(quantity, rate, runs)
 *              and debit 0 if isUnlimited at its time, the charge otherwise,
 *              and its `orders` row agrees on account, service, type, charge,
 *              debit, rate, quantity, extras, number and its unlimited flag;
 *              order.placed and `orders` rows match one to one;
 *   (d)        status only moves forward, a final state never moves again, the
 *              refund is the debit on `canceled`, remains × rate on `partial`
 *              (0 when the debit was 0) and 0 otherwise; each `orders` row's
 *              status and remains equal the last order.status event; the status
 *              index and the counts row hold as many orders per status as the
 *              log leaves there;
 *   (e)        every `idempotency` row that names an order names an existing
 *              order of the account in its key (`${accountId}:${key}`);
 *   (f)        order.progress, order.cancel_requested, refill.requested and
 *              refill.status move no money (they carry no amount, refund or
 *              balance), name an order of their account, and are what the
 *              actor's lifecycle rules accept at that point of the log (one
 *              cancel request per order, one open refill, a refill moving from
 *              the status it is in; see `lifecycle`). A drip-feed
 *              order's charge is quantity × rate × runs (c); a customer's
 *              cancel is an order.status like any other, so (d) checks its
 *              refund is the whole debit, once.
 *
 * Memory does not grow with the number of orders. The replay walks the log
 * and the `orders` table (in storage-key order, which is creation order) side
 * by side, so an order's fixed fields and its final status come from its row
 * instead of a record kept per order. What it keeps:
 *   - one small record per account;
 *   - the open orders: placed, but whose replayed status is not yet the
 *     status their row ends in (an order awaiting its moves). Every other
 *     order is, at this point of the log, exactly as its row says. In a log
 *     where orders are processed as they come, that is the processing
 *     backlog, not the orders ever placed; `retained` reports the peak;
 *   - rows the side-by-side walk passed before their order.placed (orders
 *     placed out of key order, as after a wall-clock step back): normally
 *     none.
 * Only a failure pays more: naming the seq of an earlier placement scans the
 * log again.
 *
 * The replay is pure: no clock reads, no writes, no I/O of its own. It reads
 * through a `LedgerSource`, so the same code checks an LMDB store (verify,
 * snapshots, the CLI) and the simulator's in-memory image.
 */
import { formatBig, formatMicro } from '../money/index.js';
import { InvariantError } from '../platform/index.js';
import { PLAN_MONTHS_MAX } from './limits.js';
import { ShardedMap } from './sharded-map.js';
import {
  chargeFor,
  FINAL_STATUSES,
  isOrderStatus,
  isUnlimited,
  ORDER_STATUSES,
  planExpiryAfter,
  planExpiryAfterBeforeClamp,
  planPriceInr,
  refundFor,
  remainsRefusal,
  statusMoveRefusal,
  unitsOrdered,
} from './rules.js';
import {
  cancelRefusalMessage,
  cancelVerdict,
  isOpenRefill,
  isRefillStatus,
  progressRefusal,
  refillMoveRefusal,
  refillRefusal,
  refillRefusalMessage,
} from './lifecycle.js';
import { withServiceDefaults, type LogEvent, type OrderRecord, type OrderStatus, type ServiceRecord } from './records.js';

/** One stored row: its key and its value, as the store returns them. */
export interface SourceRow<K = unknown> {
  key: K;
  value: unknown;
}

/** How many orders are in each status. */
export type StatusCounts = Record<OrderStatus, number>;

/**
 * What the replay reads. Every method reads the same consistent moment of
 * the store (one read transaction for LMDB). Iterables are consumed lazily,
 * so a source streams from disk.
 */
export interface LedgerSource {
  /** The log, in seq order: key = seq. */
  events(): Iterable<SourceRow>;
  wallets(): Iterable<SourceRow>;
  /** The `orders` table in storage-key order (the order `compareOrderKeys` defines). */
  orderRows(): Iterable<SourceRow<string>>;
  /** The storage key an order's row is kept under, from its public id. */
  orderKey(id: string): string;
  /** One `orders` row by storage key, or undefined. */
  orderRow(key: string): unknown;
  /** The sort order of `orderRows`. */
  compareOrderKeys(a: string, b: string): number;
  idempotency(): Iterable<SourceRow>;
  /** Orders per status in the status index. */
  indexCounts(): StatusCounts;
  /** The counts row stats and metrics read, or undefined when the store has none. */
  countsRow(): unknown;
}

/** Which family of invariants a failure belongs to. */
export type Invariant = 'log-sequence' | 'balance' | 'wallet' | 'order-charge' | 'order-status' | 'idempotency' | 'lifecycle';

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
  /**
   * The most per-order state the replay held at once: open orders (placed,
   * still to move to the status their row ends in) and rows passed before
   * their placement. It follows the backlog, not the orders ever placed.
   */
  retained: { openOrdersPeak: number; passedRowsPeak: number };
}

interface AccountState {
  balance: number;
  /** Expiry of the unlimited-plan window from the latest plan.granted, if any: what the wallet row holds. */
  unlimitedExpiresMs: number | null;
  hasWallet: boolean;
}

/** Fields that move money; the lifecycle events (f) carry none. */
const MONEY_FIELDS = ['amount', 'refund', 'debit', 'charge', 'balance'] as const;

/** An order between its placement and the status its row ends in. */
interface OpenOrder {
  account: number;
  service: number;
  /** With the runs of a drip-feed order: the units ordered in all (unitsOrdered), which remains counts. */
  quantity: number;
  extras?: { runs?: number };
  rate: number;
  debit: number;
  status: OrderStatus;
  remains: number | null;
  /** When it reached a final state: its refill window counts from here. */
  finishedAtMs?: number;
  final: { status: unknown; remains: unknown };
}

const LABEL: Record<Invariant, string> = {
  'log-sequence': 'Log sequence check',
  balance: 'Balance replay',
  wallet: 'Wallet check',
  'order-charge': 'Order charge check',
  'order-status': 'Order status check',
  idempotency: 'Idempotency check',
  lifecycle: 'Lifecycle check',
};

/** Thrown inside the replay to stop at the first failure; never escapes `replayLedger`. */
/**
 * An error a ledger rule throws on a value it cannot take (an `InvariantError`),
 * or JavaScript's own on a value of the wrong kind (a BigInt where a number
 * belongs): what a malformed event makes replay throw.
 */
function isValueError(error: unknown): boolean {
  return error instanceof TypeError || error instanceof RangeError || error instanceof InvariantError;
}

class Broken extends Error {
  constructor(readonly finding: BrokenInvariant) {
    super(finding.sentence);
  }
}

function finding(invariant: Invariant, seq: number | null, account: number | null, order: string | null, detail: string): BrokenInvariant {
  const who = [account === null ? null : `account ${account}`, order === null ? null : `order ${order}`].filter((p) => p !== null);
  let where: string;
  if (seq !== null) where = who.length > 0 ? `seq ${seq} (${who.join(', ')})` : `seq ${seq}`;
  else where = who.length > 0 ? who.join(', ') : 'the tables';
  return { invariant, seq, account, order, sentence: `${LABEL[invariant]} failed at ${where}: ${detail}` };
}

function fail(invariant: Invariant, seq: number | null, account: number | null, order: string | null, detail: string): never {
  throw new Broken(finding(invariant, seq, account, order, detail));
}

const isInt = (n: unknown): n is number => Number.isSafeInteger(n);

/** An instant as ISO 8601, or the raw value when it is not one (toISOString throws on those). */
function instant(ms: unknown): string {
  return isInt(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms);
}

function planWindow(expiresMs: unknown): string {
  return expiresMs === null || expiresMs === undefined ? 'no unlimited-plan window' : `an unlimited-plan window to ${instant(expiresMs)}`;
}

/** "3.5 credits", or the raw value when it is not even a valid amount. */
function credits(n: unknown): string {
  return isInt(n) ? `${formatMicro(n)} credits` : `${String(n)} (not a whole number of micro-credits)`;
}

/** A loosely typed view of a stored record: the store may hold anything. */
type Raw = Record<string, unknown>;

function asRaw(value: unknown): Raw {
  return value !== null && typeof value === 'object' ? (value as Raw) : {};
}

/**
 * Every event type the replay understands. Typed against the LogEvent union
 * so that adding an event type fails to compile here until someone decides
 * whether it moves money (and teaches the replay), instead of the verifier
 * silently skipping it.
 */
const KNOWN_TYPES: Record<LogEvent['type'], true> = {
  'account.created': true,
  'credits.adjusted': true,
  'order.progress': true,
  'order.cancel_requested': true,
  'refill.requested': true,
  'refill.status': true,
  'account.updated': true,
  'secret.rotated': true,
  'v2key.issued': true,
  'v2key.revoked': true,
  'service.saved': true,
  'order.placed': true,
  'order.rejected': true,
  'order.status': true,
  'plan.granted': true,
  'forcejoin.updated': true,
  'webhook.saved': true,
  'webhook.secret_rotated': true,
  'webhook.deleted': true,
  'webhook.failing': true,
  'webhook.queued': true,
};

/**
 * The fields an orders row must share with its order.placed (whose `type`
 * is the event's orderType), in the order a mismatch is named. The extras
 * matter to money: their runs multiply the units a partial refund counts.
 */
const ORDER_FIELDS = ['account', 'service', 'type', 'charge', 'debit', 'rate', 'quantity', 'extras', 'number'] as const;

/** Equal values, or records of equal values (an order's extras hold strings and numbers only). */
function sameField(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => (a as Raw)[k] === (b as Raw)[k]);
}

/** A field's value in a sentence: a record as its fields, an absent one as none. */
function shown(value: unknown): string {
  if (value === undefined) return 'none';
  if (value === null || typeof value !== 'object') return String(value);
  return `{${Object.entries(value).map(([k, v]) => `${k}: ${String(v)}`).join(', ')}}`;
}

/** The invariant an event's failure belongs to, by its type; the others' is the balance. */
const INVARIANT_OF_TYPE = new Map<unknown, Invariant>([
  ['order.placed', 'order-charge'],
  ['order.status', 'order-status'],
  ['order.progress', 'lifecycle'],
  ['order.cancel_requested', 'lifecycle'],
  ['refill.requested', 'lifecycle'],
  ['refill.status', 'lifecycle'],
]);

function noOrders(): StatusCounts {
  return { pending: 0, processing: 0, in_progress: 0, completed: 0, partial: 0, canceled: 0 };
}

/**
 * The `orders` table, walked in key order beside the log. Placements mostly
 * come in key order, so each one usually meets its row at the cursor; a
 * placement further ahead moves the cursor there, and the rows it passes wait
 * in `passed` for their own placement (or are reported as having none).
 */
class OrderRowCursor {
  private readonly rows: Iterator<SourceRow<string>>;
  private current: SourceRow<string> | null = null;
  /** Rows the cursor passed that no placement has claimed yet, by storage key. */
  readonly passed = new Map<string, unknown>();
  passedPeak = 0;

  constructor(private readonly source: LedgerSource) {
    this.rows = source.orderRows()[Symbol.iterator]();
    this.advance();
  }

  private advance(): void {
    const next = this.rows.next();
    this.current = next.done === true ? null : { key: String(next.value.key), value: next.value.value };
  }

  /**
   * Claims the row of order `id` for its placement: the row's value, or
   * 'missing' when there is no such row, or 'claimed' when an earlier
   * placement already took it.
   */
  claim(id: string): unknown {
    // The usual case: the row at the cursor is this order's (rows hold
    // their public id), which spares computing the storage key.
    const here = this.current;
    if (here !== null && (here.value as { id?: unknown } | null)?.id === id) {
      this.advance();
      return here.value;
    }
    const key = this.source.orderKey(id);
    while (this.current !== null && this.source.compareOrderKeys(this.current.key, key) < 0) {
      this.passed.set(this.current.key, this.current.value);
      this.passedPeak = Math.max(this.passedPeak, this.passed.size);
      this.advance();
    }
    if (this.current !== null && this.current.key === key) {
      const value = this.current.value;
      this.advance();
      return value;
    }
    if (this.passed.has(key)) {
      const value = this.passed.get(key);
      this.passed.delete(key);
      return value;
    }
    // Behind the cursor and not waiting: a placement took it before, unless
    // the row does not exist at all.
    return this.source.orderRow(key) === undefined ? 'missing' : 'claimed';
  }

  /** Whether a placement has claimed the row under `key` (which exists). */
  claimed(key: string): boolean {
    if (this.passed.has(key)) return false;
    return this.current === null || this.source.compareOrderKeys(key, this.current.key) < 0;
  }

  /** Rows no placement claimed: those passed, then those never reached. */
  *unclaimed(): Generator<SourceRow<string>> {
    for (const [key, value] of this.passed) yield { key, value };
    while (this.current !== null) {
      yield this.current;
      this.advance();
    }
  }
}

class LedgerReplay {
  readonly accounts = new Map<number, AccountState>();
  readonly open = new ShardedMap<OpenOrder>();
  openPeak = 0;
  readonly counts = { events: 0, accounts: 0, orders: 0, idempotencyKeys: 0 };
  readonly statuses = noOrders();
  credited = 0n;
  debited = 0n;
  /** The highest order number placed so far: numbers grow with each order, so each must be above it. */
  private lastNumber = 0;
  refunded = 0n;
  private rows: OrderRowCursor | null = null;
  /** Each service as the latest service.saved left it: cancel and refill requests depend on it. */
  private readonly services = new Map<number, ServiceRecord>();
  /** The latest service.saved: which service, and the version it replaced (see servicesSeen). */
  private lastSave: { id: number; before: ServiceRecord | null } | null = null;
  /** Orders with a cancel request open: until their move to a final state. */
  private readonly cancelRequests = new ShardedMap<true>();
  /** Each order's open refill, until it moves to completed or rejected (at most one per order). */
  private readonly openRefills = new ShardedMap<NonNullable<OrderRecord['refill']>>();

  constructor(private readonly source: LedgerSource) {}

  get passedPeak(): number {
    return this.rows?.passedPeak ?? 0;
  }

  run(): void {
    this.rows = new OrderRowCursor(this.source);
    let expectedSeq = 1;
    for (const { key, value } of this.source.events()) {
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
      try {
        this.apply(seq, value);
      } catch (error) {
        if (error instanceof Broken || !isValueError(error)) throw error;
        // A rule that throws on a value no check above caught is still a
        // finding at this seq: verify names the event, it does not crash.
        // Anything else (a read that failed, a bug here) is not the log's
        // fault and fails the verification as an error, not a finding.
        const e = asRaw(value);
        const detail = `${String(e.type)} cannot be replayed: ${error instanceof Error ? error.message : String(error)}.`;
        fail(INVARIANT_OF_TYPE.get(e.type) ?? 'balance', seq, isInt(e.account) ? e.account : null, typeof e.order === 'string' ? e.order : null, detail);
      }
    }
    this.checkWallets();
    this.checkOrderRows(this.rows);
    this.checkOrderCounts();
    this.checkIdempotency();
  }

  private apply(seq: number, raw: unknown): void {
    if (raw === null || typeof raw !== 'object') fail('log-sequence', seq, null, null, 'the entry is not an event object.');
    const e = raw as Raw;
    if (typeof e.type !== 'string' || !Object.hasOwn(KNOWN_TYPES, e.type)) {
      fail('log-sequence', seq, null, null, `the event type ${JSON.stringify(e.type)} is unknown, so its effect on balances cannot be checked.`);
    }
    if (e.type === 'service.saved') return this.serviceSaved(seq, e);
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
      case 'order.progress':
      case 'order.cancel_requested':
      case 'refill.requested':
      case 'refill.status':
        return this.lifecycle(seq, accountId, e);
      case 'plan.granted':
        return this.planGranted(seq, accountId, account, e);
      default:
        // account.updated, secret.rotated, v2key.*, forcejoin.updated, order.rejected, webhook.*:
        // they move no money; naming a known account is all they must do.
        return;
    }
  }

  private accountCreated(seq: number, id: number, e: Raw): void {
    if (this.accounts.has(id)) fail('balance', seq, id, null, 'account.created opens an account that was already opened earlier in the log.');
    // Money reaches a wallet only through logged adjustments and refunds, so
    // an account opens empty; anything else would be credit with no reason.
    if (e.credits !== 0) fail('balance', seq, id, null, `account.created opens the wallet with ${credits(e.credits)}; an account must open with 0.`);
    this.accounts.set(id, { balance: 0, unlimitedExpiresMs: null, hasWallet: false });
    this.counts.accounts++;
  }

  private creditsAdjusted(seq: number, id: number, account: AccountState, e: Raw): void {
    if (!isInt(e.amount)) fail('balance', seq, id, null, `credits.adjusted carries an invalid amount ${credits(e.amount)}.`);
    account.balance = this.move(seq, id, null, account, e.amount, e.balance, () => `credits.adjusted of ${credits(e.amount)}`);
    this.credited += BigInt(e.amount);
  }

  /**
   * A grant as the actor makes it (decideGrant): 1 to PLAN_MONTHS_MAX months
   * at planPriceInr, the window ending where planExpiryAfter puts it from the
   * grant's time and the window the account had before it.
   */
  private planGranted(seq: number, id: number, account: AccountState, e: Raw): void {
    const { months, atMs, expiresMs } = e;
    if (!isInt(months) || months < 1 || months > PLAN_MONTHS_MAX) {
      fail('balance', seq, id, null, `plan.granted grants ${String(months)} months; a grant is a whole number of months from 1 to ${PLAN_MONTHS_MAX}.`);
    }
    if (!isInt(atMs)) fail('balance', seq, id, null, `plan.granted carries an invalid time (${String(atMs)}).`);
    if (e.priceInr !== planPriceInr(months)) {
      fail('balance', seq, id, null, `plan.granted prices ${months} months at ${String(e.priceInr)} INR but the plan costs ${planPriceInr(months)} INR.`);
    }
    const expected = planExpiryAfter(atMs, account.unlimitedExpiresMs, months);
    if (expiresMs !== expected && expiresMs !== planExpiryAfterBeforeClamp(atMs, account.unlimitedExpiresMs, months)) {
      fail(
        'balance',
        seq,
        id,
        null,
        `plan.granted ends the window at ${instant(expiresMs)} but ${months} months from ${instant(Math.max(atMs, account.unlimitedExpiresMs ?? 0))} end at ${instant(expected)}.`,
      );
    }
    // The window the wallet got is the logged one (either rule's).
    account.unlimitedExpiresMs = expiresMs as number;
  }

  private orderPlaced(seq: number, id: number, account: AccountState, e: Raw): void {
    const orderId = e.order;
    if (typeof orderId !== 'string' || orderId.length === 0) fail('order-charge', seq, id, null, 'order.placed does not carry an order id.');
    const row = this.rows!.claim(orderId);
    if (row === 'claimed') {
      fail('order-charge', seq, id, orderId, `the order id was already placed at seq ${this.placedSeq(orderId)}; order ids must be unique.`);
    }
    const { quantity, rate, charge, debit, number } = e;
    if (number !== undefined) {
      if (!isInt(number) || number <= this.lastNumber) {
        fail('order-charge', seq, id, orderId, `order.placed carries number ${String(number)}, not above the previous order's ${this.lastNumber}; order numbers grow by order and are never reused.`);
      }
      this.lastNumber = number;
    }
    if (!isInt(quantity) || quantity < 1) fail('order-charge', seq, id, orderId, `order.placed carries an invalid quantity (${String(quantity)}).`);
    if (!isInt(rate) || rate < 0) fail('order-charge', seq, id, orderId, `order.placed carries an invalid rate ${credits(rate)}.`);
    if (!isInt(charge) || charge < 0) fail('order-charge', seq, id, orderId, `order.placed carries an invalid charge ${credits(charge)}.`);
    if (!isInt(debit)) fail('order-charge', seq, id, orderId, `order.placed carries an invalid debit ${credits(debit)}.`);
    const runs = (e.extras as { runs?: unknown } | undefined)?.runs ?? 1;
    if (!isInt(runs) || runs < 1) fail('order-charge', seq, id, orderId, `order.placed carries invalid drip-feed runs (${String(runs)}).`);
    const times = runs === 1 ? '' : ` × runs ${runs}`;
    const expected = chargeFor(quantity, rate, runs);
    if (expected === null) fail('order-charge', seq, id, orderId, `quantity ${quantity} × rate ${credits(rate)}${times} is beyond the largest supported charge.`);
    if (expected !== charge) {
      fail('order-charge', seq, id, orderId, `the charge is ${credits(charge)} but quantity ${quantity} × rate ${credits(rate)}${times} is ${credits(expected)}.`);
    }
    if (debit !== charge && debit !== 0) {
      fail('order-charge', seq, id, orderId, `the debit ${credits(debit)} is neither the charge ${credits(charge)} nor 0.`);
    }
    // The actor debits 0 exactly when the unlimited window covers the wall
    // time it stamps on the event, and the whole charge otherwise.
    const unlimited = isInt(e.atMs) && isUnlimited(account, e.atMs);
    if (unlimited && debit !== 0) {
      fail('order-charge', seq, id, orderId, `the order was debited ${credits(debit)} but ${planWindow(account.unlimitedExpiresMs)} covered its time; it must be debited 0.`);
    }
    if (!unlimited && debit !== charge) {
      fail('order-charge', seq, id, orderId, `the order was not debited (charge ${credits(charge)}) but no unlimited-plan window covered its time.`);
    }
    account.balance = this.move(seq, id, orderId, account, -debit, e.balance, () => `order.placed debiting ${credits(debit)}`);
    this.debited += BigInt(debit);
    if (row === 'missing') fail('order-charge', seq, id, orderId, 'order.placed has no row in the orders table.');
    const r = asRaw(row);
    // Compared field by field first: this runs for every order of the log,
    // and the record naming the mismatch is only built when there is one.
    if (
      r.account !== id ||
      r.service !== e.service ||
      r.type !== e.orderType ||
      r.charge !== charge ||
      r.debit !== debit ||
      r.rate !== rate ||
      r.quantity !== quantity ||
      r.number !== number ||
      !sameField(r.extras, e.extras)
    ) {
      const placed: Raw = { account: id, service: e.service, type: e.orderType, charge, debit, rate, quantity, extras: e.extras, number };
      const field = ORDER_FIELDS.find((f) => !sameField(r[f], placed[f]))!;
      fail('order-charge', seq, id, orderId, `the orders row has ${field} ${shown(r[field])} but order.placed says ${shown(placed[field])}.`);
    }
    if (r.unlimited !== unlimited) {
      fail('order-charge', seq, id, orderId, `the orders row has unlimited ${String(r.unlimited)} but the order was placed ${unlimited ? 'inside' : 'outside'} an unlimited-plan window.`);
    }
    this.counts.orders++;
    this.statuses.pending++;
    // Only an order whose row ends somewhere else than where it starts is
    // remembered; every other order is, from here on, what its row says.
    if (r.status !== 'pending' || r.remains !== null) {
      const open: OpenOrder = { account: id, service: e.service as number, quantity, rate, debit, status: 'pending', remains: null, final: { status: r.status, remains: r.remains } };
      if (runs !== 1) open.extras = { runs };
      this.setOpen(orderId, open);
    }
  }

  private orderStatus(seq: number, id: number, account: AccountState, e: Raw): void {
    const orderId = e.order;
    if (typeof orderId !== 'string') fail('order-status', seq, id, null, 'order.status does not carry an order id.');
    const order = this.open.get(orderId) ?? this.settledOrder(orderId);
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
    const remainsProblem = remainsRefusal(unitsOrdered(order), toStatus, remains);
    if (remainsProblem === 'partial-needs-remains') {
      fail('order-status', seq, id, orderId, `a partial order needs remains from 1 to ${unitsOrdered(order) - 1}, not ${String(remains)}.`);
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
    account.balance = this.move(seq, id, orderId, account, refund, e.balance, () => `order.status to ${toStatus} refunding ${credits(refund)}`);
    this.refunded += BigInt(refund);
    this.statuses[order.status]--;
    this.statuses[toStatus]++;
    order.status = toStatus;
    order.remains = toStatus === 'partial' ? (remains as number) : null;
    if (FINAL_STATUSES.has(toStatus)) {
      if (isInt(e.atMs)) order.finishedAtMs = e.atMs;
      // A final move resolves an open cancel request, as the actor's does.
      this.cancelRequests.delete(orderId);
    }
    if (order.status === order.final.status && order.remains === order.final.remains) this.open.delete(orderId);
    else this.setOpen(orderId, order);
  }

  /**
   * (f) The lifecycle events that move no money: none carries an amount, a
   * refund or a balance, each names an order of its account, and each is one
   * the actor would accept at that point of the log, by the same rules
   * (src/ledger/lifecycle.ts): progress while in_progress, a cancel request
   * once per processing or in_progress order of a service that allows it, a
   * refill of a finished order within its service's window while none is
   * open, and a refill move forward from the status the refill is in.
   */
  private lifecycle(seq: number, id: number, e: Raw): void {
    const type = String(e.type);
    const orderId = e.order;
    if (typeof orderId !== 'string') fail('lifecycle', seq, id, null, `${type} does not carry an order id.`);
    for (const field of MONEY_FIELDS) {
      if (e[field] !== undefined) fail('lifecycle', seq, id, orderId, `${type} carries ${field} ${credits(e[field])}; it must move no money.`);
    }
    const order = this.open.get(orderId) ?? this.settledOrder(orderId);
    if (order === undefined) fail('lifecycle', seq, id, orderId, `${type} names an order that no earlier order.placed created.`);
    if (order.account !== id) fail('lifecycle', seq, id, orderId, `${type} names account ${id} but the order belongs to account ${order.account}.`);
    const atMs = e.atMs;
    if (!isInt(atMs)) fail('lifecycle', seq, id, orderId, `${type} carries an invalid time (${String(atMs)}).`);
    const refused = (why: string): never => fail('lifecycle', seq, id, orderId, `the actor refuses ${type} here: ${why}`);
    switch (e.type) {
      case 'order.progress': {
        const refusal = progressRefusal(order, e.startCount as number | null | undefined, e.remains as number | null | undefined);
        if (refusal === 'not-in-progress') refused(`progress is recorded only while the order is in_progress, and it is ${order.status}.`);
        if (refusal !== null) {
          refused(`it records start_count ${String(e.startCount)} and remains ${String(e.remains)}; start_count must be 0 or more, remains must lie in 0..${unitsOrdered(order)}.`);
        }
        return;
      }
      case 'order.cancel_requested': {
        const asked = { status: order.status, cancelRequested: this.cancelRequests.has(orderId) };
        const verdicts = this.servicesSeen(order.service).map((service) => cancelVerdict(asked, service));
        if (!verdicts.some((v) => v.kind === 'request')) {
          const verdict = verdicts[0]!;
          refused(verdict.kind === 'refused' ? cancelRefusalMessage(verdict.reason, order.status) : 'a pending order is canceled at once (order.status), never by request.');
        }
        this.cancelRequests.set(orderId, true);
        return;
      }
      case 'refill.requested': {
        const refillId = e.refill;
        if (!isInt(refillId) || refillId < 1) fail('lifecycle', seq, id, orderId, `refill.requested carries an invalid refill id ${String(refillId)}.`);
        const asked = { status: order.status, finishedAtMs: order.finishedAtMs, refill: this.openRefills.get(orderId) };
        const services = this.servicesSeen(order.service);
        const refusals = services.map((service) => refillRefusal(asked, service, atMs));
        if (!refusals.includes(null)) refused(refillRefusalMessage(refusals[0]!, order.status, services[0]?.refillDays ?? 0));
        this.openRefills.set(orderId, { id: refillId, status: 'pending', createdAtMs: atMs });
        return;
      }
      case 'refill.status': {
        // The actor moves a refill from the status the order's record holds
        // for it, and only while it is the order's open refill.
        const refill = this.openRefills.get(orderId);
        const move = `refill ${String(e.refill)} moves from ${String(e.from)} to ${String(e.to)}`;
        if (refill === undefined || refill.id !== e.refill || refill.status !== e.from) {
          const open = refill === undefined ? 'the order has no open refill' : `the order's open refill is ${refill.id}, ${refill.status}`;
          fail('lifecycle', seq, id, orderId, `${move} but ${open}.`);
        }
        if (!isRefillStatus(e.to) || refillMoveRefusal(refill.status, e.to) !== null) {
          fail('lifecycle', seq, id, orderId, `${move}; refills move forward only and completed or rejected is final.`);
        }
        if (isOpenRefill(e.to)) refill.status = e.to;
        else this.openRefills.delete(orderId);
        return;
      }
    }
  }

  /** service.saved: the catalogue's new version of a service. */
  private serviceSaved(seq: number, e: Raw): void {
    const saved = asRaw(e.service);
    if (!isInt(saved.id)) fail('lifecycle', seq, null, null, `service.saved carries no valid service id (${String(saved.id)}).`);
    this.lastSave = { id: saved.id, before: this.services.get(saved.id) ?? null };
    // Services saved before a field existed read as its default, as the catalogue reads them.
    this.services.set(saved.id, withServiceDefaults(saved as Partial<ServiceRecord> & Pick<ServiceRecord, 'id'>));
  }

  /**
   * The versions of service `id` a request logged now may have been decided
   * on (null: no such service). The catalogue saves one service at a time
   * and applies a save only once it is durable, so a request logged after
   * the latest service.saved may still have read the version that save
   * replaced; every earlier save was applied before the latest was logged.
   */
  private servicesSeen(id: number): (ServiceRecord | null)[] {
    const current = this.services.get(id) ?? null;
    return this.lastSave?.id === id ? [current, this.lastSave.before] : [current];
  }

  /**
   * An order that is not open is, at this point of the log, exactly what its
   * row says (or was never placed): its state comes from the row. Reached by
   * a lifecycle event, or by a move beyond the row's status, which the end
   * reports. Whether a cancel request or a refill is open is not taken from
   * the row, which holds the end state: the replay tracks those itself.
   */
  private settledOrder(orderId: string): OpenOrder | undefined {
    const key = this.source.orderKey(orderId);
    const row = this.source.orderRow(key);
    if (row === undefined || !this.rows!.claimed(key)) return undefined;
    const r = asRaw(row);
    if (!isOrderStatus(r.status)) return undefined;
    return {
      account: r.account as number,
      service: r.service as number,
      quantity: r.quantity as number,
      extras: r.extras as { runs?: number } | undefined,
      rate: r.rate as number,
      debit: r.debit as number,
      status: r.status,
      remains: (r.remains as number | null) ?? null,
      finishedAtMs: isInt(r.finishedAtMs) ? r.finishedAtMs : undefined,
      final: { status: r.status, remains: r.remains },
    };
  }

  private setOpen(orderId: string, order: OpenOrder): void {
    this.open.set(orderId, order);
    // ShardedMap.size sums 64 shards: count only when the map grew.
    if (this.open.size > this.openPeak) this.openPeak = this.open.size;
  }

  /** The seq of an order's first placement: a second scan, paid only when reporting a duplicate. */
  private placedSeq(orderId: string): string {
    for (const { key, value } of this.source.events()) {
      const e = asRaw(value);
      if (e.type === 'order.placed' && e.order === orderId) return String(key);
    }
    return 'an earlier seq';
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
  private checkWallets(): void {
    for (const { key, value } of this.source.wallets()) {
      const id = key as unknown;
      const wallet = value as Raw | null;
      const account = isInt(id) ? this.accounts.get(id) : undefined;
      if (account === undefined) fail('wallet', null, isInt(id) ? id : null, null, `the wallet row ${String(id)} has no account.created in the log.`);
      account.hasWallet = true;
      if (wallet === null || wallet.credits !== account.balance) {
        fail('wallet', null, id as number, null, `the wallet holds ${credits(wallet?.credits)} but its ledger replays to ${credits(account.balance)}.`);
      }
      // The actor loads its plan window from this row, so a row that differs
      // from the grants would bill the next orders differently. Rows written
      // before the plan existed lack the field: no window, like null.
      if ((wallet.unlimitedExpiresMs ?? null) !== account.unlimitedExpiresMs) {
        fail('wallet', null, id as number, null, `the wallet row holds ${planWindow(wallet.unlimitedExpiresMs)} but its plan grants leave ${planWindow(account.unlimitedExpiresMs)}.`);
      }
    }
    for (const [id, account] of this.accounts) {
      if (!account.hasWallet) fail('wallet', null, id, null, 'the account was created in the log but has no wallet row.');
    }
  }

  /**
   * (c) and (d) against the orders table: every row was placed in the log
   * (placements claimed theirs during the replay), and every order still open
   * stopped short of, or went past, the status and remains its row holds.
   */
  private checkOrderRows(rows: OrderRowCursor): void {
    for (const { key, value } of rows.unclaimed()) {
      const row = asRaw(value);
      // Rows are stored under an internal key; the public id is in the row.
      const id = typeof row.id === 'string' ? row.id : key;
      fail('order-charge', null, isInt(row.account) ? row.account : null, id, 'the orders row has no order.placed in the log.');
    }
    for (const [id, order] of this.open) {
      fail(
        'order-status',
        null,
        order.account,
        id,
        `the orders row says ${String(order.final.status)} with remains ${String(order.final.remains)} but the log leaves it ${order.status} with remains ${String(order.remains)}.`,
      );
    }
  }

  /**
   * (d'): the status index and the counts row (what stats and metrics
   * report) hold as many orders in each status as the log leaves there.
   */
  private checkOrderCounts(): void {
    const replayed = this.statuses;
    const indexed = this.source.indexCounts();
    const row = this.source.countsRow();
    for (const status of ORDER_STATUSES) {
      if (indexed[status] !== replayed[status]) {
        fail('order-status', null, null, null, `the status index lists ${indexed[status]} ${status} orders but the log leaves ${replayed[status]}.`);
      }
      if (row !== undefined && (!isCounts(row) || row[status] !== replayed[status])) {
        fail('order-status', null, null, null, `the order counts row says ${String((row as Raw | null)?.[status])} ${status} orders but the log leaves ${replayed[status]}.`);
      }
    }
  }

  /** (e): idempotency rows point at orders of their own account. */
  private checkIdempotency(): void {
    for (const { key, value } of this.source.idempotency()) {
      this.counts.idempotencyKeys++;
      const k = String(key);
      const colon = k.indexOf(':');
      const accountId = colon > 0 ? Number(k.slice(0, colon)) : NaN;
      if (!isInt(accountId)) fail('idempotency', null, null, null, `the idempotency key ${JSON.stringify(k)} is not of the form accountId:key.`);
      const orderId = (value as { order?: unknown } | null)?.order ?? null;
      if (orderId === null) continue;
      // Every row was matched to its placement above, so a row is an order.
      const row = typeof orderId === 'string' ? this.source.orderRow(this.source.orderKey(orderId)) : undefined;
      if (row === undefined) {
        fail('idempotency', null, accountId, String(orderId), `the idempotency key ${JSON.stringify(k.slice(colon + 1))} points at an order that does not exist.`);
      }
      const owner = asRaw(row).account;
      if (owner !== accountId) {
        fail('idempotency', null, accountId, orderId as string, `the idempotency key ${JSON.stringify(k.slice(colon + 1))} points at an order of account ${String(owner)}.`);
      }
    }
  }
}

export function isCounts(row: unknown): row is StatusCounts {
  if (row === null || typeof row !== 'object') return false;
  return ORDER_STATUSES.every((s) => Number.isSafeInteger((row as Raw)[s]));
}

/**
 * Replays the source's whole log and checks every invariant above, stopping
 * at the first one that breaks. Synchronous and read-only: run it where a
 * long loop blocks nobody (a child process, the CLI, the simulator).
 */
export function replayLedger(source: LedgerSource): VerifyReport {
  const replay = new LedgerReplay(source);
  let broken: BrokenInvariant | null = null;
  try {
    replay.run();
  } catch (error) {
    if (!(error instanceof Broken)) throw error;
    broken = error.finding;
  }
  return {
    ok: broken === null,
    firstBroken: broken?.sentence ?? null,
    broken,
    counts: { ...replay.counts },
    totals: { credited: replay.credited, debited: replay.debited, refunded: replay.refunded },
    retained: { openOrdersPeak: replay.openPeak, passedRowsPeak: replay.passedPeak },
  };
}
