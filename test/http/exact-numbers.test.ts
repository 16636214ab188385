import { describe, expect, it } from 'vitest';
import { firstInexactNumber } from '../../src/http/exact-numbers.js';

describe('firstInexactNumber', () => {
  it('finds a number JSON.parse would give back as another value', () => {
    expect(firstInexactNumber('{"quantity":1.0000000000000001}')).toBe('1.0000000000000001');
    expect(firstInexactNumber('[9007199254740993]')).toBe('9007199254740993');
    expect(firstInexactNumber('{"a":1,"b":[2,-0.12345678901234567891]}')).toBe('-0.12345678901234567891');
    expect(firstInexactNumber('{"x":1e400}')).toBe('1e400');
    expect(firstInexactNumber('{"x":1E-400}')).toBe('1E-400');
  });

  it('keeps every spelling of a value a double holds exactly', () => {
    for (const text of ['{"q":10}', '{"q":10.0}', '{"q":1e1}', '{"q":100e-1}', '{"q":-0}', '{"q":0.30000000000000004}', '{"q":9007199254740991}', '{"q":1.5e300}', '{"q":123456789012345.0000}']) {
      expect({ text, found: firstInexactNumber(text) }).toEqual({ text, found: null });
    }
  });

  it('reads strings as strings, escapes included', () => {
    expect(firstInexactNumber('{"target":"https://x.com/status/12345678901234567891","q":10}')).toBeNull();
    expect(firstInexactNumber('{"t":"a\\"1.00000000000000000001\\"","q":10}')).toBeNull();
    expect(firstInexactNumber('{"t":"\\\\","q":10.00000000000000001}')).toBe('10.00000000000000001');
  });
});
