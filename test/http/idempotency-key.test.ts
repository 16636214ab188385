import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseIdempotencyKey } from '../../src/http/orders/idempotency-key.js';
import { IDEMPOTENCY_KEY_CHARS_MAX } from '../../src/http/limits.js';

function accepted(header: string): string {
  const r = parseIdempotencyKey(header);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(header)} to be accepted`);
  return r.key;
}

function expectRefused(header: string): void {
  const r = parseIdempotencyKey(header);
  expect(r.ok, JSON.stringify(header)).toBe(false);
  if (!r.ok) {
    expect(r.error.code).toBe('VALIDATION');
    expect(r.error.status).toBe(400);
    expect(r.error.message).toContain('255');
  }
}

/** Serialises a key as an RFC 8941 structured-field string. */
function sfString(key: string): string {
  return '"' + key.replace(/[\\"]/g, (c) => '\\' + c) + '"';
}

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 255 });

describe('parseIdempotencyKey', () => {
  it('accepts a bare key as is', () => {
    expect(accepted('abc')).toBe('abc');
    expect(accepted('550e8400-e29b-41d4-a716-446655440000')).toBe('550e8400-e29b-41d4-a716-446655440000');
    expect(accepted('order:2026/01/01#1 with spaces')).toBe('order:2026/01/01#1 with spaces');
    expect(accepted('x')).toBe('x');
  });

  it('accepts a quoted structured-field string and returns its content', () => {
    expect(accepted('"abc"')).toBe('abc');
    // The quoted and bare forms of the same key are the same key.
    expect(accepted('"550e8400-e29b"')).toBe(accepted('550e8400-e29b'));
  });

  it('unescapes \\" and \\\\ inside a quoted key', () => {
    expect(accepted('"a\\"b"')).toBe('a"b');
    expect(accepted('"\\\\"')).toBe('\\');
    expect(accepted('"\\""')).toBe('"');
    expect(accepted('"end\\\\"')).toBe('end\\');
  });

  it('refuses malformed quoted strings', () => {
    expectRefused('"a"b"'); // unescaped quote inside
    expectRefused('"a\\b"'); // \b is not an escape
    expectRefused('"abc\\"'); // the closing quote is escaped: unterminated
    expectRefused('"\\"'); // a lone backslash
  });

  it('255 characters are accepted, 256 refused (bare and quoted)', () => {
    expect(IDEMPOTENCY_KEY_CHARS_MAX).toBe(255);
    const k255 = 'k'.repeat(255);
    expect(accepted(k255)).toBe(k255);
    expect(accepted(`"${k255}"`)).toBe(k255);
    expectRefused('k'.repeat(256));
    expectRefused(`"${'k'.repeat(256)}"`);
  });

  it('the limit counts the key, not its escapes', () => {
    const key = '"'.repeat(255);
    expect(accepted(sfString(key))).toBe(key);
    expectRefused(sfString('"'.repeat(256)));
  });

  it('refuses an empty key, bare or quoted', () => {
    expectRefused('');
    expectRefused('""');
  });

  it.each([
    ['NUL', 'ab\u0000c'],
    ['tab', 'ab\tc'],
    ['newline', 'ab\nc'],
    ['carriage return', 'ab\rc'],
    ['DEL', 'ab\u007fc'],
    ['escape', '\u001b[31m'],
    ['quoted control char', '"ab\u0001"'],
    ['é', 'clé'],
    ['Cyrillic', 'ключ'],
    ['emoji', 'key-😀'],
    ['NBSP', 'a\u00a0b'],
    ['quoted non-ASCII', '"clé"'],
    ['Latin-1 byte as char', 'k\u00ff'],
  ])('refuses %s', (_label, header) => {
    expectRefused(header);
  });

  it('accepts every printable ASCII key of 1–255 chars, bare (property)', () => {
    fc.assert(
      fc.property(printable, (key) => {
        // A bare value that starts and ends with a quote is read as a quoted string instead.
        fc.pre(!(key.length >= 2 && key.startsWith('"') && key.endsWith('"')));
        expect(parseIdempotencyKey(key)).toEqual({ ok: true, key });
      }),
      { numRuns: 500 },
    );
  });

  it('reads back every printable ASCII key without backslashes sent as a structured-field string (property)', () => {
    fc.assert(
      // Keys with backslashes: see the it.fails test below.
      fc.property(printable.filter((k) => !k.includes('\\')), (key) => {
        expect(parseIdempotencyKey(sfString(key))).toEqual({ ok: true, key });
      }),
      { numRuns: 500 },
    );
  });

  it('refuses any key containing a character outside printable ASCII (property)', () => {
    const outside = fc.oneof(
      fc.integer({ min: 0, max: 0x1f }),
      fc.constant(0x7f),
      fc.integer({ min: 0x80, max: 0xffff }).filter((c) => c < 0xd800 || c > 0xdfff),
    ).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), outside, fc.string({ maxLength: 100 }), fc.boolean(), (a, bad, b, quoted) => {
        const key = a + bad + b;
        expectRefused(quoted ? `"${key}"` : key);
      }),
      { numRuns: 500 },
    );
  });

  // BUG (src/http/idempotency-key.ts, parseIdempotencyKey): the quoted form
  // is checked with three regular expressions that look at one character of
  // context, so they misread runs of backslashes:
  //  - valid structured-field strings are refused: `"a\\b"` (the key `a\b`,
  //    an escaped backslash followed by an ordinary character) gives
  //    VALIDATION, because /\\[^"\\]/ matches the second backslash and `b`.
  //    A client that quotes any key containing a backslash (e.g. `C:\tmp`)
  //    cannot use it.
  //  - invalid ones are accepted: `"a\\"b"` (the string ends at the second
  //    quote) is read as the key `a\"b`, the same key as the valid
  //    `"a\\\"b"`; `"a\\\"` (unterminated) is read as `a\\`.
  // Fix: accept the quoted form only when the inner text matches
  // /^(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/, then unescape. When fixed,
  // change `it.fails` to `it`.
  it('the quoted form is exactly an RFC 8941 string: every key round-trips, invalid strings are refused', () => {
    expect(accepted('"a\\\\b"')).toBe('a\\b');
    expect(accepted(sfString('C:\\tmp\\x'))).toBe('C:\\tmp\\x');
    expectRefused('"a\\\\"b"');
    expectRefused('"a\\\\\\"');
    fc.assert(
      fc.property(printable, (key) => {
        expect(parseIdempotencyKey(sfString(key))).toEqual({ ok: true, key });
      }),
      { numRuns: 300 },
    );
    const sfPiece = fc.constantFrom('a', ' ', '"', '\\', '\\"', '\\\\', '\\a');
    const valid = /^(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/;
    fc.assert(
      fc.property(fc.array(sfPiece, { minLength: 1, maxLength: 12 }), (pieces) => {
        const inner = pieces.join('');
        const r = parseIdempotencyKey(`"${inner}"`);
        expect(r.ok).toBe(valid.test(inner));
        if (r.ok) expect(sfString(r.key)).toBe(`"${inner}"`);
      }),
      { numRuns: 300 },
    );
  });
});
