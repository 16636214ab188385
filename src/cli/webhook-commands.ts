import { adminPath, type Command, type CommandInput, type JsonObject } from './command.js';
import { WEBHOOK_ID } from './ids.js';
import { UsageError } from './errors.js';
import { pagedListCommand } from './paged-list.js';
import { listAt, objectAt } from './response-shape.js';
import { formatCell, formatFields, formatTable, type Column } from './table.js';
import { DELIVERY_LOG_PAGE_DEFAULT, DELIVERY_LOG_PAGE_MAX } from '../ops/limits.js';

/** `webhook ...` commands: one entry per command, each wrapping one admin route (see command.ts). */

const WEBHOOK_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (w) => w.id, align: 'right' },
  { header: 'ACCOUNT', value: (w) => w.account, align: 'right' },
  { header: 'URL', value: (w) => w.url },
  { header: 'EVENTS', value: (w) => (Array.isArray(w.events) ? w.events.join(',') : '') },
  { header: 'ENABLED', value: (w) => w.enabled },
  { header: 'FAILING', value: (w) => (w.failing === true ? `since ${String(w.failing_since)}` : 'no') },
  { header: 'HELD', value: (w) => w.held, align: 'right' },
  { header: 'OLDEST HELD', value: (w) => w.oldest_held_at ?? '' },
];

const DELIVERY_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'AT', value: (d) => d.at },
  { header: 'MESSAGE', value: (d) => d.message },
  { header: 'TYPE', value: (d) => d.type },
  { header: 'ORDER', value: (d) => d.order },
  { header: 'ATTEMPT', value: (d) => d.attempt, align: 'right' },
  { header: 'OUTCOME', value: (d) => d.outcome },
  { header: 'STATUS', value: (d) => d.status ?? '' },
  { header: 'MS', value: (d) => d.duration_ms, align: 'right' },
  { header: 'ERROR', value: (d) => d.error ?? '' },
];

function webhookFields(body: JsonObject): string {
  return formatFields(Object.entries(objectAt(body, 'webhook')));
}

/** The secret is shown once: say so beside it, after the sentence saying what was done. */
function withSecret(done: string): (body: JsonObject) => string {
  return (body) => `Webhook endpoint ${formatCell(objectAt(body, 'webhook').id)} ${done}.\n${webhookFields(body)}Store the secret now: it is not shown again.\n`;
}

function events(input: CommandInput): string[] | undefined {
  const text = input.text('events');
  if (text === undefined) return undefined;
  const list = text.split(',').map((e) => e.trim());
  if (list.some((e) => e === '')) throw new UsageError('--events is a comma-separated list, e.g. order.updated,refill.updated.');
  return list;
}

const ID = [WEBHOOK_ID] as const;

function setEnabled(input: CommandInput, enabled: boolean) {
  return { method: 'PATCH', path: adminPath('webhooks', input.arg('ID')), body: { enabled } } as const;
}

export const WEBHOOK_COMMANDS: readonly Command[] = [
  pagedListCommand({
    words: ['webhook', 'list'],
    summary: 'list webhook endpoints in id order with what each still holds, a page at a time (--failing: only failing ones; --all for every page)',
    path: ['webhooks'],
    member: 'webhooks',
    filters: {
      account: { kind: 'account', placeholder: 'ID', help: "only this account's endpoints" },
      failing: { kind: 'flag', help: 'only endpoints marked failing (a message failed for WEBHOOKS_RETRY_HOURS)' },
    },
    noun: (input) => (input.flag('failing') ? 'failing webhook endpoints' : 'webhook endpoints'),
    columns: WEBHOOK_COLUMNS,
  }),
  {
    words: ['webhook', 'add'],
    summary: "register a webhook endpoint for an account (its secret is shown once)",
    args: [{ name: 'ACCOUNT', id: 'account' }],
    options: {
      url: { kind: 'text', placeholder: 'URL', required: true, help: 'https URL that receives the notifications' },
      events: { kind: 'text', placeholder: 'LIST', help: 'comma-separated: order.updated, refill.updated (default order.updated)' },
      disabled: { kind: 'flag', help: 'register it disabled' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('accounts', input.arg('ACCOUNT'), 'webhooks'),
      body: { url: input.text('url'), events: events(input), enabled: !input.flag('disabled') },
    }),
    render: withSecret('registered'),
  },
  {
    words: ['webhook', 'enable'],
    summary: 'turn an endpoint on (what it holds is sent)',
    args: ID,
    request: (input) => setEnabled(input, true),
    render: (body) => `Webhook endpoint ${formatCell(objectAt(body, 'webhook').id)} enabled: it gets new messages and sends what it holds.\n${webhookFields(body)}`,
  },
  {
    words: ['webhook', 'disable'],
    summary: 'turn an endpoint off (no new messages are kept for it)',
    args: ID,
    request: (input) => setEnabled(input, false),
    render: (body) => `Webhook endpoint ${formatCell(objectAt(body, 'webhook').id)} disabled: it gets no new messages.\n${webhookFields(body)}`,
  },
  {
    words: ['webhook', 'rotate'],
    summary: "replace an endpoint's signing secret (shown once; the old one signs beside it for 24 h)",
    args: ID,
    request: (input) => ({ method: 'POST', path: adminPath('webhooks', input.arg('ID'), 'rotate') }),
    render: withSecret('has a new signing secret; the old one signs beside it for 24 h'),
  },
  {
    words: ['webhook', 'delete'],
    summary: 'delete an endpoint and what it holds',
    args: ID,
    request: (input) => ({ method: 'DELETE', path: adminPath('webhooks', input.arg('ID')) }),
    render: (body) => `Webhook endpoint ${String(body.deleted)} deleted.\n`,
  },
  {
    words: ['webhook', 'replay'],
    summary: 'clear the failing mark and send what the endpoint holds again, oldest first',
    args: ID,
    request: (input) => ({ method: 'POST', path: adminPath('webhooks', input.arg('ID'), 'replay') }),
    render: (body) => `Webhook endpoint ${formatCell(objectAt(body, 'webhook').id)} replayed: no longer failing, its held messages go out again.\n${webhookFields(body)}`,
  },
  {
    words: ['webhook', 'deliveries'],
    summary: "an endpoint's delivery log, newest first",
    args: ID,
    options: { limit: { kind: 'integer', placeholder: 'N', help: `how many attempts (default ${DELIVERY_LOG_PAGE_DEFAULT}, at most ${DELIVERY_LOG_PAGE_MAX})` } },
    request: (input) => {
      const limit = input.number('limit');
      return { method: 'GET', path: adminPath('webhooks', input.arg('ID'), 'deliveries') + (limit === undefined ? '' : `?limit=${limit.text}`) };
    },
    render: (body) => {
      const list = listAt(body, 'deliveries');
      return list.length === 0 ? 'No delivery attempts yet.\n' : formatTable(list, DELIVERY_COLUMNS);
    },
  },
];
