/**
 * JSON numbers the server would not read as written. JSON.parse rounds every
 * number to the nearest double without a word: `1.0000000000000001` becomes
 * the quantity 1, and `9007199254740990.5` the integer 9007199254740990, so
 * a client's typo or a float printed with too many digits would be accepted
 * as a different, valid value. A body is refused instead (VALIDATION) when
 * one of its numbers does not come back from the double it parses to: the
 * double's shortest decimal form (`String(n)`) must have the same value as
 * the text sent. `1.0`, `10e-1` and `0.30000000000000004` are kept (their
 * doubles are exactly what they say); `1e400` (Infinity) and `1e-400` (0)
 * are refused.
 */

/**
 * A run of 16 digits (with at most its decimal point among them) is needed
 * for a 16th significant digit, and a three-digit exponent to leave the
 * range where every number of at most 15 significant digits (DBL_DIG) comes
 * back from its double exactly. Bodies without either, nearly every order,
 * skip the scan.
 */
const MAYBE_INEXACT = /[0-9.]{16}|[eE][-+]?[0-9]{3}/;

/** The first number in `text` (valid JSON) that its double does not give back, or null when every one is kept exactly. */
export function firstInexactNumber(text: string): string | null {
  if (!MAYBE_INEXACT.test(text)) return null;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, over escapes.
      i++;
      while (i < n && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      while (i < n && isNumberChar(text.charCodeAt(i))) i++;
      const token = text.slice(start, i);
      if (!keptExactly(token)) return token;
    } else {
      i++;
    }
  }
  return null;
}

/** Digits, sign, point and exponent: the characters of a JSON number token. */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

function keptExactly(token: string): boolean {
  const value = Number(token);
  return Number.isFinite(value) && canonical(token) === canonical(String(value));
}

/** A decimal's value as `[-]digitsE exponent` with no leading or trailing zeros (zero is "0", whatever its sign). */
function canonical(decimal: string): string {
  const negative = decimal.startsWith('-');
  const unsigned = negative ? decimal.slice(1) : decimal;
  const e = unsigned.search(/[eE]/);
  const mantissa = e < 0 ? unsigned : unsigned.slice(0, e);
  let exponent = e < 0 ? 0 : Number(unsigned.slice(e + 1));
  const point = mantissa.indexOf('.');
  let digits = point < 0 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  if (point >= 0) exponent -= mantissa.length - point - 1;
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  return `${negative ? '-' : ''}${trimmed}e${exponent}`;
}
