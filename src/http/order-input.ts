/**
 * Validation of an order payload ({service, target, quantity}), shared by
 * the customer API and the operator's panel orders so both apply exactly
 * the same rules.
 */
import { errorOutcome, type ErrorOutcome } from '../errors.js';
import { readOrderInputs, type OrderInput, type ServiceRecord } from '../ledger/index.js';
import { compile, OrderBody } from './schemas.js';

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

/**
 * `targetCharsMax` is the operator's limit (TARGET_CHARS_MAX), at most the
 * contract's 2,048. `service` is the catalogue's record for the id sent, or
 * null: the inputs of a known service are read by its order type
 * (readOrderInputs), also while it is disabled, so that a retried order
 * keeps the Idempotency-Key fingerprint of its first attempt (the actor's
 * SERVICE check refuses a new order, and replays a stored one); an unknown
 * one is left to the actor.
 */
export function checkOrderInput(
  value: unknown,
  targetCharsMax: number,
  lookup: (id: number) => ServiceRecord | null,
): { ok: true; input: OrderInput; service: ServiceRecord | null } | { ok: false; error: ErrorOutcome } {
  const checked = validator.check(value);
  if (!checked.ok) return checked;
  const { service: serviceId, target } = checked.value;
  if (target.length > targetCharsMax || !/^https?:\/\//i.test(target) || TARGET_FORBIDDEN.test(target) || LONE_SURROGATE.test(target)) {
    return {
      ok: false,
      error: errorOutcome(
        'VALIDATION',
        `Field 'target' must be an http or https URL of at most ${targetCharsMax} characters, without spaces or control characters.`,
      ),
    };
  }
  const service = lookup(serviceId);
  if (service === null) {
    return { ok: true, input: { serviceId, target, quantity: checked.value.quantity ?? 0 }, service };
  }
  const typed = readOrderInputs(service.type, service.dripfeed, checked.value);
  if (!typed.ok) return { ok: false, error: errorOutcome('VALIDATION', typed.message) };
  return { ok: true, input: { serviceId, target, quantity: typed.quantity, extras: typed.extras }, service };
}
