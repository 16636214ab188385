import { UsageError } from './errors.js';

/**
 * A JSON number kept as decimal text. Money must never pass through a binary
 * float (DESIGN.md, "Money"), so the CLI sends exactly the digits the operator
 * typed instead of `JSON.stringify(Number(text))`, which would silently round
 * values beyond 2^53 micro-units.
 */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** A list of strings (webhook event types) is the one non-scalar value. */
export type BodyValue = string | number | boolean | null | JsonNumber | readonly string[];
/** Admin request bodies are flat objects; `undefined` fields are left out, which keeps PATCH bodies minimal. */
export type RequestBody = Readonly<Record<string, BodyValue | undefined>>;

const DECIMAL = /^-?\d+(\.\d{1,6})?$/;
const INTEGER = /^\d+$/;

/** JSON forbids leading zeros ("007.5"), so drop them; the value is unchanged. */
function withoutLeadingZeros(text: string): string {
  return text.replace(/^(-?)0+(?=\d)/, '$1');
}

/** Money: at most 6 decimal places because the server counts in micro-credits. */
export function parseDecimal(text: string, label: string): JsonNumber {
  if (!DECIMAL.test(text)) {
    throw new UsageError(`${label} must be a decimal number with at most 6 decimal places, like 12.5 (got "${text}").`);
  }
  return new JsonNumber(withoutLeadingZeros(text));
}

/** Quantities and rate limits: whole numbers, never negative. */
export function parseInteger(text: string, label: string): JsonNumber {
  if (!INTEGER.test(text)) {
    throw new UsageError(`${label} must be a whole number of zero or more, like 100 (got "${text}").`);
  }
  return new JsonNumber(withoutLeadingZeros(text));
}

export function encodeJsonBody(body: RequestBody): string {
  const members: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined) continue;
    const encoded = value instanceof JsonNumber ? value.text : JSON.stringify(value);
    members.push(`${JSON.stringify(key)}:${encoded}`);
  }
  return `{${members.join(',')}}`;
}
