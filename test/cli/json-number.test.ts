import { describe, expect, it } from 'vitest';
import { encodeJsonBody, JsonNumber, parseDecimal, parseInteger } from '../../src/cli/json-number.js';

describe('parseDecimal', () => {
  it.each([
    ['0.3', '0.3'],
    ['12.50', '12.50'],
    ['-5', '-5'],
    ['007.5', '7.5'],
    ['-000', '-0'],
    ['0', '0'],
    ['123456789012345678.123456', '123456789012345678.123456'],
  ])('%s is sent as %s', (text, json) => {
    const n = parseDecimal(text, '--amount');
    expect(n.text).toBe(json);
    // Whatever is sent must be valid JSON.
    expect(() => JSON.parse(n.text)).not.toThrow();
  });

  it.each(['', '1.', '.5', '1.1234567', '1e3', '+1', ' 1', '0x10', 'NaN', '1_000'])('refuses %j', (text) => {
    expect(() => parseDecimal(text, '--amount')).toThrow(/--amount must be a decimal number/);
  });
});

describe('parseInteger', () => {
  it('accepts whole numbers and refuses the rest', () => {
    expect(parseInteger('0100', '--min').text).toBe('100');
    for (const bad of ['-1', '1.0', '', '1e2']) expect(() => parseInteger(bad, '--min')).toThrow(/whole number/);
  });
});

describe('encodeJsonBody', () => {
  it('splices numbers in verbatim and skips undefined fields', () => {
    const body = encodeJsonBody({ amount: new JsonNumber('9007199254740993.000001'), reason: 'a "quoted" reason', skip: undefined, on: true });
    expect(body).toBe('{"amount":9007199254740993.000001,"reason":"a \\"quoted\\" reason","on":true}');
  });
});
