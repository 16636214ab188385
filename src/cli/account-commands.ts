import { adminPath, type Command, type CommandInput, type JsonObject } from './command.js';
import { ACCOUNT_ID } from './ids.js';
import type { OptionSpecs } from './args.js';
import { UsageError } from './errors.js';
import { pagedListCommand } from './paged-list.js';
import { STATEMENT_COMMAND } from './statement-command.js';
import { objectAt } from './response-shape.js';
import { formatCell, formatFields, type Column } from './table.js';

/** `account ...` commands: one entry per command; see command.ts for the fields. */

const ACCOUNT_COLUMNS: readonly Column<JsonObject>[] = [
  { header: 'ID', value: (a) => a.id },
  { header: 'NAME', value: (a) => a.name },
  { header: 'CREDITS', value: (a) => a.credits, align: 'right' },
  { header: 'BANNED', value: (a) => a.banned },
  { header: 'RATE/MIN', value: (a) => a.rate_limit_per_minute, align: 'right' },
  // One column for the plan: "no", or when it runs out.
  { header: 'UNLIMITED', value: (a) => (a.unlimited === true ? (a.unlimited_expires ?? 'yes') : 'no') },
  { header: 'CREATED', value: (a) => a.created_at },
];

/** Every field the server sent, in its order, so new fields show up without a CLI change. */
function accountFields(body: JsonObject): string {
  return formatFields(Object.entries(objectAt(body, 'account')));
}

/** A change's confirmation: the sentence saying what changed, then the account as it is now. */
function confirmed(sentence: (account: string) => string): (body: JsonObject, input: CommandInput) => string {
  return (body, input) => `${sentence(formatCell(objectAt(body, 'account').id ?? input.arg('ID')))}\n${accountFields(body)}`;
}

/** Key and secret in the same aligned block as the account, then the warning that matters. */
function withCredentials(body: JsonObject, fields: Iterable<readonly [string, unknown]>, accountId: unknown): string {
  return (
    formatFields([...fields, ['api_key', body.api_key], ['api_secret', body.api_secret]]) +
    '\nThe API secret is shown only once: store it now. If it is lost, issue a new one with ' +
    `\`credit-order-api account rotate-secret ${String(accountId)}\`.\n`
  );
}

const ID = [ACCOUNT_ID] as const;

/** An optional `--reason`, sent as `reason` and written into the server's log event. */
const REASON: OptionSpecs = { reason: { kind: 'text', placeholder: 'TEXT', help: 'why, recorded with the change' } };

/** Two flags that set one boolean; neither leaves it unchanged. */
function either(input: CommandInput, yes: string, no: string): boolean | undefined {
  if (input.flag(yes) && input.flag(no)) throw new UsageError(`--${yes} and --${no} cannot be used together.`);
  return input.flag(yes) ? true : input.flag(no) ? false : undefined;
}

function forceJoinBody(input: CommandInput) {
  const user = input.number('telegram-user-id');
  if (user !== undefined && input.flag('unlink')) throw new UsageError('--telegram-user-id and --unlink cannot be used together.');
  const body = {
    telegram_user_id: input.flag('unlink') ? null : user,
    verified: either(input, 'verified', 'not-verified'),
    exempt: either(input, 'exempt', 'not-exempt'),
  };
  if (Object.values(body).every((value) => value === undefined)) {
    throw new UsageError(
      'account forcejoin needs at least one of --telegram-user-id, --unlink, --verified, --not-verified, --exempt, --not-exempt.',
    );
  }
  return { ...body, reason: input.text('reason') };
}

export const ACCOUNT_COMMANDS: readonly Command[] = [
  {
    words: ['account', 'create'],
    summary: 'create an account and print its API key and secret (the secret is shown once)',
    options: { name: { kind: 'text', placeholder: 'NAME', required: true, help: 'account name, for the operator' } },
    request: (input) => ({ method: 'POST', path: adminPath('accounts'), body: { name: input.text('name') } }),
    render: (body) => {
      const account = objectAt(body, 'account');
      return `Account created.\n${withCredentials(body, Object.entries(account), account.id)}`;
    },
  },
  pagedListCommand({
    words: ['account', 'list'],
    summary: 'list accounts in id order, a page at a time (--all for every page)',
    path: ['accounts'],
    member: 'accounts',
    noun: () => 'accounts',
    none: 'No accounts yet.\n',
    columns: ACCOUNT_COLUMNS,
  }),
  {
    words: ['account', 'show'],
    summary: 'show one account',
    args: ID,
    request: (input) => ({ method: 'GET', path: adminPath('accounts', input.arg('ID')) }),
    render: accountFields,
  },
  STATEMENT_COMMAND,
  {
    words: ['account', 'credits'],
    summary: 'add credits to an account, or remove them with a negative amount; the reason is logged',
    args: ID,
    options: {
      amount: {
        kind: 'decimal',
        placeholder: 'AMOUNT',
        required: true,
        help: 'credits to add, e.g. 12.5 (negative to remove; at most 6 decimal places)',
      },
      reason: { kind: 'text', placeholder: 'TEXT', required: true, help: 'why, recorded with the change' },
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('accounts', input.arg('ID'), 'credits'),
      body: { amount: input.number('amount'), reason: input.text('reason') },
    }),
    render: (body, input) => {
      const amount = input.number('amount')!.text;
      const change = amount.startsWith('-') ? `${amount.slice(1)} credits removed from` : `${amount} credits added to`;
      return `${change} account ${formatCell(input.arg('ID'))}.\n` + formatFields([['account', input.arg('ID')], ['credits', body.credits]]);
    },
  },
  {
    words: ['account', 'ban'],
    summary: "disable an account's API access",
    args: ID,
    options: REASON,
    request: (input) => ({
      method: 'PATCH',
      path: adminPath('accounts', input.arg('ID')),
      body: { banned: true, reason: input.text('reason') },
    }),
    render: confirmed((id) => `Account ${id} banned: its API requests are refused from now on.`),
  },
  {
    words: ['account', 'unban'],
    summary: "restore an account's API access",
    args: ID,
    options: REASON,
    request: (input) => ({
      method: 'PATCH',
      path: adminPath('accounts', input.arg('ID')),
      body: { banned: false, reason: input.text('reason') },
    }),
    render: confirmed((id) => `Account ${id} unbanned: its API requests are served again.`),
  },
  {
    words: ['account', 'rate-limit'],
    summary: "set an account's request limit per minute",
    args: ID,
    options: {
      'per-minute': { kind: 'integer', placeholder: 'N', required: true, help: 'requests allowed per minute' },
      ...REASON,
    },
    request: (input) => ({
      method: 'PATCH',
      path: adminPath('accounts', input.arg('ID')),
      body: { rate_limit_per_minute: input.number('per-minute'), reason: input.text('reason') },
    }),
    render: (body, input) => confirmed((id) => `Account ${id} may now make ${formatCell(objectAt(body, 'account').rate_limit_per_minute)} requests a minute.`)(body, input),
  },
  {
    words: ['account', 'rotate-secret'],
    summary: 'issue a new API secret (the old one stops working; the new one is shown once)',
    args: ID,
    request: (input) => ({ method: 'POST', path: adminPath('accounts', input.arg('ID'), 'rotate-secret') }),
    render: (body, input) =>
      `Secret rotated.\n${withCredentials(body, [['account', input.arg('ID')]], input.arg('ID'))}`,
  },
  {
    words: ['account', 'v2-key'],
    summary: 'issue the API v2 key (replaces any earlier one; the new key is shown once)',
    args: ID,
    request: (input) => ({ method: 'POST', path: adminPath('accounts', input.arg('ID'), 'v2-key') }),
    render: (body, input) =>
      `API v2 key issued.\n${formatFields([['account', input.arg('ID')], ['v2_key', body.v2_key]])}` +
      '\nThe key is shown only once: store it now. Resellers send it as `key` to POST /api/v2.\n',
  },
  {
    words: ['account', 'revoke-v2-key'],
    summary: 'revoke the API v2 key (requests with it fail from now on)',
    args: ID,
    request: (input) => ({ method: 'DELETE', path: adminPath('accounts', input.arg('ID'), 'v2-key') }),
    render: (_body, input) => `API v2 key revoked for account ${input.arg('ID')}.\n`,
  },
  {
    words: ['account', 'plan'],
    summary: 'grant or extend the unlimited plan by whole months (orders then cost no credits)',
    args: ID,
    options: {
      months: { kind: 'integer', placeholder: 'N', required: true, help: 'months to add, 1 to 120' },
      ...REASON,
    },
    request: (input) => ({
      method: 'POST',
      path: adminPath('accounts', input.arg('ID'), 'plan'),
      body: { months: input.number('months'), reason: input.text('reason') },
    }),
    render: (body, input) => {
      const account = objectAt(body, 'account');
      const price = body.price_inr === undefined || body.price_inr === null ? body.price_inr : `${formatCell(body.price_inr)} INR`;
      return (
        'Unlimited plan granted.\n' +
        formatFields([
          ['account', account.id ?? input.arg('ID')],
          ['expires', account.unlimited_expires],
          ['price', price],
        ])
      );
    },
  },
  {
    words: ['account', 'forcejoin'],
    summary: "set the account's Telegram force-join link: user id, verified, exempt (only those given change)",
    args: ID,
    options: {
      'telegram-user-id': { kind: 'integer', placeholder: 'N', help: 'link this Telegram user id' },
      unlink: { kind: 'flag', help: 'remove the linked Telegram user id' },
      verified: { kind: 'flag', help: 'mark the user as a verified channel member' },
      'not-verified': { kind: 'flag', help: 'clear the verified mark' },
      exempt: { kind: 'flag', help: 'exempt the account from the force-join check' },
      'not-exempt': { kind: 'flag', help: 'make the account subject to the check again' },
      ...REASON,
    },
    request: (input) => ({ method: 'POST', path: adminPath('accounts', input.arg('ID'), 'forcejoin'), body: forceJoinBody(input) }),
    render: confirmed((id) => `Force-join settings of account ${id} saved.`),
  },
];
