/**
 * The subscription CLI commands against the real server: list (with its
 * filters), show, report a post (charged once, however often reported) and
 * cancel.
 */
import { describe, expect, it } from 'vitest';
import { cli as runCli } from '../helpers/cli.js';
import { useServer } from '../helpers/server.js';

const t = useServer();

describe('subscription commands', () => {
  it('list, show, post (a repeat charges nothing) and cancel', async () => {
    const creds = await t.createAccount('reseller', '100');
    const key = await t.issueV2Key(creds.id);
    const service = await t.createService({ name: 'Auto likes', rate: '0.5', min: 10, max: 100, type: 'Subscriptions' });
    const id = (await t.v2({ key, action: 'add', service, username: 'natgeo', min: 10, max: 20, posts: 5 })).body.order as number;

    const listed = await runCli(t, 'subscription', 'list', '--status', 'Active', '--account', String(creds.id));
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(new RegExp(`${id}\\s+${creds.id}\\s+${service}\\s+natgeo\\s+10\\s+20\\s+0/5`));
    expect(JSON.parse((await runCli(t, 'subscription', 'list', '--status', 'Canceled', '--json')).out).subscriptions).toEqual([]);

    const posted = await runCli(t, 'subscription', 'post', String(id), '--post', 'C1', '--link', 'https://instagram.com/p/C1', '--quantity', '12');
    expect(posted.code, posted.err).toBe(0);
    expect(posted.out).toMatch(/is ordered as order .* charged 6; the wallet holds 94\./);
    const again = await runCli(t, 'subscription', 'post', String(id), '--post', 'C1', '--link', 'https://instagram.com/p/C1', '--quantity', '12');
    expect(again.out).toMatch(/was already reported: its order is .* the wallet holds 94\./);
    const tooMany = await runCli(t, 'subscription', 'post', String(id), '--post', 'C2', '--link', 'https://instagram.com/p/C2', '--quantity', '50');
    expect(tooMany.code).not.toBe(0);
    expect(tooMany.err).toMatch(/Quantity must be between 10 and 20/);

    const shown = await runCli(t, 'subscription', 'show', String(id));
    expect(shown.out).toMatch(/posts_done\s+1/);
    const canceled = await runCli(t, 'subscription', 'cancel', String(id), '--reason', 'asked by phone');
    expect(canceled.out).toBe(`Subscription ${id} is canceled.\n`);
    expect((await runCli(t, 'subscription', 'cancel', String(id))).err).toMatch(/already Canceled, a final state/);
  });
});
