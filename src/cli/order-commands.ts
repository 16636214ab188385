import type { AdminResponse } from './admin-client.js';
import type { AdminRequest, Command, CommandInput, JsonObject, Send } from './command.js';
import { adminPath } from './command.js';
import { CliError } from './errors.js';
import { PROGRAM } from './help.js';
import { rawArrayItems, rawMember } from './raw-json.js';
import { listAt, objectAt } from './response-shape.js';
import { formatCell, formatFields, formatTable, type Column } from './table.js';

/** `order ...` commands (`orders ...` works too): one entry per command; see command.ts for the fields. */

/** The statuses the server knows, for help text only: the server checks them, so a new one needs no CLI change. */
const STATUSES = 'pending, processing, in_progress, completed, partial, canceled';
const DEFAULT_STATUS = 'pending';
/** The server's largest page; `--all` uses it when no --limit is given, to make fewer round trips. */
const PAGE_MAX = 500;

const ORDER_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (o) => o.id },
  { header: 'ACCOUNT', value: (o) => o.account, align: 'right' },
  { header: 'SERVICE', value: (o) => o.service, align: 'right' },
  { header: 'QUANTITY', value: (o) => o.quantity, align: 'right' },
  { header: 'CHARGE', value: (o) => o.charge, align: 'right' },
  { header: 'DEBIT', value: (o) => o.debit, align: 'right' },
  { header: 'STATUS', value: (o) => o.status },
  { header: 'REMAINS', value: (o) => o.remains, align: 'right' },
  { header: 'CHANNEL', value: (o) => o.channel },
  { header: 'PLAN', value: (o) => o.unlimited },
  { header: 'CREATED', value: (o) => o.created_at },
  // Last, because URLs are long and this keeps the other columns readable.
  { header: 'TARGET', value: (o) => o.target },
];

function listRequest(input: CommandInput, cursor: string | undefined, limit: string | undefined): AdminRequest {
  const query = new URLSearchParams();
  const status = input.text('status');
  if (status !== undefined) query.set('status', status);
  if (limit !== undefined) query.set('limit', limit);
  if (cursor !== undefined) query.set('cursor', cursor);
  const search = query.toString();
  return { method: 'GET', path: adminPath('orders') + (search === '' ? '' : `?${search}`) };
}

function nextCursor(body: JsonObject): string | null {
  return typeof body.next_cursor === 'string' && body.next_cursor !== '' ? body.next_cursor : null;
}

/**
 * `--all`: follows next_cursor until it is null and answers as if the server
 * had sent one page holding every order. The `--json` text is spliced from
 * the pages' own text, so no number is re-rounded.
 */
async function followCursors(first: AdminRequest, input: CommandInput, send: Send): Promise<AdminResponse> {
  if (!input.flag('all')) return send(first);
  const limit = input.number('limit')?.text ?? String(PAGE_MAX);
  const orders: JsonObject[] = [];
  const rawItems: string[] = [];
  const seen = new Set<string>();
  let cursor = input.text('cursor');
  for (;;) {
    const page = await send(listRequest(input, cursor, limit));
    orders.push(...listAt(page.body, 'orders'));
    const rawOrders = rawMember(page.raw, 'orders');
    const items = rawOrders === undefined ? JSON.stringify(listAt(page.body, 'orders')).slice(1, -1) : rawArrayItems(rawOrders);
    if (items !== '') rawItems.push(items);
    const next = nextCursor(page.body);
    if (next === null) break;
    if (seen.has(next)) throw new CliError(`the server returned the cursor ${next} twice; stopping rather than looping forever.`);
    seen.add(next);
    cursor = next;
  }
  return {
    status: 200,
    body: { ok: true, orders, next_cursor: null },
    raw: `{"ok":true,"orders":[${rawItems.join(',')}],"next_cursor":null}`,
  };
}

/** The command that fetches the next page: the same options, plus the cursor. */
function nextPageCommand(input: CommandInput, cursor: string): string {
  const parts = [PROGRAM, 'order', 'list', '--status', input.text('status') ?? DEFAULT_STATUS];
  const limit = input.number('limit');
  if (limit !== undefined) parts.push('--limit', limit.text);
  parts.push('--cursor', cursor);
  return parts.join(' ');
}

function renderList(body: JsonObject, input: CommandInput): string {
  const orders = listAt(body, 'orders');
  const status = formatCell(input.text('status') ?? DEFAULT_STATUS);
  const cursor = nextCursor(body);
  let out = orders.length === 0 ? `No ${status} orders${input.text('cursor') === undefined ? '' : ' after this cursor'}.\n` : formatTable(orders, ORDER_COLUMNS);
  if (cursor !== null) {
    out += `\nMore ${status} orders follow. Next page: \`${nextPageCommand(input, formatCell(cursor))}\` (or add --all for every page).\n`;
  }
  return out;
}

export const ORDER_COMMANDS: readonly Command[] = [
  {
    words: ['order', 'list'],
    summary: 'list orders with one status, oldest first, a page at a time (--all for every page)',
    options: {
      status: { kind: 'text', placeholder: 'STATUS', help: `one of ${STATUSES} (default ${DEFAULT_STATUS})` },
      limit: { kind: 'integer', placeholder: 'N', help: `orders per page, 1 to ${PAGE_MAX} (default 100; ${PAGE_MAX} with --all)` },
      cursor: { kind: 'text', placeholder: 'CURSOR', help: 'start after this point: the cursor a previous page printed' },
      all: { kind: 'flag', help: 'follow the cursors and list every page' },
    },
    request: (input) => listRequest(input, input.text('cursor'), input.number('limit')?.text),
    exchange: followCursors,
    render: renderList,
  },
  {
    words: ['order', 'show'],
    summary: 'show one order, with its rate, debit, channel and plan flag',
    args: ['ID'],
    request: (input) => ({ method: 'GET', path: adminPath('orders', input.arg('ID')) }),
    render: (body) => formatFields(Object.entries(objectAt(body, 'order'))),
  },
  {
    words: ['order', 'set-status'],
    summary: 'move an order to a new status; canceling or a partial delivery refunds the wallet',
    args: ['ID'],
    options: {
      status: { kind: 'text', placeholder: 'STATUS', required: true, help: `the new status: one of ${STATUSES}` },
      remains: { kind: 'integer', placeholder: 'N', help: 'units not delivered; only with --status partial' },
      reason: { kind: 'text', placeholder: 'TEXT', help: 'why, recorded with the change' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('orders', input.arg('ID'), 'status'),
      body: { status: input.text('status'), remains: input.number('remains'), reason: input.text('reason') },
    }),
    render: (body, input) => {
      const order = objectAt(body, 'order');
      const fields: [string, unknown][] = [
        ['order', order.id ?? input.arg('ID')],
        ['account', order.account],
        ['status', order.status],
      ];
      if (order.remains !== null && order.remains !== undefined) fields.push(['remains', order.remains]);
      fields.push(['refund', body.refund], ['credits', body.credits]);
      return `Order ${formatCell(order.id ?? input.arg('ID'))} is now ${formatCell(order.status)}.\n${formatFields(fields)}`;
    },
  },
  {
    words: ['order', 'place'],
    summary: "place an order for an account, as the panel does (charged to the account's credits)",
    options: {
      account: { kind: 'text', placeholder: 'ID', required: true, help: 'the account to order for' },
      service: { kind: 'integer', placeholder: 'N', required: true, help: 'service id (see `service list`)' },
      target: { kind: 'text', placeholder: 'URL', required: true, help: 'http(s) URL of the item to promote' },
      quantity: { kind: 'integer', placeholder: 'Q', required: true, help: "units to order, within the service's min..max" },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('accounts', input.text('account')!, 'orders'),
      body: { service: input.number('service'), target: input.text('target'), quantity: input.number('quantity') },
    }),
    render: (body, input) =>
      'Order placed.\n' +
      formatFields([
        ['order', body.order],
        ['account', input.text('account')],
        ['status', body.status],
        ['charge', body.charge],
        ['balance', body.balance],
      ]),
  },
];
