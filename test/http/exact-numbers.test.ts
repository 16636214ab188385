import { describe, expect, it } from 'vitest';
import { firstInexactNumber } from '../../src/http/transport/exact-numbers.js';

describe('firstInexactNumber', () => {
  it('finds a number JSON.parse would turn into a whole number it is not, or into no finite number', () => {
    expect(firstInexactNumber('{"quantity":1.0000000000000001}')).toBe('1.0000000000000001');
    expect(firstInexactNumber('[9007199254740993]')).toBe('9007199254740993');
    expect(firstInexactNumber('{"a":1,"b":[2,-9.99999999999999999]}')).toBe('-9.99999999999999999');
    expect(firstInexactNumber('{"x":1e400}')).toBe('1e400');
    expect(firstInexactNumber('{"x":1E-400}')).toBe('1E-400');
    // Whole, but not the whole number its double is (10^22 is exact; 10^23 and 1.5 × 10^300 are not).
    expect(firstInexactNumber('{"x":1e23}')).toBe('1e23');
    expect(firstInexactNumber('{"x":1.5e300}')).toBe('1.5e300');
    expect(firstInexactNumber('{"x":999999999999999e9}')).toBe('999999999999999e9');
  });

  it('keeps every spelling of a whole number a double holds exactly, and leaves fractions to their double', () => {
    const exact = ['{"q":10}', '{"q":10.0}', '{"q":1e1}', '{"q":100e-1}', '{"q":-0}', '{"q":9007199254740991}', '{"q":1152921504606846976}', '{"q":1e22}', '{"q":123456789012345.0000}'];
    // Fractions: a 17-digit print of a double is that double (PHP before 7.1 wrote 0.1 so).
    const fractions = ['{"q":0.30000000000000004}', '{"q":0.10000000000000001}', '{"q":-0.12345678901234567891}'];
    for (const text of [...exact, ...fractions]) {
      expect({ text, found: firstInexactNumber(text) }).toEqual({ text, found: null });
    }
  });

  it('reads strings as strings, escapes included', () => {
    expect(firstInexactNumber('{"target":"https://x.com/status/12345678901234567891","q":10}')).toBeNull();
    expect(firstInexactNumber('{"t":"a\\"1.00000000000000000001\\"","q":10}')).toBeNull();
    expect(firstInexactNumber('{"t":"\\\\","q":10.00000000000000001}')).toBe('10.00000000000000001');
  });
});
