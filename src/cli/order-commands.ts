import { readFileSync } from 'node:fs';
import type { OptionSpec, OptionSpecs } from './args.js';
import { adminPath, type Command, type CommandInput, type JsonObject } from './command.js';
import { ORDER_ID } from './ids.js';
import { UsageError } from './errors.js';
import { pagedListCommand } from './paged-list.js';
import { objectAt } from './response-shape.js';
import { formatCell, formatFields, type Column } from './table.js';

/** `order ...` commands (`orders ...` works too): one entry per command; see command.ts for the fields. */

/** The statuses the server knows, for help text only: the server checks them, so a new one needs no CLI change. */
const STATUSES = 'pending, processing, in_progress, completed, partial, canceled';
const DEFAULT_STATUS = 'pending';

const ORDER_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (o) => o.id },
  { header: 'NUMBER', value: (o) => o.number, align: 'right' },
  { header: 'ACCOUNT', value: (o) => o.account, align: 'right' },
  { header: 'SERVICE', value: (o) => o.service, align: 'right' },
  { header: 'TYPE', value: (o) => o.type },
  { header: 'QUANTITY', value: (o) => o.quantity, align: 'right' },
  // Drip-feed: runs of QUANTITY units each; '-' for an order in one go.
  { header: 'RUNS', value: (o) => o.runs, align: 'right' },
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

/** The list inputs (one item a line), each given inline or read from a file, and the order types that read them. */
const LIST_INPUTS = {
  comments: 'Custom Comments (Package)',
  usernames: 'Mentions Custom List, Mentions with Hashtags',
  hashtags: 'Mentions with Hashtags',
  keywords: 'SEO',
  groups: 'Invites from Groups',
} as const;

type ListInput = keyof typeof LIST_INPUTS;

function listOptions(): OptionSpecs {
  const options: Record<string, OptionSpec> = {};
  for (const [name, types] of Object.entries(LIST_INPUTS)) {
    options[name] = { kind: 'text', placeholder: 'TEXT', help: `${types}: the ${name}, one a line` };
    options[`${name}-file`] = { kind: 'text', placeholder: 'FILE', help: `${types}: read the ${name} from this file, one a line` };
  }
  return options;
}

/**
 * `order place` takes what every order type reads (the service's type says
 * which): a quantity, lists (inline or from a file), a username, hashtag or
 * media URL, a poll's answer, drip-feed runs and their interval. The server
 * refuses a field the service's type does not take, naming it.
 */
const PLACE_OPTIONS: OptionSpecs = {
  account: { kind: 'account', placeholder: 'ID', required: true, help: 'the account to order for' },
  service: { kind: 'integer', placeholder: 'N', required: true, help: 'service id (see `service list`, whose TYPE says what the order takes)' },
  target: { kind: 'text', placeholder: 'URL', required: true, help: 'http(s) URL of the item to promote' },
  quantity: { kind: 'integer', placeholder: 'Q', help: "units to order, within the service's min..max" },
  ...listOptions(),
  username: { kind: 'text', placeholder: 'NAME', help: 'Comment Likes, Mentions User Followers: the username' },
  hashtag: { kind: 'text', placeholder: 'TAG', help: 'Mentions Hashtag: the hashtag' },
  media: { kind: 'text', placeholder: 'URL', help: 'Mentions Media Likers: the post whose likers are mentioned' },
  'answer-number': { kind: 'integer', placeholder: 'N', help: 'Poll: the answer to vote for, from 1' },
  runs: { kind: 'integer', placeholder: 'N', help: 'drip-feed: deliver the quantity this many times (the service must offer drip-feed)' },
  interval: { kind: 'integer', placeholder: 'MINUTES', help: 'drip-feed: minutes between runs' },
};

/** A list given inline or read from a file, never both. */
function listText(input: CommandInput, name: ListInput): string | undefined {
  const inline = input.text(name);
  const file = input.text(`${name}-file`);
  if (inline !== undefined && file !== undefined) throw new UsageError(`give --${name} or --${name}-file, not both.`);
  if (file === undefined) return inline;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--${name}-file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
}

function placeBody(input: CommandInput) {
  const lists = Object.fromEntries((Object.keys(LIST_INPUTS) as ListInput[]).map((name) => [name, listText(input, name)]));
  return {
    service: input.number('service'),
    target: input.text('target'),
    quantity: input.number('quantity'),
    ...lists,
    username: input.text('username'),
    hashtag: input.text('hashtag'),
    media: input.text('media'),
    answer_number: input.number('answer-number'),
    runs: input.number('runs'),
    interval: input.number('interval'),
  };
}

export const ORDER_COMMANDS: readonly Command[] = [
  pagedListCommand({
    words: ['order', 'list'],
    summary: 'list orders with one status, oldest first, a page at a time (--all for every page)',
    path: ['orders'],
    member: 'orders',
    status: { default: DEFAULT_STATUS, help: `one of ${STATUSES} (default ${DEFAULT_STATUS})` },
    filters: {
      account: { kind: 'account', placeholder: 'ID', help: "only this account's orders" },
      worker: { kind: 'text', placeholder: 'NAME', help: 'only the orders this worker claimed' },
      number: { kind: 'integer', placeholder: 'N', help: 'only the order with this number (any status unless --status is given)' },
    },
    noun: (input) => `${formatCell(input.text('status') ?? DEFAULT_STATUS)} orders`,
    columns: ORDER_COLUMNS,
  }),
  {
    words: ['order', 'show'],
    summary: 'show one order (by its id or its number), with its rate, debit, channel and plan flag',
    args: [{ name: 'ID', id: 'order-or-number' }],
    request: (input) => ({ method: 'GET', path: adminPath('orders', input.arg('ID')) }),
    render: (body) => formatFields(Object.entries(objectAt(body, 'order'))),
  },
  {
    words: ['order', 'set-status'],
    summary: 'move an order to a new status; canceling or a partial delivery refunds the wallet',
    args: [ORDER_ID],
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
    summary: "place an order of any type for an account, as the panel does (charged to the account's credits)",
    options: PLACE_OPTIONS,
    request: (input) => ({ method: 'POST', path: adminPath('accounts', input.text('account')!, 'orders'), body: placeBody(input) }),
    render: (body, input) =>
      `Order ${formatCell(body.number ?? body.order)} placed for account ${formatCell(input.text('account'))}.\n` +
      formatFields([
        ['order', body.order],
        ['number', body.number],
        ['account', input.text('account')],
        ['status', body.status],
        ['charge', body.charge],
        ['balance', body.balance],
      ]),
  },
];
