/**
 * Plain-text output for people: aligned tables for lists, key/value lines for
 * one object. Scripts should use `--json` instead of parsing this.
 */

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** Numbers read better right-aligned. */
  align?: 'left' | 'right';
}

/**
 * Names come from API users, so control characters are escaped: a newline
 * would break the table and an ANSI escape could rewrite the operator's
 * terminal.
 */
function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  // Money arrives as a JSON number; every value the contract allows (up to
  // 1e9 credits with 6 decimals, < 2^53 micro-credits) prints back exactly.
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return escapeControls(value);
  return escapeControls(JSON.stringify(value));
}

/** Width in code points, so one accented letter counts once. */
function width(text: string): number {
  return Array.from(text).length;
}

function pad(text: string, size: number, align: 'left' | 'right'): string {
  const fill = ' '.repeat(Math.max(0, size - width(text)));
  return align === 'right' ? fill + text : text + fill;
}

export function formatTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((col) => formatCell(col.value(row))));
  const widths = columns.map((col, i) => Math.max(width(col.header), ...cells.map((r) => width(r[i]!))));
  // Headers take their column's alignment so a number's last digit sits under the header's last letter.
  const line = (texts: readonly string[]): string =>
    texts
      .map((text, i) => pad(text, widths[i]!, columns[i]!.align ?? 'left'))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n') + '\n';
}

export function formatFields(fields: Iterable<readonly [string, unknown]>): string {
  const pairs = Array.from(fields, ([key, value]) => [key, formatCell(value)] as const);
  const keyWidth = Math.max(0, ...pairs.map(([key]) => width(key)));
  return pairs.map(([key, value]) => `${pad(key, keyWidth, 'left')}  ${value}`.trimEnd() + '\n').join('');
}
