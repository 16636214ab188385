import { adminPath, type Command, type JsonObject } from './command.js';
import { ORDER_ID, REFILL_ID } from './ids.js';
import { listAt, objectAt } from './response-shape.js';
import { pagedListCommand } from './paged-list.js';
import { formatCell, formatFields, formatTable, type Column } from './table.js';

/**
 * The processing workflow's commands: claim pending orders for a lease,
 * extend or release it, record progress,
 * list cancel requests, and list and move refills. One entry per command;
 * see command.ts for the fields.
 */

const QUEUE_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (o) => o.id },
  { header: 'NUMBER', value: (o) => o.number, align: 'right' },
  { header: 'ACCOUNT', value: (o) => o.account, align: 'right' },
  { header: 'SERVICE', value: (o) => o.service, align: 'right' },
  { header: 'TYPE', value: (o) => o.type },
  { header: 'QUANTITY', value: (o) => o.quantity, align: 'right' },
  { header: 'RUNS', value: (o) => o.runs, align: 'right' },
  { header: 'STATUS', value: (o) => o.status },
  { header: 'LEASE ENDS', value: (o) => o.lease_expires_at },
  { header: 'TARGET', value: (o) => o.target },
];

const REFILL_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'REFILL', value: (r) => r.refill, align: 'right' },
  { header: 'ORDER', value: (r) => r.order },
  { header: 'ACCOUNT', value: (r) => r.account, align: 'right' },
  { header: 'STATUS', value: (r) => r.status },
  { header: 'CREATED', value: (r) => r.created_at },
];

function queueTable(body: JsonObject, empty: string): string {
  const orders = listAt(body, 'orders');
  return orders.length === 0 ? empty : formatTable(orders, QUEUE_COLUMNS);
}

export const LIFECYCLE_COMMANDS: readonly Command[] = [
  {
    words: ['order', 'claim'],
    summary: 'move up to --limit of the oldest pending orders to processing for a worker, held for a lease (back in the queue when it ends)',
    options: {
      limit: { kind: 'integer', placeholder: 'N', required: true, help: 'how many orders to take (1 to 500)' },
      worker: { kind: 'text', placeholder: 'NAME', required: true, help: 'who takes them, recorded on each order' },
      'lease-seconds': { kind: 'integer', placeholder: 'S', help: 'how long the worker holds them, in seconds (default: five minutes)' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('orders', 'claim'),
      body: { limit: input.number('limit'), worker: input.text('worker'), lease_seconds: input.number('lease-seconds') },
    }),
    render: (body) => {
      const claimed = listAt(body, 'orders').length;
      if (claimed === 0) return 'No pending orders to claim.\n';
      return `Claimed ${claimed} order${claimed === 1 ? '' : 's'} for worker ${formatCell(body.worker)}; they are processing now.\n${queueTable(body, '')}`;
    },
  },
  {
    words: ['order', 'extend'],
    summary: "extend a worker's lease on a processing order it claimed: it then ends --lease-seconds from now",
    args: [ORDER_ID],
    options: {
      worker: { kind: 'text', placeholder: 'NAME', required: true, help: 'the worker holding the order' },
      'lease-seconds': { kind: 'integer', placeholder: 'S', help: 'the new lease, in seconds from now (default: five minutes)' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('orders', input.arg('ID'), 'extend'),
      body: { worker: input.text('worker'), lease_seconds: input.number('lease-seconds') },
    }),
    render: (body) => {
      const order = objectAt(body, 'order');
      return `${formatCell(order.worker)} holds order ${formatCell(order.id)} until ${formatCell(order.lease_expires_at)}.\n`;
    },
  },
  {
    words: ['order', 'release'],
    summary: 'give a processing order a worker claimed back to the claim queue (pending; no money moves)',
    args: [ORDER_ID],
    options: {
      worker: { kind: 'text', placeholder: 'NAME', required: true, help: 'the worker holding the order' },
    },
    request: (input) => ({ method: 'POST', path: adminPath('orders', input.arg('ID'), 'release'), body: { worker: input.text('worker') } }),
    render: (body, input) => `Order ${formatCell(objectAt(body, 'order').id)} is pending again, back in the claim queue (released by ${formatCell(input.text('worker'))}).\n`,
  },
  {
    words: ['order', 'progress'],
    summary: 'record start_count and/or remains of an in_progress order (customers see them in status)',
    args: [ORDER_ID],
    options: {
      'start-count': { kind: 'integer', placeholder: 'N', help: 'the count on the target when delivery started' },
      remains: { kind: 'integer', placeholder: 'N', help: 'units still to deliver' },
      worker: { kind: 'text', placeholder: 'NAME', help: 'the worker recording it, which must hold the order' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('orders', input.arg('ID'), 'progress'),
      body: { start_count: input.number('start-count'), remains: input.number('remains'), worker: input.text('worker') },
    }),
    render: (body) => {
      const order = objectAt(body, 'order');
      return `Progress of order ${formatCell(order.id)} recorded.\n` + formatFields([['order', order.id], ['status', order.status], ['start_count', order.start_count], ['remains', order.progress_remains]]);
    },
  },
  pagedListCommand({
    words: ['order', 'cancel-requests'],
    summary: 'list processing and in_progress orders whose customer asked to cancel (resolve with set-status canceled or partial)',
    path: ['orders'],
    fixedQuery: { cancel_requested: 'true' },
    member: 'orders',
    noun: () => 'open cancel requests',
    columns: QUEUE_COLUMNS,
  }),
  pagedListCommand({
    words: ['refill', 'list'],
    summary: 'list refills with one status, oldest first, a page at a time (--all for every page)',
    path: ['refills'],
    member: 'refills',
    status: { default: 'pending', help: 'pending (default), in_progress, completed or rejected' },
    noun: (input) => `${formatCell(input.text('status') ?? 'pending')} refills`,
    columns: REFILL_COLUMNS,
  }),
  {
    words: ['refill', 'set-status'],
    summary: 'move a refill: pending → in_progress → completed | rejected (no money moves)',
    args: [REFILL_ID],
    options: {
      status: { kind: 'text', placeholder: 'STATUS', required: true, help: 'in_progress, completed or rejected' },
      reason: { kind: 'text', placeholder: 'TEXT', help: 'why (shown to nobody but the log and the operator)' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('refills', input.arg('ID'), 'status'),
      body: { status: input.text('status'), reason: input.text('reason') },
    }),
    render: (body) => {
      const refill = objectAt(body, 'refill');
      return `Refill ${String(refill.refill)} is now ${String(refill.status)}.\n` + formatFields([['order', refill.order], ['status', refill.status]]);
    },
  },
];
