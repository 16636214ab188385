import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT, ACCOUNTS, onlyRequest, runAgainst, useFakeAdmin } from './fake-admin.js';

/*
 * Drives the CLI in-process against a real HTTP server on a loopback port:
 * a small fake of the admin API (fake-admin.ts) that records each request
 * and answers with contract-shaped bodies. The processing and operations
 * commands (orders, plan, forcejoin, snapshot, verify, stats) are in
 * cli-ops.test.ts.
 */

const fake = useFakeAdmin();

function cli(args: string[], env?: NodeJS.ProcessEnv) {
  return runAgainst(fake, args, env);
}

function only() {
  return onlyRequest(fake);
}

describe('account commands', () => {
  it('account create posts the name and shows key, secret and the shown-once warning', async () => {
    const r = await cli(['account', 'create', '--name', 'alice']);
    expect(r).toMatchObject({ code: 0, err: '' });
    const req = only();
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/admin/v1/accounts');
    expect(req.headers.authorization).toBe('Bearer tok-env');
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual({ name: 'alice' });
    expect(r.out).toMatch(/^api_key\s+ak_123$/m);
    expect(r.out).toMatch(/^api_secret\s+sk_secret$/m);
    expect(r.out).toMatch(/shown only once/);
    expect(r.out).toMatch(/^id\s+1$/m);
  });

  it('accepts the plural group name', async () => {
    const r = await cli(['accounts', 'list']);
    expect(r.code).toBe(0);
    expect(only().url).toBe('/admin/v1/accounts');
  });

  it('account list prints an aligned table with exact money values', async () => {
    const r = await cli(['account', 'list']);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ID\s+NAME\s+CREDITS\s+BANNED\s+RATE\/MIN\s+UNLIMITED\s+CREATED$/);
    expect(lines[1]).toContain('alice');
    expect(lines[2]).toContain('1000000000.123456');
    expect(lines[2]).toContain('2026-02-01T00:00:00.000Z');
    // Columns line up: each column starts at the same offset on every line.
    const nameCol = lines[0]!.indexOf('NAME');
    expect(lines[1]!.indexOf('alice')).toBe(nameCol);
    expect(lines[2]!.indexOf('bob')).toBe(nameCol);
    // Right-aligned numbers end where their header ends.
    const creditsEnd = lines[0]!.indexOf('CREDITS') + 'CREDITS'.length;
    expect(lines[1]!.indexOf('12.5') + '12.5'.length).toBe(creditsEnd);
    expect(lines[2]!.indexOf('1000000000.123456') + '1000000000.123456'.length).toBe(creditsEnd);
  });

  it('account list says so when there are none', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, accounts: [] } });
    const r = await cli(['account', 'list']);
    expect(r).toMatchObject({ code: 0, out: 'No accounts yet.\n' });
  });

  it('--json prints the body exactly as the server sent it', async () => {
    const raw = '{"ok":true,"accounts":[{"id":1,"credits":0.3}]}';
    fake.reply = () => ({ status: 200, body: raw });
    const r = await cli(['account', 'list', '--json']);
    expect(r).toEqual({ code: 0, out: raw + '\n', err: '' });
  });

  it('account list sends --limit and --cursor and prints the command for the next page', async () => {
    const r = await cli(['account', 'list', '--limit', '1']);
    expect(only().url).toBe('/admin/v1/accounts?limit=1');
    expect(r.out).toContain('alice');
    expect(r.out).not.toContain('bob');
    expect(r.out).toContain(
      '\nMore accounts follow. Next page: `credit-order-api account list --limit 1 --cursor 1` (or add --all for every page).\n',
    );
    fake.requests = [];
    const next = await cli(['account', 'list', '--limit', '1', '--cursor', '1']);
    expect(only().url).toBe('/admin/v1/accounts?limit=1&cursor=1');
    expect(next.out).toContain('bob');
    expect(next.out).not.toContain('Next page');
  });

  it('account list --all follows the cursors until null, in pages of 500 unless --limit says otherwise', async () => {
    const all = await cli(['account', 'list', '--all', '--limit', '1', '--json']);
    expect(fake.requests.map((q) => q.url)).toEqual(['/admin/v1/accounts?limit=1', '/admin/v1/accounts?limit=1&cursor=1']);
    expect(JSON.parse(all.out)).toEqual({ ok: true, accounts: ACCOUNTS, next_cursor: null });
    fake.requests = [];
    await cli(['account', 'list', '--all']);
    expect(only().url).toBe('/admin/v1/accounts?limit=500');
  });

  it('account list after the last account says so', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, accounts: [], next_cursor: null } });
    expect((await cli(['account', 'list', '--cursor', '22'])).out).toBe('No accounts after this cursor.\n');
  });

  it('account show prints key/value lines', async () => {
    const r = await cli(['account', 'show', '1']);
    expect(r.code).toBe(0);
    expect(only().method).toBe('GET');
    expect(r.out).toMatch(/^name\s+alice$/m);
    expect(r.out).toMatch(/^unlimited_expires\s+-$/m);
    expect(r.out).toMatch(/^banned\s+no$/m);
  });

  it('refuses a word that cannot be an account id before sending anything, so it cannot change the route', async () => {
    expect((await cli(['account', 'show', '../services'])).code).toBe(2);
    expect(fake.requests).toHaveLength(0);
  });

  it('account credits sends the amount as the exact decimal typed', async () => {
    const r = await cli(['account', 'credits', '1', '--amount', '0.3', '--reason', 'top-up']);
    expect(r.code).toBe(0);
    const req = only();
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/admin/v1/accounts/1/credits');
    expect(req.body).toBe('{"amount":0.3,"reason":"top-up"}');
    expect(r.out).toMatch(/^credits\s+12.8$/m);
  });

  it('keeps digits a binary float would lose, and drops leading zeros JSON forbids', async () => {
    await cli(['account', 'credits', '1', '--amount', '0099999999999.999999', '--reason', 'x']);
    expect(fake.requests[0]!.body).toBe('{"amount":99999999999.999999,"reason":"x"}');
  });

  it('accepts a negative amount written with a space or with =', async () => {
    await cli(['account', 'credits', '1', '--amount', '-5', '--reason', 'refund fix']);
    await cli(['account', 'credits', '1', '--amount=-0.25', '--reason', 'refund fix']);
    expect(fake.requests.map((r) => JSON.parse(r.body).amount)).toEqual([-5, -0.25]);
  });

  it.each([['1.2345678'], ['1e3'], ['12,5'], ['.5'], ['abc']])('refuses amount %s before sending anything', async (amount) => {
    const r = await cli(['account', 'credits', '1', '--amount', amount, '--reason', 'x']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error: --amount must be a decimal number with at most 6 decimal places/);
    expect(fake.requests).toHaveLength(0);
  });

  it('requires a reason for credits', async () => {
    const r = await cli(['account', 'credits', '1', '--amount', '5']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('error: account credits needs --reason.');
    expect(r.err).toContain('credit-order-api account credits --help');
    expect(fake.requests).toHaveLength(0);
  });

  it('account ban / unban patch banned', async () => {
    expect((await cli(['account', 'ban', '1'])).code).toBe(0);
    const unban = await cli(['account', 'unban', '1']);
    expect(fake.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['PATCH', '/admin/v1/accounts/1', '{"banned":true}'],
      ['PATCH', '/admin/v1/accounts/1', '{"banned":false}'],
    ]);
    expect(unban.out).toMatch(/^banned\s+no$/m);
  });

  it('account rate-limit patches rate_limit_per_minute as an integer', async () => {
    const r = await cli(['account', 'rate-limit', '1', '--per-minute', '100000000']);
    expect(r.code).toBe(0);
    expect(only().body).toBe('{"rate_limit_per_minute":100000000}');
    expect(r.out).toMatch(/^rate_limit_per_minute\s+100000000$/m);
  });

  it('account ban / unban / rate-limit send --reason in the PATCH body', async () => {
    await cli(['account', 'ban', '1', '--reason', 'chargeback #12']);
    await cli(['account', 'unban', '1', '--reason', 'resolved']);
    const r = await cli(['account', 'rate-limit', '1', '--per-minute', '600', '--reason', 'bulk reseller']);
    expect(r.code).toBe(0);
    expect(fake.requests.map((q) => [q.method, q.url, q.body])).toEqual([
      ['PATCH', '/admin/v1/accounts/1', '{"banned":true,"reason":"chargeback #12"}'],
      ['PATCH', '/admin/v1/accounts/1', '{"banned":false,"reason":"resolved"}'],
      ['PATCH', '/admin/v1/accounts/1', '{"rate_limit_per_minute":600,"reason":"bulk reseller"}'],
    ]);
  });

  it('an empty --reason is a usage error, not an empty string sent', async () => {
    const r = await cli(['account', 'ban', '1', '--reason', ' ']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('error: --reason must not be empty.');
    expect(fake.requests).toHaveLength(0);
  });

  it('account rate-limit refuses a non-integer', async () => {
    const r = await cli(['account', 'rate-limit', '1', '--per-minute', '1.5']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--per-minute must be a whole number/);
  });

  it('account rotate-secret shows the new secret once', async () => {
    const r = await cli(['account', 'rotate-secret', '1']);
    expect(r.code).toBe(0);
    expect(only()).toMatchObject({ method: 'POST', url: '/admin/v1/accounts/1/rotate-secret', body: '' });
    expect(r.out).toMatch(/^api_secret\s+sk_new$/m);
    expect(r.out).toMatch(/shown only once/);
  });

  it('account v2-key issues the API v2 key and shows it once; revoke-v2-key revokes it', async () => {
    const r = await cli(['account', 'v2-key', '1']);
    expect(r.code).toBe(0);
    expect(only()).toMatchObject({ method: 'POST', url: '/admin/v1/accounts/1/v2-key', body: '' });
    expect(r.out).toMatch(/^v2_key\s+0123456789abcdef0123456789abcdef$/m);
    expect(r.out).toMatch(/shown only once/);
    fake.requests.length = 0;
    const revoked = await cli(['account', 'revoke-v2-key', '1']);
    expect(revoked.code).toBe(0);
    expect(only()).toMatchObject({ method: 'DELETE', url: '/admin/v1/accounts/1/v2-key' });
    expect(revoked.out).toContain('API v2 key revoked for account 1.');
  });
});

describe('service commands', () => {
  it('service add sends every field, numbers as numbers, enabled by default', async () => {
    const r = await cli(['service', 'add', '--platform', 'telegram', '--name', 'Members', '--rate', '0.5', '--min', '10', '--max', '1000']);
    expect(r.code).toBe(0);
    expect(only()).toMatchObject({ method: 'POST', url: '/admin/v1/services' });
    expect(JSON.parse(fake.requests[0]!.body)).toEqual({ platform: 'telegram', name: 'Members', rate: 0.5, min: 10, max: 1000, enabled: true });
    expect(r.out).toMatch(/^rate\s+0.5$/m);
  });

  it('service add --disabled creates it disabled', async () => {
    await cli(['services', 'add', '--disabled', '--platform', 'p', '--name', 'n', '--rate', '1', '--min', '1', '--max', '2']);
    expect(JSON.parse(only().body).enabled).toBe(false);
  });

  it('service add names the first missing required option', async () => {
    const r = await cli(['service', 'add', '--platform', 'p', '--name', 'n', '--rate', '1', '--min', '1']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('service add needs --max.');
  });

  it('service update sends only the fields given', async () => {
    const r = await cli(['service', 'update', '3', '--rate', '0.75', '--max', '500']);
    expect(r.code).toBe(0);
    expect(only()).toMatchObject({ method: 'PATCH', url: '/admin/v1/services/3', body: '{"rate":0.75,"max":500}' });
  });

  it('service update with nothing to change is a usage error', async () => {
    const r = await cli(['service', 'update', '3']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/needs at least one of --platform/);
    expect(fake.requests).toHaveLength(0);
  });

  it('service enable / disable patch enabled', async () => {
    await cli(['service', 'enable', '3']);
    await cli(['service', 'disable', '3']);
    expect(fake.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['PATCH', '/admin/v1/services/3', '{"enabled":true}'],
      ['PATCH', '/admin/v1/services/3', '{"enabled":false}'],
    ]);
  });

  it('service add / update / enable / disable send --reason', async () => {
    await cli(['service', 'add', '--platform', 'p', '--name', 'n', '--rate', '1', '--min', '1', '--max', '2', '--reason', 'launch']);
    await cli(['service', 'update', '3', '--rate', '0.6', '--reason', 'supplier price up']);
    await cli(['service', 'enable', '3', '--reason', 'back in stock']);
    await cli(['service', 'disable', '3', '--reason', 'supplier down']);
    expect(fake.requests.map((q) => [q.method, q.url, q.body])).toEqual([
      ['POST', '/admin/v1/services', '{"platform":"p","name":"n","rate":1,"min":1,"max":2,"enabled":true,"reason":"launch"}'],
      ['PATCH', '/admin/v1/services/3', '{"rate":0.6,"reason":"supplier price up"}'],
      ['PATCH', '/admin/v1/services/3', '{"enabled":true,"reason":"back in stock"}'],
      ['PATCH', '/admin/v1/services/3', '{"enabled":false,"reason":"supplier down"}'],
    ]);
  });

  it('service update with only a reason still has nothing to change', async () => {
    const r = await cli(['service', 'update', '3', '--reason', 'why not']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/needs at least one of --platform/);
    expect(fake.requests).toHaveLength(0);
  });

  it('service list shows disabled services too', async () => {
    const r = await cli(['service', 'list']);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\s*ID\s+PLATFORM\s+NAME\s+RATE\s+RATE\/1000\s+MIN\s+MAX\s+ENABLED\s+TYPE\s+REFILL\s+CANCEL\s+DRIPFEED\s+AVG TIME$/);
    expect(lines[2]).toMatch(/Views\s+0\.001\s+1\s+100\s+100000\s+no\b/);
  });
});

describe('health', () => {
  it('needs no token and sends none', async () => {
    const r = await cli(['health'], { ADMIN_URL: fake.baseUrl, DATA_DIR: '/nonexistent-dir-for-test' });
    expect(r).toMatchObject({ code: 0, out: 'The server is up.\n' });
    expect(only().headers.authorization).toBeUndefined();
  });
});

describe('connection and token', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-test-'));
    await writeFile(join(dir, 'admin-token'), '  tok-file\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--token wins over ADMIN_TOKEN', async () => {
    await cli(['account', 'list', '--token', 'tok-flag']);
    expect(only().headers.authorization).toBe('Bearer tok-flag');
  });

  it('falls back to $DATA_DIR/admin-token, trimmed', async () => {
    const r = await cli(['account', 'list'], { ADMIN_URL: fake.baseUrl, DATA_DIR: dir });
    expect(r.code).toBe(0);
    expect(only().headers.authorization).toBe('Bearer tok-file');
  });

  it('says how to get a token when there is none', async () => {
    const r = await cli(['account', 'list'], { ADMIN_URL: fake.baseUrl, DATA_DIR: join(dir, 'missing') });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: no admin token: pass --token, set ADMIN_TOKEN, or start the server once/);
    expect(r.err).toContain(join(dir, 'missing', 'admin-token'));
    expect(fake.requests).toHaveLength(0);
  });

  it('builds the default URL from ADMIN_HOST and ADMIN_PORT', async () => {
    const port = new URL(fake.baseUrl).port;
    const r = await cli(['account', 'list'], { ADMIN_HOST: '127.0.0.1', ADMIN_PORT: port, ADMIN_TOKEN: 't' });
    expect(r.code).toBe(0);
    expect(fake.requests).toHaveLength(1);
  });

  it('--admin-url wins over ADMIN_URL and tolerates a trailing slash', async () => {
    const r = await cli(['account', 'list', '--admin-url', `${fake.baseUrl}/`], { ADMIN_URL: 'http://127.0.0.1:1', ADMIN_TOKEN: 't' });
    expect(r.code).toBe(0);
    expect(only().url).toBe('/admin/v1/accounts');
  });

  it('refuses a malformed admin URL as a usage error', async () => {
    const r = await cli(['account', 'list', '--admin-url', 'not a url']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/is not a valid URL/);
  });

  it('explains an unreachable server', async () => {
    // A port that was just free: listen, note it, close.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const url = `http://127.0.0.1:${port}`;
    const r = await cli(['account', 'list'], { ADMIN_URL: url, ADMIN_TOKEN: 't' });
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `error: the server is not reachable at ${url} (connection refused). Start it with \`npm start\`, or point the CLI at it with --admin-url or ADMIN_URL.\n`,
    );
  });
});

describe('server errors', () => {
  it('renders {ok:false,error,message} as one sentence and exits 1', async () => {
    fake.reply = () => ({
      status: 400,
      body: { ok: false, error: 'VALIDATION', message: 'amount must be a decimal number with at most 6 decimal places.' },
    });
    const r = await cli(['account', 'credits', '1', '--amount', '1', '--reason', 'x']);
    expect(r).toEqual({
      code: 1,
      out: '',
      err: 'error: VALIDATION: amount must be a decimal number with at most 6 decimal places.\n',
    });
  });

  it('reports a 401 from a wrong token the same way', async () => {
    fake.reply = () => ({ status: 401, body: { ok: false, error: 'AUTH', message: 'The admin token is missing or wrong.' } });
    const r = await cli(['account', 'list', '--json']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('error: AUTH: The admin token is missing or wrong.\n');
    expect(r.out).toBe('');
  });

  it('handles an error without the contract body', async () => {
    fake.reply = () => ({ status: 500, body: {} });
    const r = await cli(['account', 'list']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: HTTP 500: /);
  });

  it('handles a body that is not JSON', async () => {
    fake.reply = () => ({ status: 200, body: '<html>proxy</html>' });
    const r = await cli(['account', 'list']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/answered HTTP 200 with something that is not JSON/);
  });

  it('escapes control characters that come back in names', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, account: { ...ACCOUNT, name: 'evil\u001b[2J\nname' } } });
    const r = await cli(['account', 'show', '1']);
    expect(r.out).toMatch(/^name\s+evil\\u001b\[2J\\nname$/m);
  });
});

describe('usage', () => {
  it('--help lists every command and exits 0 without a request', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const command of ['account create --name NAME', 'account list', 'account show ID', 'account credits ID --amount AMOUNT --reason TEXT', 'account ban ID', 'account unban ID', 'account rate-limit ID --per-minute N', 'account rotate-secret ID', 'service add --platform PLATFORM', 'service update ID [options]', 'service enable ID', 'service disable ID', 'service list', 'health', 'account plan ID --months N', 'account forcejoin ID [options]', 'order list [options]', 'order show ID', 'order set-status ID --status STATUS', 'order place --account ID --service N --target URL [options]', 'snapshot --out DIR', 'verify', 'stats']) {
      expect(r.out).toContain(command);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('no arguments prints help on stderr and exits 2', async () => {
    const r = await cli([]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('Commands:');
  });

  it('command --help shows its options, even before required ones are given', async () => {
    const r = await cli(['account', 'credits', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: credit-order-api account credits ID --amount AMOUNT --reason TEXT');
    expect(r.out).toMatch(/--reason TEXT\s+why, recorded with the change \(required\)/);
    expect(r.out).toContain('--admin-url URL');
  });

  it('group --help lists the group', async () => {
    const r = await cli(['services', '-h']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('service disable ID');
    expect(r.out).not.toContain('account create');
  });

  it('a group without a command lists what it accepts', async () => {
    const r = await cli(['account']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('error: account needs a command: create, list, show, statement, credits, ban, unban, rate-limit, rotate-secret, v2-key, revoke-v2-key, plan, forcejoin.');
  });

  it('unknown commands and options exit 2', async () => {
    expect((await cli(['frobnicate'])).err).toContain('error: unknown command "frobnicate".');
    expect((await cli(['account', 'frob'])).err).toMatch(/unknown account command "frob"/);
    const r = await cli(['account', 'list', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error: Unknown option '--bogus'.");
    expect(fake.requests).toHaveLength(0);
  });

  it('options of another command are refused', async () => {
    const r = await cli(['account', 'list', '--rate', '1']);
    expect(r.code).toBe(2);
  });

  it('wrong positional counts exit 2', async () => {
    expect(await cli(['account', 'show'])).toMatchObject({ code: 2 });
    expect((await cli(['account', 'show'])).err).toContain('account show needs ID.');
    expect((await cli(['account', 'show', 'a', 'b'])).err).toContain('account show does not take "b".');
  });

  it('options may come before the command words', async () => {
    const r = await cli(['--amount', '5', '--reason', 'x', 'account', 'credits', '1']);
    expect(r.code).toBe(0);
    expect(only().body).toBe('{"amount":5,"reason":"x"}');
  });
});
