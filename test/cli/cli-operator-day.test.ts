import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { progressLine } from '../../src/cli/progress.js';
import { VERSION } from '../../src/platform/index.js';
import { ADMIN_TOKEN, order, useScratchDirs, useServer, type TestServer } from '../helpers/server.js';

/*
 * The CLI as an operator meets it through a day: its version, usage errors
 * that show the command's usage line, a sentence confirming every change,
 * orders of every type, listings with order numbers and drip-feed runs,
 * and progress on a terminal while a snapshot or a verify runs. Real
 * server, real LMDB, the CLI in-process.
 */

interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI against `t`; `tty` says whether its stderr is a terminal. `err` grows while it runs. */
function start(t: TestServer, args: string[], tty = false): { done: Promise<Run>; run: Run } {
  const run: Run = { code: -1, out: '', err: '' };
  const done = runCli([...args, '--admin-url', t.adminUrl, '--token', ADMIN_TOKEN], {
    stdout: (s) => (run.out += s),
    stderr: (s) => (run.err += s),
    env: {},
    stderrIsTty: tty,
  }).then((code) => ({ ...run, code }));
  return { done, run };
}

/**
 * Four snapshot and verify jobs run at nice 19 (they yield the CPU to the
 * order path by design), so on a machine busy with other work they take far
 * longer than the suite's 30 s default: their tests get their own budget.
 */
const JOBS_TEST_TIMEOUT_MS = 180_000;

const coa = (t: TestServer, ...args: string[]): Promise<Run> => start(t, args).done;

describe('the operator CLI', () => {
  const scratch = useScratchDirs();
  const t = useServer({ accounts: { alice: '1000' } });

  it('--version prints the version and exits 0', async () => {
    expect(await coa(t, '--version')).toMatchObject({ code: 0, out: `credit-order-api ${VERSION}\n` });
  });

  it("a usage error exits 2 with the command's usage line", async () => {
    const missing = await coa(t, 'account', 'credits', '7', '--amount', '5');
    expect(missing.code).toBe(2);
    expect(missing.err).toBe(
      'error: account credits needs --reason.\nUsage: credit-order-api account credits ID --amount AMOUNT --reason TEXT [options]\n' +
        'Run `credit-order-api account credits --help` for details.\n',
    );
    const unknown = await coa(t, 'acount', 'list');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('Usage: credit-order-api <command> [options]');
    const group = await coa(t, 'account', 'frob');
    expect(group.code).toBe(2);
    expect(group.err).toContain('Usage: credit-order-api account <command> [options]');
  });

  it('every change says what it did in a sentence', async () => {
    const id = String(t.accounts.alice.id);
    expect((await coa(t, 'account', 'ban', id)).out).toMatch(new RegExp(`^Account ${id} banned: its API requests are refused from now on\\.\\n`));
    expect((await coa(t, 'account', 'unban', id)).out).toMatch(new RegExp(`^Account ${id} unbanned: its API requests are served again\\.\\n`));
    expect((await coa(t, 'account', 'rate-limit', id, '--per-minute', '120')).out).toMatch(new RegExp(`^Account ${id} may now make 120 requests a minute\\.\\n`));
    expect((await coa(t, 'account', 'credits', id, '--amount', '-2.5', '--reason', 'fee')).out).toMatch(new RegExp(`^2\\.5 credits removed from account ${id}\\.\\n`));
    expect((await coa(t, 'account', 'credits', id, '--amount', '2.5', '--reason', 'refund of the fee')).out).toMatch(new RegExp(`^2\\.5 credits added to account ${id}\\.\\n`));
    expect((await coa(t, 'account', 'forcejoin', id, '--exempt')).out).toMatch(new RegExp(`^Force-join settings of account ${id} saved\\.\\n`));
    const service = String(await t.createService());
    expect((await coa(t, 'service', 'disable', service)).out).toMatch(new RegExp(`^Service ${service} disabled: hidden from clients, new orders refused\\.\\n`));
    expect((await coa(t, 'service', 'enable', service)).out).toMatch(new RegExp(`^Service ${service} enabled: clients can order it\\.\\n`));
    expect((await coa(t, 'service', 'update', service, '--max', '500')).out).toMatch(new RegExp(`^Service ${service} updated\\.\\n`));
  });

  it('order place takes every order type the server has; listings show the number and drip-feed runs', async () => {
    const account = String(t.accounts.alice.id);
    const services = {
      dripfeed: await t.createService({ rate: '0.01', min: 10, max: 1000, dripfeed: true }),
      package: await t.createService({ rate: '5', min: 1, max: 1, type: 'Package' }),
      comments: await t.createService({ rate: '0.1', min: 1, max: 100, type: 'Custom Comments' }),
      commentsPackage: await t.createService({ rate: '3', min: 1, max: 1, type: 'Custom Comments Package' }),
      mentions: await t.createService({ rate: '0.1', min: 1, max: 100, type: 'Mentions Custom List' }),
      poll: await t.createService({ rate: '0.02', min: 10, max: 1000, type: 'Poll' }),
    };
    const usernames = join(scratch(), 'usernames.txt');
    writeFileSync(usernames, '@ann\n@bob\n@cy\n');
    const target = ['--account', account, '--target', 'https://instagram.com/p/abc'];
    const placements: [string[], RegExp][] = [
      [['--service', String(services.dripfeed), '--quantity', '100', '--runs', '3', '--interval', '30'], /charge\s+3\n/],
      [['--service', String(services.package)], /charge\s+5\n/],
      [['--service', String(services.comments), '--comments', 'nice\ngreat'], /charge\s+0\.2\n/],
      [['--service', String(services.commentsPackage), '--comments', 'one\ntwo\nthree'], /charge\s+3\n/],
      [['--service', String(services.mentions), '--usernames-file', usernames], /charge\s+0\.3\n/],
      [['--service', String(services.poll), '--quantity', '50', '--answer-number', '2'], /charge\s+1\n/],
    ];
    const more: [string, string[]][] = [
      ['Comment Likes', ['--username', 'ann']],
      ['Mentions with Hashtags', ['--usernames', '@ann\n@bob', '--hashtags', '#one\n#two']],
      ['Mentions Hashtag', ['--hashtag', '#sale']],
      ['Mentions User Followers', ['--username', 'ann']],
      ['Mentions Media Likers', ['--media', 'https://instagram.com/p/xyz']],
      ['SEO', ['--keywords', 'red shoes\nblue shoes']],
      ['Invites from Groups', ['--groups', 'group-one\ngroup-two']],
    ];
    for (const [type, args] of more) {
      const id = await t.createService({ rate: '0.1', min: 1, max: 1000, type });
      placements.push([['--service', String(id), '--quantity', '10', ...args], /charge\s+1\n/]);
    }
    for (const [args, charge] of placements) {
      const r = await coa(t, 'order', 'place', ...target, ...args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.out, args.join(' ')).toMatch(new RegExp(`^Order \\d+ placed for account ${account}\\.\\n`));
      expect(r.out).toMatch(charge);
    }
    // What the service's type does not take is refused by the server, naming it.
    const wrong = await coa(t, 'order', 'place', ...target, '--service', String(services.package), '--answer-number', '2');
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/'answer_number'/);
    const both = await coa(t, 'order', 'place', ...target, '--service', String(services.mentions), '--usernames', 'a', '--usernames-file', usernames);
    expect(both.code).toBe(2);

    const list = await coa(t, 'order', 'list', '--account', account, '--limit', '2');
    const [header, first] = list.out.split('\n');
    expect(header).toMatch(/^ID\s+NUMBER\s+ACCOUNT\s+SERVICE\s+TYPE\s+QUANTITY\s+RUNS\s+CHARGE/);
    expect(first).toMatch(/^\S+\s+\d+\s+\d+\s+\d+\s+Default\s+100\s+3\s+3\s/);
    expect(list.out).toMatch(/Next page: `credit-order-api order list --status pending --account \d+ --limit 2 --cursor \S+`/);
    const byNumber = await coa(t, 'order', 'list', '--number', '2', '--json');
    expect(JSON.parse(byNumber.out).orders.map((o: { number: number }) => o.number)).toEqual([2]);
    const claimed = await coa(t, 'order', 'claim', '--limit', '2', '--worker', 'w1');
    expect(claimed.out).toMatch(/^Claimed 2 orders for worker w1; they are processing now\.\nID\s+NUMBER\s+ACCOUNT/);
  });

  it('snapshot and verify draw their progress on a terminal, and nothing under --json or off a terminal', async () => {
    const api = t.accounts.alice;
    const service = await t.createService();
    for (let i = 0; i < 3; i++) expect((await t.api('POST', '/api/v1/order', api, order(service, 10))).status).toBe(201);
    const hold = t.server.context.ops.holdNext();
    const verify = start(t, ['verify'], true);
    try {
      await hold.paused;
      // While the job holds its place, the CLI asks the server and draws elapsed time, a bar and the events of the log's total.
      await vi.waitFor(() => expect(verify.run.err).toMatch(/\rverify: \d+\.\d s \[-{24}\] 0 of \d+ events\u001b\[K/), { timeout: 10_000, interval: 20 });
    } finally {
      // Released whatever happens, so that a failure here leaves no job holding the server for the next test.
      hold.release();
    }
    const verified = await verify.done;
    expect(verified.code).toBe(0);
    expect(verified.out).toMatch(/^Ledger verified/);
    // The line is erased before the answer.
    expect(verified.err.endsWith('\r\u001b[K\r')).toBe(true);

    const snapshot = await start(t, ['snapshot', '--out', join(scratch(), 'snap')], true).done;
    expect(snapshot.code).toBe(0);
    expect(snapshot.err).toMatch(/^\rsnapshot: \d+\.\d s, copying the store\u001b\[K/);

    expect((await start(t, ['verify', '--json'], true).done).err).toBe('');
    expect((await start(t, ['verify'], false).done).err).toBe('');
  }, JOBS_TEST_TIMEOUT_MS);

  it('verify --data-dir draws its own progress on a terminal, to the last event', async () => {
    const dir = join(scratch(), 'copy');
    expect((await coa(t, 'snapshot', '--out', dir)).code).toBe(0);
    const local = await start(t, ['verify', '--data-dir', dir], true).done;
    expect(local.code).toBe(0);
    const events = /events\s+(\d+)/.exec(local.out)![1]!;
    expect(local.err).toContain(`[${'#'.repeat(24)}] ${Number(events).toLocaleString('en')} of ${Number(events).toLocaleString('en')} events`);
  }, JOBS_TEST_TIMEOUT_MS);

  it('the progress line fills its bar in proportion and groups the counts', () => {
    expect(progressLine('verify', 12_345, 500_000, 2_000_000)).toBe('verify: 12.3 s [######------------------] 500,000 of 2,000,000 events');
    expect(progressLine('verify', 0, 0, 0)).toBe(`verify: 0.0 s [${'#'.repeat(24)}] 0 of 0 events`);
    expect(progressLine('snapshot', 1_000, null, null)).toBe('snapshot: 1.0 s, copying the store');
  });
});
