import type { Command, JsonObject } from './command.js';
import { ACCOUNT_ID } from './ids.js';
import { pagedListCommand } from './paged-list.js';
import { listAt } from './response-shape.js';
import { formatCell, type Column } from './table.js';

/**
 * `account statement ID [--from --to --csv]`: the account's money
 * movements, a page at a time like every listing, or as CSV for a
 * spreadsheet. CSV has no place for "more follow", so `--csv` follows every
 * cursor and prints the header once and every movement.
 */

const STATEMENT_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'TIME', value: (m) => m.at },
  { header: 'KIND', value: (m) => m.kind },
  { header: 'AMOUNT', value: (m) => m.amount, align: 'right' },
  { header: 'BALANCE', value: (m) => m.balance, align: 'right' },
  { header: 'ORDER', value: (m) => m.order },
  { header: 'NUMBER', value: (m) => m.number, align: 'right' },
  { header: 'REASON', value: (m) => m.reason },
];

/** A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. */
function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function renderCsv(body: JsonObject): string {
  const header = STATEMENT_COLUMNS.map((c) => c.header.toLowerCase()).join(',');
  const rows = listAt(body, 'movements').map((m) => STATEMENT_COLUMNS.map((c) => csvField(c.value(m))).join(','));
  return [header, ...rows].join('\n') + '\n';
}

const paged = pagedListCommand({
  words: ['account', 'statement'],
  summary: "list every movement of an account's money (top-ups, orders, refunds, plan grants) with the balance each left",
  args: [ACCOUNT_ID],
  path: (input) => ['accounts', input.arg('ID'), 'statement'],
  member: 'movements',
  filters: {
    from: { kind: 'text', placeholder: 'TIME', help: 'only movements at or after this ISO 8601 date or time, e.g. 2026-01-31 or 2026-01-31T18:00:00Z' },
    to: { kind: 'text', placeholder: 'TIME', help: 'only movements before this ISO 8601 date or time' },
  },
  noun: (input) => `movements of account ${formatCell(input.arg('ID'))}`,
  columns: STATEMENT_COLUMNS,
  everyPage: (input) => input.flag('csv'),
});

export const STATEMENT_COMMAND: Command = {
  ...paged,
  options: { ...paged.options, csv: { kind: 'flag', help: 'print every movement as CSV (a header line, then one line each), following every page' } },
  render: (body, input) => (input.flag('csv') ? renderCsv(body) : paged.render(body, input)),
};
