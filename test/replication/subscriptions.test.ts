/**
 * A subscription in a replicated group: placed through API v1 and fed posts
 * on the leader, it reaches the follower through the log in PostgreSQL
 * with its status, its posts' orders and their charges, and the follower
 * that takes over when the leader dies shows it to the customer as the
 * leader did, and keeps charging a repeated post once.
 */
import { describe, expect, it } from 'vitest';
import { postgresMissing, REPLICA_POLL_MS, REPLICA_WAIT_MS, useGroup, type Customer, type GroupNode } from '../helpers/replicated-group.js';
import { waitFor } from '../helpers/wait-for.js';
import { plainCharge } from '../helpers/plain-money.js';

const missing = await postgresMissing();

/** 0.25 credits a unit, in micro-credits. */
const RATE_MICRO = 250_000;
const CREDITS = 100;

async function customerApi(node: GroupNode, customer: Customer, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${node.url}${path}`, {
    method,
    headers: { 'x-api-key': customer.key, 'x-api-secret': customer.secret, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

describe.skipIf(missing !== null)('a subscription in a replicated group', () => {
  const setup = useGroup();

  it('placed and fed posts on the leader, it is on the follower with its status and charges, and the new leader after failover shows it the same', async () => {
    const g = setup.group();
    const { leader, follower, customer } = await g.leaderAndFollower();
    const created = await g.admin(leader, 'POST', '/admin/v1/services', { platform: 'instagram', name: 'Auto likes', rate: '0.25', min: 10, max: 1000, type: 'Subscriptions' });
    const service = created.body.service.id as number;
    const placed = await customerApi(leader, customer, 'POST', '/api/v1/subscription', { service, username: 'natgeo', min: 10, max: 50, posts: 2 });
    expect(placed.status).toBe(201);
    const id = placed.body.subscription as number;
    const reports = [
      { post: 'p1', link: 'https://instagram.com/p/p1', quantity: 20 },
      { post: 'p2', link: 'https://instagram.com/p/p2', quantity: 50 },
    ];
    for (const report of reports) expect((await g.admin(leader, 'POST', `/admin/v1/subscriptions/${id}/posts`, report)).status).toBe(201);
    const charged = plainCharge(20, RATE_MICRO) + plainCharge(50, RATE_MICRO);
    const onLeader = await customerApi(leader, customer, 'GET', `/api/v1/subscription_status?subscription=${id}`);
    expect(onLeader.body).toMatchObject({ status: 'Completed', posts_done: 2 });
    const leaderRow = (await g.admin(leader, 'GET', `/admin/v1/subscriptions/${id}`)).body.subscription;
    // The follower applies the log behind the leader, and its view of the accounts is rebuilt at most every
    // FOLLOWER_VIEW_REFRESH_MS: its admin reads show the same row and the balance net of both posts once it has.
    const credits = async (): Promise<number> => Math.round((await g.admin(follower, 'GET', `/admin/v1/accounts/${customer.id}`)).body.account.credits * 1e6);
    let followerRow: unknown = null;
    let followerCredits = 0;
    await waitFor(
      "the follower's subscription row and balance to equal the leader's",
      async () => {
        followerRow = (await g.admin(follower, 'GET', `/admin/v1/subscriptions/${id}`)).body.subscription ?? null;
        followerCredits = await credits();
        return JSON.stringify(followerRow) === JSON.stringify(leaderRow) && followerCredits === CREDITS * 1e6 - charged;
      },
      REPLICA_WAIT_MS,
      () => `row ${JSON.stringify(followerRow)}, credits ${followerCredits} micro`,
      REPLICA_POLL_MS,
    );
    expect(followerRow).toEqual(leaderRow);
    expect(followerCredits).toBe(CREDITS * 1e6 - charged);
    await g.kill(leader.name);
    const { node: next } = await g.waitLeader([follower.name], 30_000);
    expect((await customerApi(next, customer, 'GET', `/api/v1/subscription_status?subscription=${id}`)).body).toEqual(onLeader.body);
    // The post reported again on the new leader finds its order: charged once.
    const again = await g.admin(next, 'POST', `/admin/v1/subscriptions/${id}/posts`, reports[1]);
    expect(again.body).toMatchObject({ replayed: true });
    expect(Math.round((await customerApi(next, customer, 'GET', '/api/v1/balance')).body.credits * 1e6)).toBe(CREDITS * 1e6 - charged);
    expect((await g.admin(next, 'GET', '/admin/v1/verify')).status).toBe(200);
  }, 150_000);
});
