/**
 * The rules the server checks beyond its request schemas, written into the
 * documented copies of those schemas. The server checks drip-feed runs and
 * interval and a poll's answer_number by the order's type, once the service
 * is known (src/ledger/order-types.ts), a target's form and a webhook URL's
 * scheme by hand, each with its own sentence; the document states the same
 * rules as JSON Schema so that clients and generated types see them.
 */
import type { TSchema } from '@sinclair/typebox';
import { ANSWER_NUMBER_MAX, INTERVAL_MINUTES_MAX, RUNS_MAX, SUBSCRIPTION_DELAYS_MINUTES, SUBSCRIPTION_OLD_POSTS_MAX, SUBSCRIPTION_POSTS_MAX, USERNAME_CHARS_MAX } from '../../ledger/index.js';
import { assert } from '../../platform/index.js';
import { TARGET_PATTERN } from '../orders/order-input.js';

type Rules = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export const ORDER_BODY_RULES: Rules = {
  target: { pattern: TARGET_PATTERN },
  answer_number: { minimum: 1, maximum: ANSWER_NUMBER_MAX },
  runs: { minimum: 2, maximum: RUNS_MAX },
  interval: { minimum: 1, maximum: INTERVAL_MINUTES_MAX },
};

/** The subscription reader's rules (src/ledger/subscription-terms.ts); the expiry's calendar and its distance ahead are checked beyond the pattern. */
export const SUBSCRIPTION_BODY_RULES: Rules = {
  username: { pattern: `^\\s*[^\\s\\x00-\\x1f\\x7f]{1,${USERNAME_CHARS_MAX}}\\s*$` },
  min: { minimum: 1 },
  max: { minimum: 1 },
  posts: { minimum: 0, maximum: SUBSCRIPTION_POSTS_MAX },
  old_posts: { minimum: 0, maximum: SUBSCRIPTION_OLD_POSTS_MAX },
  delay: { enum: SUBSCRIPTION_DELAYS_MINUTES },
  expiry: { anyOf: [{ type: 'string', pattern: '^[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}$' }, { type: 'null' }] },
};

export const WEBHOOK_BODY_RULES: Rules = {
  url: { minLength: 1, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' },
};

/** A copy of an object schema with `rules` merged into its properties; every rule names a property the schema has. */
export function withRules(schema: TSchema, rules: Rules): TSchema {
  const copy = structuredClone(schema) as TSchema & { properties: Record<string, Record<string, unknown>> };
  for (const [field, rule] of Object.entries(rules)) {
    const property = copy.properties[field];
    assert(property !== undefined, `the documented rule for '${field}' names a field the schema does not have`);
    Object.assign(property, rule);
  }
  return copy;
}

/**
 * Copies of `schemas` in which every object that lists its properties and
 * says nothing of others takes no others: the document names every field
 * the server sends, and a field added to an answer without its schema
 * fails the response check of the tests.
 */
export function closed(schemas: Readonly<Record<string, TSchema>>): Record<string, TSchema> {
  const close = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(close);
    if (typeof node !== 'object' || node === null) return;
    const object = node as Record<string, unknown>;
    if (object['properties'] !== undefined && object['additionalProperties'] === undefined && object['patternProperties'] === undefined) {
      object['additionalProperties'] = false;
    }
    Object.values(object).forEach(close);
  };
  const copy = structuredClone(schemas) as Record<string, TSchema>;
  close(copy);
  return copy;
}
