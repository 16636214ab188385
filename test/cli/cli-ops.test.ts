import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUT_S } from '../../src/cli/limits.js';
import { COMMANDS, findCommand } from '../../src/cli/commands.js';
import { ORDER, ORDER_ID, ORDERS, REPORT, onlyRequest, runAgainst, useFakeAdmin } from './fake-admin.js';
import { silentServer } from '../helpers/silent-server.js';

/*
 * The processing and operations commands against the fake admin API
 * (fake-admin.ts): orders, account plan / forcejoin, snapshot, verify, stats.
 */

const fake = useFakeAdmin();

function cli(...args: string[]) {
  return runAgainst(fake, args);
}

function only() {
  return onlyRequest(fake);
}

function conflict(message: string) {
  return () => ({ status: 409, body: { ok: false, error: 'CONFLICT', message } });
}

describe('order list', () => {
  it('asks for the server defaults and prints an aligned table with exact money', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, orders: ORDERS, next_cursor: null } });
    const r = await cli('order', 'list');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(only()).toMatchObject({ method: 'GET', url: '/admin/v1/orders', body: '' });
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^ID\s+NUMBER\s+ACCOUNT\s+SERVICE\s+TYPE\s+QUANTITY\s+RUNS\s+CHARGE\s+DEBIT\s+STATUS\s+REMAINS\s+CHANNEL\s+PLAN\s+CREATED\s+TARGET$/);
    expect(lines[1]).toMatch(new RegExp(`^${ORDER_ID}\\s+41\\s+7\\s+3\\s+Default\\s+100\\s+-\\s+50\\s+50\\s+pending\\s+100\\s+api\\s+no\\s+2025-01-02T03:04:05.000Z\\s+https://t.me/somechannel$`));
    expect(lines[2]).toMatch(/\s0\s+pending\s+10\s+panel\s+yes\s/);
    // Right-aligned money ends under its header's last letter.
    const chargeEnd = lines[0]!.indexOf('CHARGE') + 'CHARGE'.length;
    expect(lines[3]!.indexOf('1000000000.123456') + '1000000000.123456'.length).toBe(chargeEnd);
    expect(r.out).not.toContain('Next page');
  });

  it('REMAINS shows what the customer sees (remains_shown), whatever the status', async () => {
    const inProgress = { ...ORDER, status: 'in_progress', remains: null, progress_remains: 400, remains_shown: 400 };
    const partial = { ...ORDER, id: 'AbCdEfGhIjKlMnOpQrSt_9', status: 'partial', remains: 30, progress_remains: 400, remains_shown: 30 };
    fake.reply = () => ({ status: 200, body: { ok: true, orders: [inProgress, partial], next_cursor: null } });
    const lines = (await cli('order', 'list', '--status', 'in_progress')).out.trimEnd().split('\n');
    expect(lines[1]).toMatch(/\sin_progress\s+400\s+api\s/);
    expect(lines[2]).toMatch(/\spartial\s+30\s+api\s/);
  });

  it('accepts the plural group name the way the brief spells it', async () => {
    expect((await cli('orders', 'list')).code).toBe(0);
    expect(only().url).toBe('/admin/v1/orders');
  });

  it('sends --status, --limit and --cursor as an encoded query', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, orders: [], next_cursor: null } });
    const r = await cli('order', 'list', '--status', 'in_progress', '--limit', '050', '--cursor', 'WzE3+/=&x');
    expect(r.code).toBe(0);
    const url = new URL(only().url, 'http://x');
    expect(url.pathname).toBe('/admin/v1/orders');
    expect([...url.searchParams]).toEqual([
      ['status', 'in_progress'],
      ['limit', '50'],
      ['cursor', 'WzE3+/=&x'],
    ]);
    expect(r.out).toBe('No in_progress orders after this cursor.\n');
  });

  it('says so when a status has no orders', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, orders: [], next_cursor: null } });
    expect((await cli('order', 'list')).out).toBe('No pending orders.\n');
    expect((await cli('order', 'list', '--status', 'canceled')).out).toBe('No canceled orders.\n');
  });

  it('when there is a next page, prints the command that fetches it', async () => {
    const r = await cli('order', 'list', '--limit', '2');
    expect(r.code).toBe(0);
    expect(only().url).toBe('/admin/v1/orders?limit=2');
    const lines = r.out.trimEnd().split('\n');
    expect(lines.slice(1, 3).map((l) => l.split(/\s+/)[0])).toEqual([ORDERS[0]!.id, ORDERS[1]!.id]);
    expect(r.out).toContain(
      '\nMore pending orders follow. Next page: `credit-order-api order list --status pending --limit 2 --cursor c2` (or add --all for every page).\n',
    );
  });

  it('--json prints one page exactly as sent, cursor included', async () => {
    const raw = `{"ok":true,"orders":[{"id":"${ORDER_ID}","charge":0.30}],"next_cursor":"c1"}`;
    fake.reply = () => ({ status: 200, body: raw });
    const r = await cli('order', 'list', '--json');
    expect(r).toEqual({ code: 0, out: raw + '\n', err: '' });
    expect(fake.requests).toHaveLength(1);
  });

  it('--all follows the cursors until null, in pages of 500 unless --limit says otherwise', async () => {
    const all = await cli('order', 'list', '--all');
    expect(all.code).toBe(0);
    expect(only().url).toBe('/admin/v1/orders?limit=500');
    expect(all.out.trimEnd().split('\n')).toHaveLength(4);

    fake.requests = [];
    const paged = await cli('order', 'list', '--all', '--limit', '1', '--status', 'pending');
    expect(paged.code).toBe(0);
    expect(fake.requests.map((q) => q.url)).toEqual([
      '/admin/v1/orders?status=pending&limit=1',
      '/admin/v1/orders?status=pending&limit=1&cursor=c1',
      '/admin/v1/orders?status=pending&limit=1&cursor=c2',
    ]);
    const ids = paged.out.trimEnd().split('\n').slice(1).map((l) => l.split(/\s+/)[0]);
    expect(ids).toEqual(ORDERS.map((o) => o.id));
    expect(paged.out).not.toContain('Next page');
  });

  it('--all starts from --cursor when given', async () => {
    await cli('order', 'list', '--all', '--limit', '5', '--cursor', 'c2');
    expect(only().url).toBe('/admin/v1/orders?limit=5&cursor=c2');
  });

  it('--all --json joins the pages from their own text, so no number is rewritten', async () => {
    const pages: Record<string, string> = {
      none: '{"ok":true,"orders":[{"id":"a","charge":0.30,"target":"https://x.test/?q=\\"],[{"}],"next_cursor":"c1"}',
      c1: '{"ok":true, "orders" : [ ] , "next_cursor":"c2"}',
      c2: '{"ok":true,"orders":[{"id":"b","charge":1000000000.123456},{"id":"c","charge":1.10}],"next_cursor":null}',
    };
    fake.reply = (req) => ({ status: 200, body: pages[new URL(req.url, 'http://x').searchParams.get('cursor') ?? 'none']! });
    const r = await cli('order', 'list', '--all', '--json');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      '{"ok":true,"orders":[{"id":"a","charge":0.30,"target":"https://x.test/?q=\\"],[{"},' +
        '{"id":"b","charge":1000000000.123456},{"id":"c","charge":1.10}],"next_cursor":null}\n',
    );
    expect(JSON.parse(r.out).orders.map((o: { id: string }) => o.id)).toEqual(['a', 'b', 'c']);
  });

  it('--all stops with an error if the server hands back a cursor it already gave', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, orders: [ORDER], next_cursor: 'same' } });
    const r = await cli('order', 'list', '--all');
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe('error: the server returned the cursor same twice; stopping rather than looping forever.\n');
    expect(fake.requests).toHaveLength(2);
  });

  it('--all reports a failing page like any refusal', async () => {
    fake.reply = (req) =>
      req.url.includes('cursor=')
        ? { status: 400, body: { ok: false, error: 'VALIDATION', message: 'cursor is not one this server returned; start without it.' } }
        : { status: 200, body: { ok: true, orders: [ORDER], next_cursor: 'c1' } };
    const r = await cli('order', 'list', '--all');
    expect(r).toEqual({ code: 1, out: '', err: 'error: VALIDATION: cursor is not one this server returned; start without it.\n' });
  });

  it('refuses a bad --limit before sending anything', async () => {
    const r = await cli('order', 'list', '--limit', 'ten');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error: --limit must be a whole number/);
    expect(fake.requests).toHaveLength(0);
  });

  it('shows the server refusing an unknown status as one sentence', async () => {
    fake.reply = () => ({
      status: 400,
      body: { ok: false, error: 'VALIDATION', message: 'status must be one of pending, processing, in_progress, completed, partial, canceled.' },
    });
    const r = await cli('order', 'list', '--status', 'done');
    expect(r).toEqual({
      code: 1,
      out: '',
      err: 'error: VALIDATION: status must be one of pending, processing, in_progress, completed, partial, canceled.\n',
    });
  });
});

describe('filtered listings (cancel requests, refills): a short or empty page with a cursor is not the end', () => {
  /** The server examines a bounded number of entries per request: here a page with nothing, then one with an order. */
  const pages: Record<string, string> = {
    none: '{"ok":true,"orders":[],"next_cursor":"k1"}',
    k1: `{"ok":true,"orders":[{"id":"${ORDER_ID}","account":7,"charge":0.30}],"next_cursor":"k2"}`,
    k2: '{"ok":true,"orders":[],"next_cursor":null}',
  };
  const paged = (req: { url: string }) => ({ status: 200, body: pages[new URL(req.url, 'http://x').searchParams.get('cursor') ?? 'none']! });

  it('order cancel-requests prints an empty page as a page, with the next-page command, not as "none"', async () => {
    fake.reply = paged;
    const r = await cli('order', 'cancel-requests');
    expect(only().url).toBe('/admin/v1/orders?cancel_requested=true');
    expect(r.out).toBe(
      'No open cancel requests on this page.\n\nThe server stopped at its scan limit before the page was full; more open cancel requests may follow. ' +
        'Next page: `credit-order-api order cancel-requests --cursor k1` (or add --all for every page).\n',
    );
    fake.requests = [];
    const last = await cli('order', 'cancel-requests', '--cursor', 'k2');
    expect(last.out).toBe('No open cancel requests after this cursor.\n');
  });

  it('order cancel-requests --all follows the cursors through empty pages', async () => {
    fake.reply = paged;
    const r = await cli('order', 'cancel-requests', '--all', '--json');
    expect(fake.requests.map((q) => q.url)).toEqual([
      '/admin/v1/orders?cancel_requested=true&limit=500',
      '/admin/v1/orders?cancel_requested=true&limit=500&cursor=k1',
      '/admin/v1/orders?cancel_requested=true&limit=500&cursor=k2',
    ]);
    expect(r.out).toBe(`{"ok":true,"orders":[{"id":"${ORDER_ID}","account":7,"charge":0.30}],"next_cursor":null}\n`);
  });

  it('refill list --all follows the cursors, keeping --status on every page', async () => {
    const refills: Record<string, unknown> = {
      none: { ok: true, refills: [], next_cursor: '4' },
      '4': { ok: true, refills: [{ refill: 9, order: ORDER_ID, account: 7, status: 'in_progress', created_at: '2025-01-02T03:04:05.000Z' }], next_cursor: null },
    };
    fake.reply = (req) => ({ status: 200, body: refills[new URL(req.url, 'http://x').searchParams.get('cursor') ?? 'none'] });
    const r = await cli('refill', 'list', '--status', 'in_progress', '--all');
    expect(fake.requests.map((q) => q.url)).toEqual(['/admin/v1/refills?status=in_progress&limit=500', '/admin/v1/refills?status=in_progress&limit=500&cursor=4']);
    expect(r.out).toMatch(/^REFILL\s+ORDER\s+ACCOUNT\s+STATUS\s+CREATED\n\s*9\s/);
    fake.requests = [];
    const page = await cli('refill', 'list', '--status', 'in_progress', '--limit', '20');
    expect(page.out).toContain('No in_progress refills on this page.\n');
    expect(page.out).toContain('Next page: `credit-order-api refill list --status in_progress --limit 20 --cursor 4`');
  });
});

describe('order show', () => {
  it('gets the order and prints every field', async () => {
    const r = await cli('order', 'show', ORDER_ID);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(only()).toMatchObject({ method: 'GET', url: `/admin/v1/orders/${ORDER_ID}` });
    expect(r.out).toMatch(new RegExp(`^id\\s+${ORDER_ID}$`, 'm'));
    expect(r.out).toMatch(/^rate\s+0\.5$/m);
    expect(r.out).toMatch(/^debit\s+50$/m);
    expect(r.out).toMatch(/^remains\s+-$/m);
    expect(r.out).toMatch(/^channel\s+api$/m);
    expect(r.out).toMatch(/^unlimited\s+no$/m);
  });

  it('--json prints the body as sent', async () => {
    const r = await cli('orders', 'show', ORDER_ID, '--json');
    expect(JSON.parse(r.out)).toEqual({ ok: true, order: ORDER });
  });

  it('an unknown order exits 1 with the server sentence', async () => {
    fake.reply = () => ({ status: 404, body: { ok: false, error: 'NOT_FOUND', message: `No order with id ${ORDER_ID}.` } });
    expect(await cli('order', 'show', ORDER_ID)).toEqual({ code: 1, out: '', err: `error: NOT_FOUND: No order with id ${ORDER_ID}.\n` });
  });

  it('refuses a word that cannot be an order id or number before sending anything, so it cannot change the route', async () => {
    expect((await cli('order', 'show', 'a/../../accounts')).code).toBe(2);
    expect(fake.requests).toHaveLength(0);
  });

  it('needs the id', async () => {
    const r = await cli('order', 'show');
    expect(r.code).toBe(2);
    expect(r.err).toContain('error: order show needs ID.');
  });
});

describe('order set-status', () => {
  it('posts the status and prints the new status, the refund and the credits', async () => {
    const r = await cli('order', 'set-status', ORDER_ID, '--status', 'canceled');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(only()).toMatchObject({ method: 'POST', url: `/admin/v1/orders/${ORDER_ID}/status`, body: '{"status":"canceled"}' });
    expect(r.out).toBe(
      `Order ${ORDER_ID} is now canceled.\n` +
        `order    ${ORDER_ID}\n` +
        'account  7\n' +
        'status   canceled\n' +
        'refund   50\n' +
        'credits  62.5\n',
    );
  });

  it('sends --remains as a number and --reason, and shows the remains', async () => {
    const r = await cli('orders', 'set-status', ORDER_ID, '--status', 'partial', '--remains', '4', '--reason', 'target went private');
    expect(r.code).toBe(0);
    expect(only().body).toBe('{"status":"partial","remains":4,"reason":"target went private"}');
    expect(r.out).toMatch(/^remains\s+4$/m);
    expect(r.out).toMatch(/^refund\s+2$/m);
  });

  it('--json prints the body as sent', async () => {
    const raw = `{"ok":true,"order":{"id":"${ORDER_ID}","status":"completed"},"refund":0,"credits":12.50}`;
    fake.reply = () => ({ status: 200, body: raw });
    expect(await cli('order', 'set-status', ORDER_ID, '--status', 'completed', '--json')).toEqual({ code: 0, out: raw + '\n', err: '' });
  });

  it('an illegal move (409 CONFLICT) exits 1 with the server sentence', async () => {
    fake.reply = conflict(`Order ${ORDER_ID} is already canceled, a final state; it cannot move again.`);
    const r = await cli('order', 'set-status', ORDER_ID, '--status', 'completed');
    expect(r).toEqual({
      code: 1,
      out: '',
      err: `error: CONFLICT: Order ${ORDER_ID} is already canceled, a final state; it cannot move again.\n`,
    });
  });

  it('needs --status and a whole --remains, checked before sending', async () => {
    const missing = await cli('order', 'set-status', ORDER_ID);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('error: order set-status needs --status.');
    const bad = await cli('order', 'set-status', ORDER_ID, '--status', 'partial', '--remains', '-1');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--remains must be a whole number/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('order place', () => {
  it('posts a panel order for the account and prints the order, charge and balance', async () => {
    const r = await cli('order', 'place', '--account', '1', '--service', '3', '--target', 'https://t.me/somechannel', '--quantity', '100');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(only()).toMatchObject({
      method: 'POST',
      url: '/admin/v1/accounts/1/orders',
      body: '{"service":3,"target":"https://t.me/somechannel","quantity":100}',
    });
    expect(r.out).toBe(`Order 41 placed for account 1.\norder    ${ORDER_ID}\nnumber   41\naccount  1\nstatus   pending\ncharge   50\nbalance  7.5\n`);
  });

  it('--json prints the 201 body as sent', async () => {
    const r = await cli('orders', 'place', '--account', '1', '--service', '3', '--target', 'https://x.test/p', '--quantity', '10', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ ok: true, order: ORDER_ID, number: 41, charge: 50, status: 'pending', balance: 7.5 });
  });

  it('a business refusal (402 BALANCE) exits 1 with the server sentence', async () => {
    fake.reply = () => ({ status: 402, body: { ok: false, error: 'BALANCE', message: 'The order costs 50 credits; the wallet has 7.5.' } });
    const r = await cli('order', 'place', '--account', '1', '--service', '3', '--target', 'https://x.test/p', '--quantity', '100');
    expect(r).toEqual({ code: 1, out: '', err: 'error: BALANCE: The order costs 50 credits; the wallet has 7.5.\n' });
  });

  it('checks every option before sending', async () => {
    const missing = await cli('order', 'place', '--account', '1', '--service', '3', '--quantity', '100');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('error: order place needs --target.');
    const fraction = await cli('order', 'place', '--account', '1', '--service', '3', '--target', 'https://x.test', '--quantity', '1.5');
    expect(fraction.code).toBe(2);
    expect(fraction.err).toMatch(/--quantity must be a whole number/);
    const service = await cli('order', 'place', '--account', '1', '--service', 'x', '--target', 'https://x.test', '--quantity', '1');
    expect(service.err).toMatch(/--service must be a whole number/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('account plan', () => {
  it('posts the months and reason, and prints the expiry and the price in INR', async () => {
    const r = await cli('account', 'plan', '1', '--months', '2', '--reason', 'invoice 77');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(only()).toMatchObject({ method: 'POST', url: '/admin/v1/accounts/1/plan', body: '{"months":2,"reason":"invoice 77"}' });
    expect(r.out).toBe('Unlimited plan granted.\naccount  1\nexpires  2025-03-01T00:00:00.000Z\nprice    19998 INR\n');
  });

  it('leaves the reason out when none is given; --json prints the body', async () => {
    const r = await cli('account', 'plan', '1', '--months', '1', '--json');
    expect(only().body).toBe('{"months":1}');
    expect(JSON.parse(r.out).price_inr).toBe(19998);
  });

  it('needs whole --months; the server range error is shown as sent', async () => {
    expect((await cli('account', 'plan', '1')).err).toContain('error: account plan needs --months.');
    expect((await cli('account', 'plan', '1', '--months', '1.5')).code).toBe(2);
    expect(fake.requests).toHaveLength(0);
    fake.reply = () => ({ status: 400, body: { ok: false, error: 'VALIDATION', message: 'months must be an integer from 1 to 120.' } });
    expect(await cli('account', 'plan', '1', '--months', '0')).toEqual({
      code: 1,
      out: '',
      err: 'error: VALIDATION: months must be an integer from 1 to 120.\n',
    });
  });
});

describe('account forcejoin', () => {
  it('sends only what is given, the user id as a number', async () => {
    const r = await cli('account', 'forcejoin', '1', '--telegram-user-id', '123456789', '--verified', '--not-exempt', '--reason', 'checked by hand');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(only()).toMatchObject({
      method: 'POST',
      url: '/admin/v1/accounts/1/forcejoin',
      body: '{"telegram_user_id":123456789,"verified":true,"exempt":false,"reason":"checked by hand"}',
    });
    expect(r.out).toMatch(/^telegram_user_id\s+123456789$/m);
    expect(r.out).toMatch(/^forcejoin_verified\s+yes$/m);
    expect(r.out).toMatch(/^forcejoin_exempt\s+no$/m);
  });

  it('--unlink sends null; --exempt / --not-verified alone send only that', async () => {
    await cli('account', 'forcejoin', '1', '--unlink');
    await cli('account', 'forcejoin', '1', '--exempt');
    await cli('account', 'forcejoin', '1', '--not-verified');
    expect(fake.requests.map((q) => q.body)).toEqual(['{"telegram_user_id":null}', '{"exempt":true}', '{"verified":false}']);
  });

  it.each([
    [['--telegram-user-id', '5', '--unlink'], '--telegram-user-id and --unlink cannot be used together.'],
    [['--verified', '--not-verified'], '--verified and --not-verified cannot be used together.'],
    [['--exempt', '--not-exempt'], '--exempt and --not-exempt cannot be used together.'],
    [['--reason', 'x'], 'account forcejoin needs at least one of --telegram-user-id, --unlink'],
    [[], 'account forcejoin needs at least one of'],
  ])('refuses %j before sending', async (options, message) => {
    const r = await cli('account', 'forcejoin', '1', ...options);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`error: ${message}`);
    expect(fake.requests).toHaveLength(0);
  });

  it('--json prints the body as sent', async () => {
    const r = await cli('account', 'forcejoin', '1', '--exempt', '--json');
    expect(JSON.parse(r.out).account.forcejoin_exempt).toBe(true);
  });
});

describe('snapshot', () => {
  it('sends the directory as an absolute path resolved against the current directory', async () => {
    const r = await cli('snapshot', '--out', 'snaps/2025-01-02');
    expect(r).toMatchObject({ code: 0, err: '' });
    const req = only();
    expect(req).toMatchObject({ method: 'POST', url: '/admin/v1/snapshot' });
    expect(JSON.parse(req.body)).toEqual({ out: resolve(process.cwd(), 'snaps/2025-01-02') });
    expect(r.out).toBe(
      'Snapshot written and verified.\n' +
        `path      ${resolve('snaps/2025-01-02')}\n` +
        'size      1572864 bytes (1.5 MiB)\n' +
        'events    42\n' +
        'verified  yes\n',
    );
  });

  it('keeps an absolute --out as it is', async () => {
    await cli('snapshot', '--out', '/var/backups/snap1');
    expect(JSON.parse(only().body)).toEqual({ out: '/var/backups/snap1' });
  });

  it('--json prints the body as sent', async () => {
    const r = await cli('snapshot', '--out', '/tmp/s', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).snapshot).toMatchObject({ path: '/tmp/s', bytes: 1572864, events: 42, verify: { ok: true } });
  });

  it('a copy that does not verify exits 1 even on HTTP 200', async () => {
    fake.reply = () => ({
      status: 200,
      body: {
        ok: true,
        snapshot: { path: '/tmp/s', bytes: 100, events: 3, verify: { ...REPORT, ok: false, first_broken: 'event 3: balance went negative.' } },
      },
    });
    const r = await cli('snapshot', '--out', '/tmp/s');
    expect(r.code).toBe(1);
    expect(r.out).toContain('Snapshot written, but it does NOT verify.');
    expect(r.out).toMatch(/^verified\s+no: event 3: balance went negative\.$/m);
    expect(r.err).toBe('error: the snapshot at /tmp/s does not verify: event 3: balance went negative.\n');
  });

  it('a refusal (directory not empty) exits 1 with the server sentence', async () => {
    fake.reply = () => ({ status: 400, body: { ok: false, error: 'VALIDATION', message: 'The snapshot directory /tmp/s is not empty.' } });
    expect(await cli('snapshot', '--out', '/tmp/s')).toEqual({ code: 1, out: '', err: 'error: VALIDATION: The snapshot directory /tmp/s is not empty.\n' });
  });

  it('needs --out', async () => {
    const r = await cli('snapshot');
    expect(r.code).toBe(2);
    expect(r.err).toContain('error: snapshot needs --out.');
    expect(r.err).toContain('credit-order-api snapshot --help');
  });
});

describe('verify', () => {
  it('prints the counts and totals of a sound ledger and exits 0', async () => {
    const r = await cli('verify');
    expect(only()).toMatchObject({ method: 'GET', url: '/admin/v1/verify' });
    expect(r).toEqual({
      code: 0,
      err: '',
      out:
        'Ledger verified: every invariant holds.\n' +
        'events            42\n' +
        'accounts          2\n' +
        'orders            3\n' +
        'idempotency_keys  1\n' +
        'credited          1000.5\n' +
        'debited           55\n' +
        'refunded          0.25\n',
    });
  });

  const broken = {
    status: 409,
    body: {
      ok: false,
      error: 'LEDGER',
      message: 'Event 17 (order.status): the refund is larger than the order charge.',
      report: { ...REPORT, ok: false, first_broken: 'Event 17 (order.status): the refund is larger than the order charge.' },
    },
  };

  it('on a broken ledger (409 LEDGER) prints the report, then the first broken invariant, and exits 1', async () => {
    fake.reply = () => broken;
    const r = await cli('verify');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^The ledger is BROKEN\./);
    expect(r.out).toMatch(/^events\s+42$/m);
    expect(r.out).toMatch(/^refunded\s+0\.25$/m);
    expect(r.err).toBe('error: LEDGER: Event 17 (order.status): the refund is larger than the order charge.\n');
  });

  it('--json prints the body as sent in both cases; a broken ledger still exits 1', async () => {
    const ok = await cli('verify', '--json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toEqual({ ok: true, report: REPORT });

    fake.reply = () => broken;
    const bad = await cli('verify', '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toEqual(broken.body);
    expect(bad.err).toMatch(/^error: LEDGER: Event 17/);
  });

  it('a report with ok:false on HTTP 200 is still a failure', async () => {
    fake.reply = () => ({ status: 200, body: { ok: true, report: { ...REPORT, ok: false, first_broken: 'Event 2: sequence gap.' } } });
    const r = await cli('verify');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^The ledger is BROKEN\./);
    expect(r.err).toBe('error: LEDGER: Event 2: sequence gap.\n');
  });

  it('other refusals print nothing on stdout', async () => {
    fake.reply = () => ({ status: 401, body: { ok: false, error: 'AUTH', message: 'Send the admin token as Authorization: Bearer <token>.' } });
    expect(await cli('verify', '--json')).toEqual({ code: 1, out: '', err: 'error: AUTH: Send the admin token as Authorization: Bearer <token>.\n' });
  });

  it('takes no arguments', async () => {
    expect((await cli('verify', 'now')).err).toContain('error: verify does not take "now".');
  });
});

describe('stats', () => {
  it('prints every counter, nested ones by dotted name', async () => {
    const r = await cli('stats');
    expect(only()).toMatchObject({ method: 'GET', url: '/admin/v1/stats' });
    expect(r.code).toBe(0);
    expect(r.out).not.toMatch(/^ok\s/m);
    expect(r.out).toMatch(/^accounts\s+2$/m);
    expect(r.out).toMatch(/^services\s+1$/m);
    expect(r.out).toMatch(/^orders\.pending\s+3$/m);
    expect(r.out).toMatch(/^orders\.canceled\s+2$/m);
    expect(r.out).toMatch(/^deepest_mailbox\s+5$/m);
    expect(r.out).toMatch(/^wal\.lastSyncMs\s+0\.25$/m);
    expect(r.out).toMatch(/^wal\.pendingEntries\s+0$/m);
    // One aligned block: every value starts in the same column.
    const starts = r.out.trimEnd().split('\n').map((l) => /^\S+\s+/.exec(l)![0].length);
    expect(new Set(starts).size).toBe(1);
  });

  it('--json prints the body as sent', async () => {
    const raw = '{"ok":true,"accounts":2,"wal":{"lastSyncMs":1.50}}';
    fake.reply = () => ({ status: 200, body: raw });
    expect(await cli('stats', '--json')).toEqual({ code: 0, out: raw + '\n', err: '' });
  });

  it('a refusal exits 1', async () => {
    fake.reply = () => ({ status: 500, body: { ok: false, error: 'INTERNAL', message: 'The server failed to complete this request.' } });
    expect((await cli('stats')).code).toBe(1);
  });
});

describe('help for the new commands', () => {
  it.each(['order list', 'orders show', 'order set-status', 'order place', 'account plan', 'account forcejoin', 'snapshot', 'verify', 'stats'])(
    '%s --help exits 0 without a request',
    async (command) => {
      const r = await cli(...command.split(' '), '--help');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^Usage: credit-order-api /);
      expect(r.out).toContain('--json');
      expect(fake.requests).toHaveLength(0);
    },
  );

  it('shows the options of the commands that have them', async () => {
    expect((await cli('order', 'list', '--help')).out).toContain(
      'Usage: credit-order-api order list [--status STATUS] [--account ID] [--worker NAME] [--number N] [--limit N] [--cursor CURSOR] [--all] [options]',
    );
    expect((await cli('account', 'forcejoin', '--help')).out).toContain(
      'account forcejoin ID [--telegram-user-id N] [--unlink] [--verified] [--not-verified] [--exempt] [--not-exempt] [--reason TEXT]',
    );
    expect((await cli('account', 'ban', '--help')).out).toContain('--reason TEXT');
    expect((await cli('service', 'enable', '--help')).out).toContain('--reason TEXT');
  });

  it('the order group lists its commands', async () => {
    const r = await cli('orders');
    expect(r.code).toBe(2);
    expect(r.err).toContain('error: order needs a command: list, show, set-status, place, claim, extend, release, progress, cancel-requests.');
  });
});

describe('--timeout', () => {
  it('gives up on a server that does not answer after the given seconds, with a plain sentence and exit code 1', async () => {
    const silent = await silentServer();
    const { url } = silent;
    try {
      const r = await runAgainst(fake, ['stats', '--timeout', '1'], { ADMIN_URL: url, ADMIN_TOKEN: 't' });
      expect(r.code).toBe(1);
      expect(r.err).toContain(`the server at ${url} did not answer within 1 seconds.`);
    } finally {
      await silent.close();
    }
  });

  it('must be a whole number of seconds from 1 to 86400', async () => {
    for (const bad of ['0', '-1', '1.5', 'soon', '86401']) {
      const r = await cli('stats', '--timeout', bad);
      expect(r.code, bad).toBe(2);
      expect(r.err, bad).toMatch(/--timeout must/);
    }
    expect(fake.requests).toHaveLength(0);
    expect((await cli('stats', '--timeout', '5')).code).toBe(0);
  });

  it('defaults to an hour for snapshot and verify, which read the whole store, and 30 s for the rest', () => {
    const timeoutOf = (words: string[]) => {
      const found = findCommand(words, COMMANDS);
      if (found.kind !== 'command') throw new Error(words.join(' '));
      return found.command.timeoutS;
    };
    expect(timeoutOf(['verify'])).toBe(3600);
    expect(timeoutOf(['snapshot'])).toBe(3600);
    expect(timeoutOf(['stats'])).toBeUndefined();
    expect(DEFAULT_TIMEOUT_S).toBe(30);
  });
});
