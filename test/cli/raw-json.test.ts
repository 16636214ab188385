import { describe, expect, it } from 'vitest';
import { rawArrayItems, rawMember } from '../../src/cli/raw-json.js';

describe('rawMember', () => {
  it('returns the exact text of a top-level member', () => {
    const text = '{"ok":true,"orders":[{"charge":0.30,"n":{"orders":1}}],"next_cursor":null}';
    expect(rawMember(text, 'orders')).toBe('[{"charge":0.30,"n":{"orders":1}}]');
    expect(rawMember(text, 'next_cursor')).toBe('null');
    expect(rawMember(text, 'ok')).toBe('true');
    expect(rawMember(text, 'missing')).toBeUndefined();
  });

  it('is not fooled by brackets, quotes and escapes inside strings, or by whitespace', () => {
    const text = ' {\n "a\\"orders" : "x]}\\\\" ,\t"orders" : [ "]" , 1.10 ] , "z": -2e5 }\n';
    expect(rawMember(text, 'orders')).toBe('[ "]" , 1.10 ]');
    expect(rawMember(text, 'a"orders')).toBe('"x]}\\\\"');
    expect(rawMember(text, 'z')).toBe('-2e5');
  });

  it('takes the last of duplicated keys, as JSON.parse does', () => {
    expect(rawMember('{"a":1,"a":2}', 'a')).toBe('2');
  });

  it('answers undefined for text that is not an object', () => {
    expect(rawMember('[1]', 'a')).toBeUndefined();
    expect(rawMember('{}', 'a')).toBeUndefined();
  });
});

describe('rawArrayItems', () => {
  it('strips the brackets and surrounding space', () => {
    expect(rawArrayItems('[ {"a":1} , 2 ]')).toBe('{"a":1} , 2');
    expect(rawArrayItems('[ ]')).toBe('');
    expect(rawArrayItems('null')).toBe('');
  });
});
