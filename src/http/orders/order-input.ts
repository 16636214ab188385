/**
 * Validation of an order payload ({service, target, quantity}), shared by
 * the customer API and the operator's panel orders so both apply exactly
 * the same rules.
 */
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import type { OrderPayload, ServiceRecord } from '../../ledger/index.js';
import { compile, OrderBody } from './schemas.js';

const validator = compile(OrderBody);
/** Half of a UTF-16 pair: not text, and it would be stored altered (as U+FFFD). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/**
 * Refused anywhere in a target: C0 and C1 controls, space, DEL, and the
 * invisible or direction-changing characters (zero-width, bidi overrides,
 * line separators, BOM) that would make a stored URL differ from what an
 * operator reads.
 */
const TARGET_FORBIDDEN_CHARS = '\\x00-\\x20\\x7f-\\x9f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff';
const TARGET_FORBIDDEN = new RegExp(`[${TARGET_FORBIDDEN_CHARS}]`);
/** The target rule as a JSON Schema pattern, for the OpenAPI document: an http(s) URL without a forbidden character. */
export const TARGET_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://[^${TARGET_FORBIDDEN_CHARS}]*$`;

/**
 * `targetCharsMax` is the operator's limit (TARGET_CHARS_MAX), at most the
 * contract's 2,048. Only the checks that do not depend on the catalogue run
 * here: the payload is kept as sent, and `service` (the catalogue's record
 * for the id sent, or null) goes with it to the actor, whose decision reads
 * the payload by the service's order type after looking up the
 * Idempotency-Key, so that a retry replays its first answer whatever the
 * operator changed in the service since (see decideOrder).
 */
export function checkOrderInput(
  value: unknown,
  targetCharsMax: number,
  lookup: (id: number) => ServiceRecord | null,
): { ok: true; payload: OrderPayload; service: ServiceRecord | null } | { ok: false; error: ErrorOutcome } {
  const checked = validator.check(value);
  if (!checked.ok) return checked;
  const { service: serviceId, target, ...inputs } = checked.value;
  if (target.length > targetCharsMax || !/^https?:\/\//i.test(target) || TARGET_FORBIDDEN.test(target) || LONE_SURROGATE.test(target)) {
    return {
      ok: false,
      error: errorOutcome(
        'VALIDATION',
        `Field 'target' must be an http or https URL of at most ${targetCharsMax} characters, without spaces or control characters.`,
      ),
    };
  }
  return { ok: true, payload: { serviceId, target, ...inputs }, service: lookup(serviceId) };
}
