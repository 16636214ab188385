/**
 * Validation of an order payload ({service, target, quantity}), shared by
 * the customer API and the operator's panel orders so both apply exactly
 * the same rules.
 */
import { errorOutcome, type ErrorOutcome } from '../errors.js';
import type { OrderInput } from '../actors/index.js';
import { compile, OrderBody, TARGET_CHARS_MAX } from './schemas.js';

const validator = compile(OrderBody);
const TARGET_FORBIDDEN = /[\x00-\x20\x7f]/;

export function checkOrderInput(value: unknown): { ok: true; input: OrderInput } | { ok: false; error: ErrorOutcome } {
  const checked = validator.check(value);
  if (!checked.ok) return checked;
  const { service, target, quantity } = checked.value;
  if (!/^https?:\/\//i.test(target) || TARGET_FORBIDDEN.test(target)) {
    return {
      ok: false,
      error: errorOutcome(
        'VALIDATION',
        `Field 'target' must be an http or https URL of at most ${TARGET_CHARS_MAX} characters, without spaces or control characters.`,
      ),
    };
  }
  return { ok: true, input: { serviceId: service, target, quantity } };
}
