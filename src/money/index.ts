/**
 * Exact money. Every amount is an integer count of micro-credits
 * (1 credit = 1,000,000 micro-credits) held in a JavaScript number that is
 * always a safe integer, so it is exact. Arithmetic that could leave the safe
 * range is done in BigInt and refused when the result does not fit.
 */
import { assert } from '../platform/index.js';
import { decimalText } from './decimal-text.js';
import { MICRO_DIGITS, MICRO_PER_CREDIT } from './units.js';

export { MICRO_DIGITS, MICRO_PER_CREDIT };

/** The largest amount any wallet, rate or charge may hold, in micro-credits. */
export const MICRO_MAX = Number.MAX_SAFE_INTEGER;

const MICRO_PER_CREDIT_BIG = BigInt(MICRO_PER_CREDIT);
const DECIMAL = /^(-)?(\d{1,16})(?:\.(\d{1,6}))?$/;

/**
 * Parses an exact decimal ("0.3", "-12", "1000000000.000001") into
 * micro-credits. Returns null when the text is not such a decimal or does not
 * fit in the safe range.
 */
export function parseMicro(text: string): number | null {
  const m = DECIMAL.exec(text);
  if (m === null) return null;
  const whole = BigInt(m[2]!);
  const frac = BigInt((m[3] ?? '').padEnd(MICRO_DIGITS, '0'));
  let micro = whole * MICRO_PER_CREDIT_BIG + frac;
  if (m[1] !== undefined) micro = -micro;
  if (micro > BigInt(MICRO_MAX) || micro < -BigInt(MICRO_MAX)) return null;
  return Number(micro);
}

/**
 * Converts a value that arrived as a JSON number or string into
 * micro-credits. A JSON number is taken at its shortest round-trip decimal
 * form (what `String(n)` prints, the same digits the client wrote for any
 * number of up to 15 significant digits), so no binary-float arithmetic is
 * ever done on it.
 */
export function microFromJson(value: unknown): number | null {
  return parseMicro(decimalText(value));
}

/** Renders micro-credits as the shortest exact decimal: 300000 → "0.3". */
export function formatMicro(micro: number): string {
  assertMicro(micro);
  const negative = micro < 0;
  const abs = negative ? -micro : micro;
  const whole = Math.floor(abs / MICRO_PER_CREDIT);
  const frac = abs - whole * MICRO_PER_CREDIT;
  let text = String(whole);
  if (frac !== 0) {
    text += '.' + String(frac).padStart(MICRO_DIGITS, '0').replace(/0+$/, '');
  }
  return negative ? '-' + text : text;
}

/**
 * quantity × rate, exactly. Returns null when the product would leave the
 * safe range (the caller refuses the order instead of rounding it).
 */
export function multiplyMicro(quantity: number, rateMicro: number): number | null {
  // Both are safe integers, so their exact product is an integer, and IEEE
  // multiplication rounds it correctly: when the float result is within the
  // safe range, the exact product is too (rounding is monotonic and 2^53 is
  // a float) and the result is that product, exactly; beyond it, the exact
  // product is at least 2^53, past MICRO_MAX. No BigInt, which costs a few
  // allocations on every order and every order verify replays.
  // A fraction here is a caller's bug, never a value to round.
  assert(Number.isInteger(quantity), 'multiplyMicro takes integers; the quantity is not one', quantity);
  assert(Number.isInteger(rateMicro), 'multiplyMicro takes integers; the rate is not one', rateMicro);
  const product = quantity * rateMicro;
  if (product > MICRO_MAX || product < -MICRO_MAX) return null;
  return product === 0 ? 0 : product; // never -0
}

/** Sum of two amounts, or null when it would leave the safe range. */
export function addMicro(a: number, b: number): number | null {
  const sum = a + b;
  // Both operands are safe integers, so the float sum is off only when it
  // leaves the safe range, which isSafeInteger detects.
  return Number.isSafeInteger(sum) ? sum : null;
}

export function assertMicro(micro: number): void {
  assert(Number.isSafeInteger(micro), 'a money amount is not a safe integer of micro-credits', micro);
}
export { formatBig } from './big.js';
export { formatPer1000, parsePer1000, UNITS_PER_QUOTE, PER_QUOTE_DIGITS, type Per1000 } from './per-thousand.js';
