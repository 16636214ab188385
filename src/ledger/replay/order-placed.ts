/**
 * order.placed, invariant (c) of `replayLedger`: the charge is quantity ×
 * rate × runs, the debit is 0 inside an unlimited-plan window and the whole
 * charge outside one, the balance it leaves is the one it carries, order
 * numbers grow, and the order's `orders` row agrees with the event.
 */
import { isOrderType, orderShapeProblem, type OrderExtras } from '../order-types.js';
import { chargeFor, isUnlimited } from '../rules.js';
import { moveBalance } from './account-events.js';
import { fail } from './finding.js';
import type { LedgerSource } from './ledger-source.js';
import { finalState, type OpenOrder } from './open-orders.js';
import { asRaw, isInt, type Raw } from './raw.js';
import type { AccountState, ReplayState } from './replay-state.js';
import { credits, planWindow, shown } from './wording.js';
import { subscriptionOrder } from './subscription-events.js';

/**
 * The fields an orders row must share with its order.placed (whose `type`
 * is the event's orderType), in the order a mismatch is named. The extras
 * matter to money: their runs multiply the units a partial refund counts.
 */
const ORDER_FIELDS = ['account', 'service', 'type', 'charge', 'debit', 'rate', 'quantity', 'extras', 'number'] as const;

/** The amounts an order.placed carries, each checked to be of its kind. */
interface PlacedAmounts {
  quantity: number;
  rate: number;
  charge: number;
  debit: number;
  runs: number;
}

/** order.placed: the order's charge and debit, the balance it leaves, and its row. */
export function orderPlaced(state: ReplayState, seq: number, id: number, account: AccountState, e: Raw): void {
  const orderId = e.order;
  if (typeof orderId !== 'string' || orderId.length === 0) fail('order-charge', seq, id, null, 'order.placed does not carry an order id.');
  const row = state.rows.claim(orderId);
  if (row === 'claimed') {
    fail('order-charge', seq, id, orderId, `the order id was already placed at seq ${placedSeq(state.source, orderId)}; order ids must be unique.`);
  }
  if (e.number !== undefined) {
    if (!isInt(e.number) || e.number <= state.lastNumber) {
      fail('order-charge', seq, id, orderId, `order.placed carries number ${String(e.number)}, not above the previous order's ${state.lastNumber}; order numbers grow by order and are never reused.`);
    }
    state.lastNumber = e.number;
  }
  const placed = placedAmounts(seq, id, orderId, e);
  checkInputs(seq, id, orderId, e, placed.quantity);
  const { debit } = placed;
  const unlimited = unlimitedDebit(seq, id, orderId, account, e, placed);
  account.balance = moveBalance(seq, id, orderId, account, -debit, e.balance, () => `order.placed debiting ${credits(debit)}`);
  state.totals.debited += BigInt(debit);
  if (row === 'missing') fail('order-charge', seq, id, orderId, 'order.placed has no row in the orders table.');
  const r = asRaw(row);
  checkRow(seq, id, orderId, r, e, placed, unlimited);
  subscriptionOrder(state, seq, id, orderId, e, r);
  state.counts.orders++;
  state.statuses.pending++;
  // Only an order whose row ends somewhere else than where it starts is
  // remembered; every other order is, from here on, what its row says.
  if (r.status !== 'pending' || r.remains !== null || r.worker !== undefined || r.leaseExpiresMs !== undefined) {
    const { quantity, rate, runs } = placed;
    const open: OpenOrder = { account: id, service: e.service as number, quantity, rate, debit, status: 'pending', remains: null, final: finalState(r) };
    // Stryker disable next-line ConditionalExpression: equivalent: an order's units count runs as 1 when it has none (unitsOrdered), so runs 1 kept or left out reads the same
    if (runs !== 1) open.extras = { runs };
    state.orders.hold(orderId, open);
  }
}

/** The amounts of an order.placed, each of its kind, its charge quantity × rate × runs and its debit the charge or 0. */
function placedAmounts(seq: number, id: number, orderId: string, e: Raw): PlacedAmounts {
  const { quantity, rate, charge, debit } = e;
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
  return { quantity, rate, charge, debit, runs };
}

/**
 * The order's type is one the server knows, and its inputs follow that
 * type's rules (orderShapeProblem): the quantity a list or a package
 * derives, the fields the type takes, their limits. An order without a
 * type is a Default order.
 */
function checkInputs(seq: number, id: number, orderId: string, e: Raw, quantity: number): void {
  const type = e.orderType ?? 'Default';
  if (!isOrderType(type)) fail('order-charge', seq, id, orderId, `order.placed carries an unknown order type ${shown(type)}.`);
  const problem = orderShapeProblem(type, quantity, e.extras as OrderExtras | undefined);
  if (problem !== null) fail('order-charge', seq, id, orderId, `order.placed: ${problem}`);
}

/**
 * Whether the order was placed under the unlimited plan, checking its debit
 * says so: the actor debits 0 exactly when the unlimited window covers the
 * wall time it stamps on the event, and the whole charge otherwise.
 */
function unlimitedDebit(seq: number, id: number, orderId: string, account: AccountState, e: Raw, { charge, debit }: PlacedAmounts): boolean {
  const unlimited = isInt(e.atMs) && isUnlimited(account, e.atMs);
  if (unlimited && debit !== 0) {
    fail('order-charge', seq, id, orderId, `the order was debited ${credits(debit)} but ${planWindow(account.unlimitedExpiresMs)} covered its time; it must be debited 0.`);
  }
  if (!unlimited && debit !== charge) {
    fail('order-charge', seq, id, orderId, `the order was not debited (charge ${credits(charge)}) but no unlimited-plan window covered its time.`);
  }
  return unlimited;
}

/** The orders row `r` agrees with its order.placed on every field of ORDER_FIELDS and on the unlimited flag. */
function checkRow(seq: number, id: number, orderId: string, r: Raw, e: Raw, { quantity, rate, charge, debit }: PlacedAmounts, unlimited: boolean): void {
  const number = e.number;
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
}

/** Equal values, or records of equal values (an order's extras hold strings and numbers only). */
function sameField(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => (a as Raw)[k] === (b as Raw)[k]);
}

/** The seq of an order's first placement: a second scan, paid only when reporting a duplicate. */
function placedSeq(source: LedgerSource, orderId: string): string {
  for (const { key, value } of source.events()) {
    const e = asRaw(value);
    if (e.type === 'order.placed' && e.order === orderId) return String(key);
  }
  // Stryker disable next-line StringLiteral: equivalent: unreachable, since the scan meets at the latest the placement being reported, which is in this log
  return 'an earlier seq';
}
