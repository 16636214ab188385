/**
 * Prices per 1,000 units, as suppliers and operators quote them. A rate is
 * stored per unit in micro-credits (the specification's `rate`), so a price
 * per 1,000 is that rate × 1,000, exactly, and a price per 1,000 is a rate
 * only when it divides into whole micro-credits a unit: at most 3 decimal
 * places (1.234 per 1,000 is 0.001234 a unit; 1.2345 would be 0.0012345, finer
 * than money counts). Such a price is refused, never rounded.
 */
import { formatBig } from './big.js';
import { decimalText } from './decimal-text.js';
import { MICRO_DIGITS } from './units.js';

/** The units a quoted price is for. */
export const UNITS_PER_QUOTE = 1_000; // not a limit: prices are quoted per 1,000 units

/** Decimal places of the power of ten UNITS_PER_QUOTE is. */
const QUOTE_DIGITS = 3;

/** Decimal places a price per 1,000 may have: money's, less the three the division by 1,000 adds. */
export const PER_QUOTE_DIGITS = MICRO_DIGITS - QUOTE_DIGITS;

const DECIMAL = /^(\d{1,19})(?:\.(\d{1,30}))?$/;

/** A per-unit rate in micro-credits as its price per 1,000 units: 1500 → "1.5". */
export function formatPer1000(rateMicro: number): string {
  return formatBig(BigInt(rateMicro) * BigInt(UNITS_PER_QUOTE));
}

export type Per1000 = { ok: true; rateMicro: number } | { ok: false; message: string };

/**
 * A price per 1,000 units (a JSON number or a decimal string, never
 * negative) as a per-unit rate in micro-credits, or the sentence that
 * refuses it. `name` is how the caller calls the field.
 */
export function parsePer1000(value: unknown, name: string): Per1000 {
  const text = decimalText(value);
  const m = DECIMAL.exec(text);
  if (m === null) return { ok: false, message: `${name} must be a non-negative decimal number of credits per 1,000 units, such as 1.5.` };
  const whole = m[1]!;
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (frac.length > PER_QUOTE_DIGITS) {
    return {
      ok: false,
      message:
        `${name} ${text} is ${perUnitText(whole, frac)} credits a unit, finer than money counts (${MICRO_DIGITS} decimal places); ` +
        `give ${name} with at most ${PER_QUOTE_DIGITS} decimal places.`,
    };
  }
  const micro = BigInt(whole) * BigInt(UNITS_PER_QUOTE) + BigInt(frac.padEnd(PER_QUOTE_DIGITS, '0'));
  if (micro > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, message: `${name} ${text} is larger than the largest supported rate.` };
  return { ok: true, rateMicro: Number(micro) };
}

/** whole.frac divided by 1,000, as decimal text: ("1", "2345") → "0.0012345". */
function perUnitText(whole: string, frac: string): string {
  const digits = whole.padStart(QUOTE_DIGITS + 1, '0');
  const head = digits.slice(0, -QUOTE_DIGITS).replace(/^0+(?=\d)/, '');
  return `${head}.${digits.slice(-QUOTE_DIGITS)}${frac}`;
}
