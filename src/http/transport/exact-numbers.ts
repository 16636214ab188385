/**
 * JSON numbers the server would not read as written. JSON.parse rounds every
 * number to the nearest double without a word: `1.0000000000000001` becomes
 * the quantity 1, `9007199254740990.5` the integer 9007199254740990 and
 * `1e-400` zero, so a client's typo or a float printed with too many digits
 * would be accepted as a different, valid whole number. A body is refused
 * instead (VALIDATION) when one of its numbers parses to a whole number
 * that is not exactly its value, or to no finite number at all (`1e400`).
 * `10.0`, `1e1` and 2^60 written out in full are kept: they are exactly
 * the whole numbers they parse to. Numbers that parse to a fraction are
 * left alone: a decimal printed with 17 digits (`0.10000000000000001`, as
 * PHP before 7.1 wrote 0.1) is the very double its sender had, and the
 * money parser reads that double's shortest form.
 */

/**
 * Only a number with a 16th significant digit (a run of 16 digits, with at
 * most its decimal point among them) or with an exponent can parse to a
 * whole number it is not: without either, a number has at most 15
 * significant digits (DBL_DIG, so it comes back from its double exactly)
 * and is below 10^15. Bodies with neither, nearly every order, skip the
 * scan; a string that merely looks like one (`v1e2`) only costs the scan.
 */
const MAYBE_INEXACT = /[0-9.]{16}|[0-9][eE][-+]?[0-9]/;

/** The sentence refusing a JSON text (already parsed) with a number JSON.parse turned into a whole number it is not, or null when there is none. */
export function inexactNumberProblem(text: string): string | null {
  const token = firstInexactNumber(text);
  if (token === null) return null;
  const shown = token.length > 40 ? `${token.slice(0, 40)}…` : token;
  return `The number ${shown} cannot be read exactly (it has more digits, or a larger or smaller exponent, than a JSON number keeps); send it as the value you mean, with at most 15 significant digits.`;
}

/** The first number in `text` (valid JSON) that JSON.parse turns into a whole number it is not (or into no finite number), or null. */
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
  if (!Number.isFinite(value)) return false;
  if (!Number.isInteger(value)) return true;
  return exactInteger(token) === BigInt(value);
}

/** The whole number a decimal token stands for exactly, or null when it has a fractional part. */
function exactInteger(token: string): bigint | null {
  const negative = token.startsWith('-');
  const unsigned = negative ? token.slice(1) : token;
  const e = unsigned.search(/[eE]/);
  const mantissa = e < 0 ? unsigned : unsigned.slice(0, e);
  let exponent = e < 0 ? 0 : Number(unsigned.slice(e + 1));
  const point = mantissa.indexOf('.');
  let digits = point < 0 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  if (point >= 0) exponent -= mantissa.length - point - 1;
  digits = digits.replace(/^0+/, '');
  if (digits === '') return 0n;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  // Its value is finite here (JSON.parse gave a finite whole number), so the exponent is small.
  if (exponent < 0) return null;
  const magnitude = BigInt(trimmed + '0'.repeat(exponent));
  return negative ? -magnitude : magnitude;
}
