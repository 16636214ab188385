import { adminPath, type Command, type JsonObject } from './command.js';
import { pagedListCommand } from './paged-list.js';
import { objectAt } from './response-shape.js';
import { formatCell, formatFields, type Column } from './table.js';

/** `order ...` commands (`orders ...` works too): one entry per command; see command.ts for the fields. */

/** The statuses the server knows, for help text only: the server checks them, so a new one needs no CLI change. */
const STATUSES = 'pending, processing, in_progress, completed, partial, canceled';
const DEFAULT_STATUS = 'pending';

const ORDER_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (o) => o.id },
  { header: 'ACCOUNT', value: (o) => o.account, align: 'right' },
  { header: 'SERVICE', value: (o) => o.service, align: 'right' },
  { header: 'QUANTITY', value: (o) => o.quantity, align: 'right' },
  { header: 'CHARGE', value: (o) => o.charge, align: 'right' },
  { header: 'DEBIT', value: (o) => o.debit, align: 'right' },
  { header: 'STATUS', value: (o) => o.status },
  // What the customer's status shows (remains_shown): units not delivered.
  { header: 'REMAINS', value: (o) => o.remains_shown, align: 'right' },
  { header: 'CHANNEL', value: (o) => o.channel },
  { header: 'PLAN', value: (o) => o.unlimited },
  { header: 'CREATED', value: (o) => o.created_at },
  // Last, because URLs are long and this keeps the other columns readable.
  { header: 'TARGET', value: (o) => o.target },
];

export const ORDER_COMMANDS: readonly Command[] = [
  pagedListCommand({
    words: ['order', 'list'],
    summary: 'list orders with one status, oldest first, a page at a time (--all for every page)',
    path: ['orders'],
    member: 'orders',
    status: { default: DEFAULT_STATUS, help: `one of ${STATUSES} (default ${DEFAULT_STATUS})` },
    noun: (input) => `${formatCell(input.text('status') ?? DEFAULT_STATUS)} orders`,
    columns: ORDER_COLUMNS,
  }),
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
      worker: { kind: 'text', placeholder: 'NAME', help: 'the worker making the move, which must hold the order' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('orders', input.arg('ID'), 'status'),
      body: { status: input.text('status'), remains: input.number('remains'), reason: input.text('reason'), worker: input.text('worker') },
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
