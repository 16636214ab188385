/**
 * Exact decimal rendering of BigInt micro-credits. Ledger totals are sums
 * over every wallet and may leave the safe-integer range that
 * `formatMicro` accepts, so they are BigInt and need their own formatter.
 */
import { MICRO_PER_CREDIT as MICRO_PER_CREDIT_NUMBER } from './units.js';

const MICRO_PER_CREDIT = BigInt(MICRO_PER_CREDIT_NUMBER);

/** 300000n → "0.3", -1500000n → "-1.5", 10n ** 20n → "100000000000000". */
export function formatBig(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const whole = abs / MICRO_PER_CREDIT;
  const frac = abs % MICRO_PER_CREDIT;
  let text = whole.toString();
  if (frac !== 0n) text += '.' + frac.toString().padStart(6, '0').replace(/0+$/, '');
  return negative ? '-' + text : text;
}
