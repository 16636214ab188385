import { adminPath, type Command, type JsonObject } from './command.js';
import { SUBSCRIPTION_ID } from './ids.js';
import { pagedListCommand } from './paged-list.js';
import { objectAt } from './response-shape.js';
import { formatCell, formatFields, type Column } from './table.js';

/**
 * The operator's subscription commands: list and show subscriptions,
 * report a post the processing system found (its order is charged at the
 * subscription's rate), and cancel one. One entry per command; see
 * command.ts for the fields.
 */

const SUBSCRIPTION_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (s) => s.id, align: 'right' },
  { header: 'ACCOUNT', value: (s) => s.account, align: 'right' },
  { header: 'SERVICE', value: (s) => s.service, align: 'right' },
  { header: 'USERNAME', value: (s) => s.username },
  { header: 'MIN', value: (s) => s.min, align: 'right' },
  { header: 'MAX', value: (s) => s.max, align: 'right' },
  { header: 'POSTS', value: (s) => `${formatCell(s.posts_done)}/${s.posts === 0 ? '∞' : formatCell(s.posts)}` },
  { header: 'EXPIRY', value: (s) => s.expiry },
  { header: 'STATUS', value: (s) => s.status },
];

export const SUBSCRIPTION_COMMANDS: readonly Command[] = [
  pagedListCommand({
    words: ['subscription', 'list'],
    summary: 'list subscriptions, oldest first, a page at a time (--all for every page)',
    path: ['subscriptions'],
    member: 'subscriptions',
    filters: {
      status: { kind: 'text', placeholder: 'STATUS', help: 'only this status: Active, Paused, Completed, Expired or Canceled' },
      account: { kind: 'account', placeholder: 'ID', help: "only this account's subscriptions" },
    },
    noun: (input) => (input.text('status') === undefined ? 'subscriptions' : `${formatCell(input.text('status'))} subscriptions`),
    columns: SUBSCRIPTION_COLUMNS,
  }),
  {
    words: ['subscription', 'show'],
    summary: "show one subscription: its terms, the rate it fixed, its status, posts and latest orders' numbers",
    args: [SUBSCRIPTION_ID],
    request: (input) => ({ method: 'GET', path: adminPath('subscriptions', input.arg('ID')) }),
    render: (body) => formatFields(Object.entries(objectAt(body, 'subscription'))),
  },
  {
    words: ['subscription', 'post'],
    summary: "report a post of the subscription's account: places its order, charged --quantity × the subscription's rate (the same --post again charges nothing)",
    args: [SUBSCRIPTION_ID],
    options: {
      post: { kind: 'text', placeholder: 'POST', required: true, help: "the post's id on its platform, what makes a repeated report recognisable" },
      link: { kind: 'text', placeholder: 'URL', required: true, help: "the post's link, the order's target" },
      quantity: { kind: 'integer', placeholder: 'N', required: true, help: "the units to deliver, within the subscription's min..max" },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('subscriptions', input.arg('ID'), 'posts'),
      body: { post: input.text('post'), link: input.text('link'), quantity: input.number('quantity') },
    }),
    render: (body) => {
      const order = objectAt(body, 'order');
      const what = body.replayed === true ? 'was already reported: its order is' : 'is ordered as';
      return `Post ${what} order ${formatCell(order.id)} (number ${formatCell(order.number)}), charged ${formatCell(order.charge)}; the wallet holds ${formatCell(body.credits)}.\n`;
    },
  },
  {
    words: ['subscription', 'cancel'],
    summary: 'cancel a subscription: it takes no more posts (its orders so far are not touched)',
    args: [SUBSCRIPTION_ID],
    options: { reason: { kind: 'text', placeholder: 'TEXT', help: 'why (kept in the log)' } },
    request: (input) => ({ method: 'POST', path: adminPath('subscriptions', input.arg('ID'), 'cancel'), body: { reason: input.text('reason') } }),
    render: (body) => `Subscription ${formatCell(objectAt(body, 'subscription').id)} is canceled.\n`,
  },
];
