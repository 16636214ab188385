/**
 * The text an amount in a request is read from, for every money parser:
 * a JSON number as its shortest round-trip decimal form (`String(n)`, the
 * digits the client wrote for up to 15 significant digits; NaN and
 * ±Infinity print as words, which the decimal patterns refuse like any
 * other non-decimal), a string without its surrounding spaces, and for any
 * other value a text no decimal pattern accepts, so that each parser refuses
 * it as it refuses any text that is not a decimal.
 */
export function decimalText(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value.trim();
  // Stryker disable next-line StringLiteral: equivalent: any text without a digit is refused by every decimal pattern, as '' is
  return '';
}
