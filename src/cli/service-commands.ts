import { adminPath, type Command, type CommandInput, type JsonObject } from './command.js';
import { SERVICE_ID } from './ids.js';
import type { OptionSpecs } from './args.js';
import { UsageError } from './errors.js';
import { JsonNumber } from './json-number.js';
import { parsePer1000, PER_QUOTE_DIGITS } from '../money/index.js';
import { listAt, objectAt } from './response-shape.js';
import { formatCell, formatFields, formatTable, type Column } from './table.js';
import { durationInWords, MS_PER_SECOND } from '../platform/units.js';

/** `service ...` commands: one entry per command; see command.ts for the fields. */

const SERVICE_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (s) => s.id, align: 'right' },
  { header: 'PLATFORM', value: (s) => s.platform },
  { header: 'NAME', value: (s) => s.name },
  { header: 'RATE', value: (s) => s.rate, align: 'right' },
  { header: 'RATE/1000', value: (s) => s.rate_per_1000, align: 'right' },
  { header: 'MIN', value: (s) => s.min, align: 'right' },
  { header: 'MAX', value: (s) => s.max, align: 'right' },
  { header: 'ENABLED', value: (s) => s.enabled },
  { header: 'TYPE', value: (s) => s.type },
  { header: 'REFILL', value: (s) => (s.refill === true ? `${String(s.refill_days)}d` : 'no') },
  { header: 'CANCEL', value: (s) => s.cancel },
  { header: 'DRIPFEED', value: (s) => s.dripfeed },
  // The median time from placement to completion of its recent completed orders, as customers see it.
  { header: 'AVG TIME', value: (s) => (typeof s.average_time === 'number' ? durationInWords(s.average_time * MS_PER_SECOND) : '-') },
];

function serviceFields(body: JsonObject): string {
  return formatFields(Object.entries(objectAt(body, 'service')));
}

/** A change's confirmation: the sentence saying what changed, then the service as it is now. */
function confirmed(what: string): (body: JsonObject) => string {
  return (body) => `Service ${formatCell(objectAt(body, 'service').id)} ${what}.\n${serviceFields(body)}`;
}

/** `service add` requires these; `service update` takes any of them. */
function serviceOptions(required: boolean): OptionSpecs {
  return {
    platform: { kind: 'text', placeholder: 'PLATFORM', required, help: 'platform, e.g. telegram' },
    name: { kind: 'text', placeholder: 'NAME', required, help: 'service name shown to clients' },
    rate: { kind: 'decimal', placeholder: 'RATE', help: `credits per unit of quantity, e.g. 0.0015${required ? ' (this or --rate-per-1000 is required)' : ''}` },
    'rate-per-1000': { kind: 'text', placeholder: 'PRICE', help: `credits per 1,000 units, as suppliers quote, e.g. 1.5 (at most ${PER_QUOTE_DIGITS} decimal places)` },
    min: { kind: 'integer', placeholder: 'N', required, help: 'smallest quantity allowed' },
    max: { kind: 'integer', placeholder: 'N', required, help: 'largest quantity allowed' },
    category: { kind: 'text', placeholder: 'TEXT', help: 'category shown to clients, e.g. Instagram Followers' },
    type: { kind: 'text', placeholder: 'TYPE', help: "order type: Default, Package, 'Custom Comments', 'Custom Comments Package', 'Mentions Custom List', Poll" },
    refill: { kind: 'text', placeholder: 'yes|no', help: 'whether completed orders may ask for a refill' },
    'refill-days': { kind: 'integer', placeholder: 'N', help: 'days after completion a refill may be asked for (default 30)' },
    cancel: { kind: 'text', placeholder: 'yes|no', help: 'whether customers may cancel pending orders' },
    dripfeed: { kind: 'text', placeholder: 'yes|no', help: 'whether orders may be drip-fed in runs' },
    description: { kind: 'text', placeholder: 'TEXT', help: 'description shown to clients' },
  };
}

/** `--refill yes` and the like: the answer as a boolean, undefined when not given. */
function yesNo(input: CommandInput, name: string): boolean | undefined {
  const text = input.text(name);
  if (text === undefined) return undefined;
  if (text === 'yes' || text === 'true') return true;
  if (text === 'no' || text === 'false') return false;
  throw new UsageError(`--${name} must be yes or no.`);
}

/** `--rate` or `--rate-per-1000`, as the server takes them: one of the two, the price per 1,000 checked before it is sent. */
function rateFields(input: CommandInput): { rate?: JsonNumber; rate_per_1000?: JsonNumber } {
  const rate = input.number('rate');
  const per1000 = input.text('rate-per-1000');
  if (rate !== undefined && per1000 !== undefined) throw new UsageError('give --rate or --rate-per-1000, not both.');
  if (per1000 === undefined) return rate === undefined ? {} : { rate };
  const checked = parsePer1000(per1000, '--rate-per-1000');
  if (!checked.ok) throw new UsageError(checked.message);
  return { rate_per_1000: new JsonNumber(per1000.replace(/^0+(?=\d)/, '')) };
}

function serviceFieldsFrom(input: CommandInput) {
  return {
    platform: input.text('platform'),
    name: input.text('name'),
    ...rateFields(input),
    min: input.number('min'),
    max: input.number('max'),
    category: input.text('category'),
    type: input.text('type'),
    refill: yesNo(input, 'refill'),
    refill_days: input.number('refill-days'),
    cancel: yesNo(input, 'cancel'),
    dripfeed: yesNo(input, 'dripfeed'),
    description: input.text('description'),
  };
}

function setEnabled(input: CommandInput, enabled: boolean) {
  return { method: 'PATCH', path: adminPath('services', input.arg('ID')), body: { enabled, reason: input.text('reason') } } as const;
}

/** An optional `--reason`, sent as `reason` and written into the server's log event. */
const REASON: OptionSpecs = { reason: { kind: 'text', placeholder: 'TEXT', help: 'why, recorded with the change' } };

const ID = [SERVICE_ID] as const;

export const SERVICE_COMMANDS: readonly Command[] = [
  {
    words: ['service', 'add'],
    summary: 'add a service (enabled unless --disabled)',
    options: {
      ...serviceOptions(true),
      disabled: { kind: 'flag', help: 'create it disabled, hidden from clients' },
      ...REASON,
    },
    request: (input) => {
      const fields = serviceFieldsFrom(input);
      if (fields.rate === undefined && fields.rate_per_1000 === undefined) throw new UsageError('service add needs --rate or --rate-per-1000.');
      return { method: 'POST', path: adminPath('services'), body: { ...fields, enabled: !input.flag('disabled'), reason: input.text('reason') } };
    },
    render: (body) => `Service added.\n${serviceFields(body)}`,
  },
  {
    words: ['service', 'update'],
    summary: "change a service's fields (only those given)",
    args: ID,
    options: { ...serviceOptions(false), ...REASON },
    request: (input) => {
      const body = serviceFieldsFrom(input);
      if (Object.values(body).every((value) => value === undefined)) {
        throw new UsageError(
          'service update needs at least one of --platform, --name, --rate, --rate-per-1000, --min, --max, --category, --type, --refill, --refill-days, --cancel, --dripfeed, --description.',
        );
      }
      return { method: 'PATCH', path: adminPath('services', input.arg('ID')), body: { ...body, reason: input.text('reason') } };
    },
    render: confirmed('updated'),
  },
  {
    words: ['service', 'enable'],
    summary: 'make a service orderable again',
    args: ID,
    options: REASON,
    request: (input) => setEnabled(input, true),
    render: confirmed('enabled: clients can order it'),
  },
  {
    words: ['service', 'disable'],
    summary: 'hide a service from clients and refuse new orders for it',
    args: ID,
    options: REASON,
    request: (input) => setEnabled(input, false),
    render: confirmed('disabled: hidden from clients, new orders refused'),
  },
  {
    words: ['service', 'list'],
    summary: 'list all services, disabled ones included',
    request: () => ({ method: 'GET', path: adminPath('services') }),
    render: (body) => {
      const services = listAt(body, 'services');
      return services.length === 0 ? 'No services yet.\n' : formatTable(services, SERVICE_COLUMNS);
    },
  },
];
