/**
 * The rules that move money, written once. The wallet's decision function,
 * verify's replay, the simulator and the tests all call these; none keeps a
 * copy. Every function is pure and exact (integer micro-credits).
 */
import { multiplyMicro } from '../money/index.js';
import { assert } from '../platform/index.js';
import type { OrderRecord, OrderStatus, WalletRecord } from './records.js';

export const ORDER_STATUSES: readonly OrderStatus[] = ['pending', 'processing', 'in_progress', 'completed', 'partial', 'canceled'];
export const FINAL_STATUSES: ReadonlySet<OrderStatus> = new Set(['completed', 'partial', 'canceled']);
/** pending < processing < in_progress < every final state: orders only move up this order. */
export const STATUS_RANK: ReadonlyMap<string, number> = new Map(ORDER_STATUSES.map((s, i) => [s, Math.min(i, 3)]));

/** Whether `value` names a status. The map's keys are strings, and a map finds no other value among them, so nothing else needs checking. */
export function isOrderStatus(value: unknown): value is OrderStatus {
  return (STATUS_RANK as ReadonlyMap<unknown, number>).has(value);
}

/**
 * Why an order may not move from `from` to `to`, or null when it may: a final
 * order never moves again (not even to the status it has), and every other
 * move goes strictly forward.
 */
export function statusMoveRefusal(from: OrderStatus, to: OrderStatus): 'final' | 'backwards' | null {
  if (FINAL_STATUSES.has(from)) return 'final';
  if (STATUS_RANK.get(to)! <= STATUS_RANK.get(from)!) return 'backwards';
  return null;
}

/**
 * The units an order asks for in all, which `remains` counts and a partial
 * refund prices: its quantity, times its runs for a drip-feed order (whose
 * quantity is per run, and whose charge is quantity × runs × rate).
 */
export function unitsOrdered(order: { quantity: number; extras?: { runs?: number } | undefined }): number {
  return order.quantity * (order.extras?.runs ?? 1);
}

/**
 * Why `remains` does not fit a move to `to`, or null when it does: a partial
 * order names the units not delivered (1 to units − 1, see unitsOrdered),
 * every other move names none.
 */
export function remainsRefusal(units: number, to: OrderStatus, remains: unknown): 'partial-needs-remains' | 'remains-only-on-partial' | null {
  if (to === 'partial') {
    return Number.isSafeInteger(remains) && (remains as number) >= 1 && (remains as number) < units ? null : 'partial-needs-remains';
  }
  return remains === null ? null : 'remains-only-on-partial';
}

/**
 * What a move to `to` returns to the wallet, in the same commit as the move:
 * `canceled` the whole debit, `partial` remains × rate, nothing otherwise.
 * An order billed under the unlimited plan was debited 0, so gets 0 back.
 * Call it only for a move that `statusMoveRefusal` and `remainsRefusal` allow.
 */
export function refundFor(order: Pick<OrderRecord, 'debit' | 'rate'>, to: OrderStatus, remains: number | null): number {
  if (to === 'canceled') return order.debit;
  if (to !== 'partial' || order.debit === 0) return 0;
  const refund = multiplyMicro(remains!, order.rate);
  // Constant message, remains as detail: replay runs this for every partial move it reads.
  assert(refund !== null && refund <= order.debit, 'a partial refund (remains × rate) must not exceed the debit', remains);
  return refund;
}

/**
 * What an order costs for what was delivered, which API v2's status shows
 * as its `charge` (panels show it net of the refund; docs/DECISIONS.md):
 * nothing once canceled, the charge less remains × rate once partial, the
 * charge otherwise. It reads the charge, not the debit, so an order billed
 * under the unlimited plan shows the same figure as one that was debited.
 */
export function chargeDelivered(order: Pick<OrderRecord, 'status' | 'charge' | 'rate' | 'remains'>): number {
  if (order.status === 'canceled') return 0;
  if (order.status !== 'partial') return order.charge;
  const undelivered = multiplyMicro(order.remains!, order.rate);
  assert(undelivered !== null && undelivered <= order.charge, 'a partial order\'s remains × rate must not exceed its charge', order.remains);
  return order.charge - undelivered;
}

/**
 * charge = quantity × rate exactly (× runs for a drip-feed order, debited
 * once at placement), or null when it would leave the exact range.
 */
export function chargeFor(quantity: number, rate: number, runs = 1): number | null {
  const once = multiplyMicro(quantity, rate);
  return once === null ? null : multiplyMicro(runs, once);
}

/** Price of the API Unlimited plan, whole rupees per month. */
export const PLAN_PRICE_INR_PER_MONTH = 9_999; // not a limit: the plan's price, set by the product

export function planPriceInr(months: number): number {
  return months * PLAN_PRICE_INR_PER_MONTH;
}

/**
 * Adds calendar months in UTC, the same time of day, on the same day of the
 * month or that month's last day when it is shorter: 31 Jan + 1 month = 28
 * (or 29) Feb, as a calendar (and PostgreSQL's interval) counts, not 3 Mar
 * as Date's overflow would.
 */
export function addMonthsUtc(ms: number, months: number): number {
  const d = new Date(ms);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d.getTime();
}

/**
 * How grants were computed before the month-end clamp (25dafa4): Date's
 * overflow, 31 Jan + 1 month = 3 Mar. Logs written then hold such expiries;
 * replay accepts them so that verify (and the snapshot it gates) does not
 * reject a store for a rule it followed when it was written.
 */
export function planExpiryAfterBeforeClamp(wallMs: number, currentExpiresMs: number | null, months: number): number {
  const d = new Date(Math.max(wallMs, currentExpiresMs ?? 0));
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.getTime();
}

/**
 * When the unlimited window ends after a grant of `months` at `wallMs`: the
 * months are added to the later of now and the current expiry, so a grant
 * before the window closes extends it instead of restarting it.
 */
export function planExpiryAfter(wallMs: number, currentExpiresMs: number | null, months: number): number {
  return addMonthsUtc(Math.max(wallMs, currentExpiresMs ?? 0), months);
}

/** Whether the unlimited window covers this moment: orders then are not debited. */
export function isUnlimited(wallet: Pick<WalletRecord, 'unlimitedExpiresMs'>, wallMs: number): boolean {
  return wallet.unlimitedExpiresMs !== null && wallMs < wallet.unlimitedExpiresMs;
}
