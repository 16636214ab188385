import type { Command, CommandInput, JsonObject } from './command.js';
import { adminPath } from './command.js';
import type { OptionSpecs } from './args.js';
import { UsageError } from './errors.js';
import { listAt, objectAt } from './response-shape.js';
import { formatFields, formatTable, type Column } from './table.js';

/** `service ...` commands: one entry per command; see command.ts for the fields. */

const SERVICE_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (s) => s.id, align: 'right' },
  { header: 'PLATFORM', value: (s) => s.platform },
  { header: 'NAME', value: (s) => s.name },
  { header: 'RATE', value: (s) => s.rate, align: 'right' },
  { header: 'MIN', value: (s) => s.min, align: 'right' },
  { header: 'MAX', value: (s) => s.max, align: 'right' },
  { header: 'ENABLED', value: (s) => s.enabled },
];

function serviceFields(body: JsonObject): string {
  return formatFields(Object.entries(objectAt(body, 'service')));
}

/** `service add` requires these; `service update` takes any of them. */
function serviceOptions(required: boolean): OptionSpecs {
  return {
    platform: { kind: 'text', placeholder: 'PLATFORM', required, help: 'platform, e.g. telegram' },
    name: { kind: 'text', placeholder: 'NAME', required, help: 'service name shown to clients' },
    rate: { kind: 'decimal', placeholder: 'RATE', required, help: 'credits per unit of quantity, e.g. 0.5' },
    min: { kind: 'integer', placeholder: 'N', required, help: 'smallest quantity allowed' },
    max: { kind: 'integer', placeholder: 'N', required, help: 'largest quantity allowed' },
  };
}

function serviceFieldsFrom(input: CommandInput) {
  return {
    platform: input.text('platform'),
    name: input.text('name'),
    rate: input.number('rate'),
    min: input.number('min'),
    max: input.number('max'),
  };
}

function setEnabled(input: CommandInput, enabled: boolean) {
  return { method: 'PATCH', path: adminPath('services', input.arg('ID')), body: { enabled, reason: input.text('reason') } } as const;
}

/** An optional `--reason`, sent as `reason` and written into the server's log event. */
const REASON: OptionSpecs = { reason: { kind: 'text', placeholder: 'TEXT', help: 'why, recorded with the change' } };

const ID = ['ID'] as const;

export const SERVICE_COMMANDS: readonly Command[] = [
  {
    words: ['service', 'add'],
    summary: 'add a service (enabled unless --disabled)',
    options: {
      ...serviceOptions(true),
      disabled: { kind: 'flag', help: 'create it disabled, hidden from clients' },
      ...REASON,
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('services'),
      body: { ...serviceFieldsFrom(input), enabled: !input.flag('disabled'), reason: input.text('reason') },
    }),
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
        throw new UsageError('service update needs at least one of --platform, --name, --rate, --min, --max.');
      }
      return { method: 'PATCH', path: adminPath('services', input.arg('ID')), body: { ...body, reason: input.text('reason') } };
    },
    render: serviceFields,
  },
  {
    words: ['service', 'enable'],
    summary: 'make a service orderable again',
    args: ID,
    options: REASON,
    request: (input) => setEnabled(input, true),
    render: serviceFields,
  },
  {
    words: ['service', 'disable'],
    summary: 'hide a service from clients and refuse new orders for it',
    args: ID,
    options: REASON,
    request: (input) => setEnabled(input, false),
    render: serviceFields,
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
