/**
 * Turns request bytes into a JSON value, or into the VALIDATION error a
 * client can act on: wrong content type (415), bytes that are not UTF-8,
 * text that is not JSON (400).
 */
import { errorOutcome, type ErrorOutcome } from '../errors.js';
import { firstInexactNumber } from './exact-numbers.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function isJsonContentType(contentType: string): boolean {
  const media = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return media === 'application/json';
}

export function parseJson(contentType: string, bytes: Buffer): { ok: true; value: unknown } | { ok: false; error: ErrorOutcome } {
  if (!isJsonContentType(contentType)) {
    return { ok: false, error: errorOutcome('VALIDATION', 'Send the body as JSON with Content-Type: application/json.', undefined, 415) };
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, error: errorOutcome('VALIDATION', 'The request body is not valid UTF-8.') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { ok: false, error: errorOutcome('VALIDATION', 'The request body is not valid JSON.') };
  }
  const inexact = firstInexactNumber(text);
  if (inexact !== null) return { ok: false, error: errorOutcome('VALIDATION', inexactMessage(inexact)) };
  return { ok: true, value };
}

/** The sentence for a number JSON.parse would round (exact-numbers.ts). */
export function inexactMessage(token: string): string {
  const shown = token.length > 40 ? `${token.slice(0, 40)}…` : token;
  return `The number ${shown} cannot be read exactly (it has more digits, or a larger or smaller exponent, than a JSON number keeps); send it as the value you mean, with at most 15 significant digits.`;
}

export const TOO_LARGE = (bytesMax: number): ErrorOutcome =>
  errorOutcome('VALIDATION', `The request body is larger than the limit of ${bytesMax} bytes.`, { limit: bytesMax }, 413);
