/**
 * Validation of an order payload ({service, target, quantity}), shared by
 * the customer API and the operator's panel orders so both apply exactly
 * the same rules.
 */
import { errorOutcome, type ErrorOutcome } from '../errors.js';
import type { OrderInput } from '../actors/index.js';
import { compile, OrderBody, TARGET_CHARS_MAX } from './schemas.js';

const validator = compile(OrderBody);
/**
 * Refused anywhere in a target: C0 and C1 controls, space, DEL, and the
 * invisible or direction-changing characters (zero-width, bidi overrides,
 * line separators, BOM) that would make a stored URL differ from what an
 * operator reads.
 */
/** Half of a UTF-16 pair: not text, and it would be stored altered (as U+FFFD). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const TARGET_FORBIDDEN = /[\x00-\x20\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** `targetCharsMax` is the operator's limit (TARGET_CHARS_MAX), at most the contract's 2,048. */
export function checkOrderInput(
  value: unknown,
  targetCharsMax: number = TARGET_CHARS_MAX,
): { ok: true; input: OrderInput } | { ok: false; error: ErrorOutcome } {
  const checked = validator.check(value);
  if (!checked.ok) return checked;
  const { service, target, quantity } = checked.value;
  if (target.length > targetCharsMax || !/^https?:\/\//i.test(target) || TARGET_FORBIDDEN.test(target) || LONE_SURROGATE.test(target)) {
    return {
      ok: false,
      error: errorOutcome(
        'VALIDATION',
        `Field 'target' must be an http or https URL of at most ${targetCharsMax} characters, without spaces or control characters.`,
      ),
    };
  }
  return { ok: true, input: { serviceId: service, target, quantity } };
}
