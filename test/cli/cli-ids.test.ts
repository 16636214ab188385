/*
 * Ids on the command line: a word that cannot be the id a command takes is
 * a usage error (exit 2, the command's usage line, nothing sent), for every
 * command of the table that takes one; the forms the admin API accepts are
 * sent as typed: account, service, webhook and refill numbers, order ids
 * (one in 64 starts with a dash) and, for `order show`, order numbers.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/index.js';
import { PROGRAM, signature } from '../../src/cli/help.js';
import { onlyRequest, ORDER_ID, runAgainst, useFakeAdmin } from './fake-admin.js';

const fake = useFakeAdmin();

function cli(...args: string[]) {
  return runAgainst(fake, args);
}

/** Every command with a positional id, and the ids an `--account` option takes. */
const WITH_ID = COMMANDS.filter((c) => (c.args ?? []).length > 0);
const WITH_ACCOUNT_OPTION = COMMANDS.filter((c) => c.options?.['account'] !== undefined);

/** The usage error a refused line prints. */
function usageError(words: readonly string[], sentence: string): { code: number; out: string; err: string } {
  const command = COMMANDS.find((c) => c.words.join(' ') === words.join(' '))!;
  return { code: 2, out: '', err: `error: ${sentence}\nUsage: ${PROGRAM} ${signature(command, true)} [options]\nRun \`${PROGRAM} ${words.join(' ')} --help\` for details.\n` };
}

describe('ids on the command line', () => {
  it('account show abc exits 2 with the usage line and sends nothing', async () => {
    expect(await cli('account', 'show', 'abc')).toEqual(usageError(['account', 'show'], 'account show: ID must be an account id, a whole number from 1 (like 42), not "abc".'));
    expect(fake.requests).toHaveLength(0);
  });

  it.each(WITH_ID.map((c) => [c.words.join(' ')]))('%s refuses words that cannot be its id, sending nothing', async (name) => {
    const command = COMMANDS.find((c) => c.words.join(' ') === name)!;
    const kind = command.args![0]!.id;
    const refused = kind === 'order' ? ['abc', '41', 'AbCdEfGhIjKlMnOpQrSt_', 'AbCdEfGhIjKlMnOpQrSt_12', 'AbCdEfGhIjKlMnOpQrSt.1'] : kind === 'order-or-number' ? ['abc', '0', '041', 'AbCdEfGhIjKlMnOpQrSt_'] : ['abc', '0', '042', '1.5', '1e3', '12345678901234567'];
    for (const word of refused) {
      const r = await cli(...command.words, word);
      expect(r.code, `${name} ${word}`).toBe(2);
      expect(r.err).toContain(`error: ${name}: ${command.args![0]!.name} must be`);
      expect(r.err).toContain(`\nUsage: ${PROGRAM} ${command.words.join(' ')} `);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it.each(WITH_ACCOUNT_OPTION.map((c) => [c.words.join(' ')]))('%s refuses an --account that cannot be an account id', async (name) => {
    const command = COMMANDS.find((c) => c.words.join(' ') === name)!;
    const r = await cli(...command.words, '--account', 'acc_1');
    expect(r).toEqual(usageError(command.words, '--account must be an account id, a whole number from 1 (like 42), not "acc_1".'));
    expect(fake.requests).toHaveLength(0);
  });

  it('sends the forms the admin API takes, as typed', async () => {
    const dashed = '-bCdEfGhIjKlMnOpQrSt_1';
    const lines: [string[], string][] = [
      [['account', 'show', '1'], 'GET /admin/v1/accounts/1'],
      [['order', 'show', ORDER_ID], `GET /admin/v1/orders/${ORDER_ID}`],
      [['order', 'show', '41'], 'GET /admin/v1/orders/41'],
      [['order', 'show', dashed], `GET /admin/v1/orders/${dashed}`],
      [['order', 'set-status', dashed, '--status', 'canceled'], `POST /admin/v1/orders/${dashed}/status`],
      [['order', 'extend', ORDER_ID, '--worker', 'w1'], `POST /admin/v1/orders/${ORDER_ID}/extend`],
      [['refill', 'set-status', '5', '--status', 'completed'], 'POST /admin/v1/refills/5/status'],
      [['service', 'enable', '3'], 'PATCH /admin/v1/services/3'],
      [['webhook', 'disable', '9'], 'PATCH /admin/v1/webhooks/9'],
      [['order', 'list', '--account', '22'], 'GET /admin/v1/orders?account=22'],
      [['webhook', 'list', '--account', '22'], 'GET /admin/v1/webhooks?account=22'],
    ];
    for (const [line, request] of lines) {
      fake.requests = [];
      await cli(...line);
      const sent = onlyRequest(fake);
      expect(`${sent.method} ${sent.url}`, line.join(' ')).toBe(request);
    }
  });
});
