/**
 * The Idempotency-Key header: 1 to 255 printable ASCII characters, sent
 * bare or as a quoted structured-field string ("abc", with \" and \\
 * escapes). The fingerprint that binds a key to its payload is a ledger
 * rule (src/ledger/order-fingerprint.ts).
 */
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { IDEMPOTENCY_KEY_CHARS_MAX } from '../limits.js';

const PRINTABLE = /^[\x20-\x7e]+$/;
/** The inside of a structured-field string: printable ASCII, with only \" and \\ as escapes. */
const SF_STRING_INNER = /^(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/;

export function parseIdempotencyKey(header: string): { ok: true; key: string } | { ok: false; error: ErrorOutcome } {
  let key = header;
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    const inner = key.slice(1, -1);
    if (!SF_STRING_INNER.test(inner)) return { ok: false, error: invalid() };
    key = inner.replace(/\\(["\\])/g, '$1');
  }
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_CHARS_MAX || !PRINTABLE.test(key)) return { ok: false, error: invalid() };
  return { ok: true, key };
}

function invalid(): ErrorOutcome {
  return errorOutcome('VALIDATION', `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_CHARS_MAX} printable ASCII characters.`);
}
