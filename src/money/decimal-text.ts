/**
 * The text an amount in a request is read from, for every money parser:
 * a JSON number as its shortest round-trip decimal form (`String(n)`, the
 * digits the client wrote for up to 15 significant digits; NaN and
 * ±Infinity print as words, which the decimal patterns refuse like any
 * other non-decimal), a string without its surrounding spaces, and null for
 * any other value.
 */
export function decimalText(value: unknown): string | null {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value.trim();
  return null;
}
