import { describe, expect, it } from 'vitest';
import { formatCell, formatFields, formatTable } from '../../src/cli/table.js';

describe('formatCell', () => {
  it('renders JSON values for people', () => {
    expect([null, undefined, true, false, 0.3, 'x', { a: 1 }].map(formatCell)).toEqual(['-', '-', 'yes', 'no', '0.3', 'x', '{"a":1}']);
  });

  it('escapes control characters', () => {
    expect(formatCell('a\tb\u001b[31m')).toBe('a\\tb\\u001b[31m');
  });
});

describe('formatTable', () => {
  it('aligns columns by code points and right-aligns numeric ones', () => {
    const out = formatTable(
      [
        { n: 'Zoë', v: 1 },
        { n: 'x', v: 1234.5 },
      ],
      [
        { header: 'NAME', value: (r) => r.n },
        { header: 'VALUE', value: (r) => r.v, align: 'right' },
      ],
    );
    expect(out).toBe('NAME   VALUE\nZoë        1\nx     1234.5\n');
    // Every line has the same width in code points although "ë" may be two UTF-16 units.
    expect(new Set(out.trimEnd().split('\n').map((l) => Array.from(l).length)).size).toBe(1);
  });
});

describe('formatFields', () => {
  it('pads keys to the longest one', () => {
    expect(formatFields([['id', 7], ['long_key', null]])).toBe('id        7\nlong_key  -\n');
  });
});
