/**
 * How the replay's sentences quote values. A finding quotes what the log
 * holds, which may be malformed, so each helper falls back to the raw value
 * when it is not of the kind expected rather than throwing while reporting.
 */
import { formatMicro } from '../../money/index.js';
import { isInt } from './raw.js';

/** An instant as ISO 8601, or the raw value when it is not one (toISOString throws on those). */
export function instant(ms: unknown): string {
  return isInt(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms);
}

/** "an unlimited-plan window to <instant>", or "no unlimited-plan window". */
export function planWindow(expiresMs: unknown): string {
  return expiresMs === null || expiresMs === undefined ? 'no unlimited-plan window' : `an unlimited-plan window to ${instant(expiresMs)}`;
}

/** "3.5 credits", or the raw value when it is not even a valid amount. */
export function credits(n: unknown): string {
  return isInt(n) ? `${formatMicro(n)} credits` : `${String(n)} (not a whole number of micro-credits)`;
}

/** A field's value in a sentence: a record as its fields, an absent one as none. */
export function shown(value: unknown): string {
  if (value === undefined) return 'none';
  if (value === null || typeof value !== 'object') return String(value);
  return `{${Object.entries(value).map(([k, v]) => `${k}: ${String(v)}`).join(', ')}}`;
}
