/**
 * A replicated group on a real PostgreSQL primary with a synchronous
 * standby: nodes are real server processes. Each test makes its own group
 * (its own database) so that it runs alone as well as in the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgPair } from '../../scripts/cluster/postgres.js';
import { Group, postgresMissing, REPLICA_POLL_MS, REPLICA_WAIT_MS } from '../helpers/replicated-group.js';
import { waitFor } from '../helpers/wait-for.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const missing = await postgresMissing();

describe.skipIf(missing !== null)('replicated group: one leader, followers that take over', () => {
  let pg: PgPair;
  const groups: Group[] = [];
  const group = async (): Promise<Group> => {
    const g = await Group.create(pg);
    groups.push(g);
    return g;
  };
  beforeAll(async () => {
    pg = await Group.startPostgres();
  }, 120_000);
  afterAll(async () => {
    for (const g of groups) await g.stop();
    await pg?.stop();
  }, 60_000);

  it('one node leads and reports its synchronous standby; a follower answers 503 with Retry-After but serves admin reads', async () => {
    const g = await group();
    await g.startNode('a');
    const { node: leader } = await g.waitLeader(['a']);
    await g.startNode('b');
    const follower = g.node('b');
    const ready = await g.readiness(leader);
    expect(ready).toEqual({ status: 200, body: { ok: true, role: 'leader', node: 'a', synchronous_standby: true } });
    expect(await g.readiness(follower)).toEqual({ status: 503, body: { ok: false, role: 'follower', node: 'b' } });
    const scrape = async (node: typeof leader): Promise<string> => (await fetch(`${node.adminUrl}/metrics`, { headers: { authorization: 'Bearer group-admin-token-for-tests' } })).text();
    expect(await scrape(leader)).toMatch(/^coa_replication_synchronous_standby 1$/m);
    expect(await scrape(follower)).toMatch(/^coa_replication_leader 0$/m);
    expect((await fetch(`${follower.url}/healthz`)).status).toBe(200);
    const customer = await g.customer(leader);
    const placed = await g.order(leader, customer, 1);
    expect(placed?.status).toBe(201);
    const refused = await fetch(`${follower.url}/api/v1/balance`, { headers: { 'x-api-key': customer.key, 'x-api-secret': customer.secret } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: string }).error).toBe('UNAVAILABLE');
    const write = await g.admin(follower, 'POST', '/admin/v1/accounts', { name: 'nope' });
    expect(write.status).toBe(503);
    // Admin reads on the follower see the leader's order once the log is applied there.
    let seen = 0;
    const applied = async (): Promise<boolean> => (seen = (await g.admin(follower, 'GET', `/admin/v1/orders/${placed!.body.order}`)).status) === 200;
    await waitFor("the leader's order in the follower's admin API", applied, REPLICA_WAIT_MS, () => `last answer ${seen}`, REPLICA_POLL_MS);
    expect((await g.admin(follower, 'GET', `/admin/v1/accounts/${customer.id}`)).body.account.credits).toBe(99.9);
  }, 120_000);

  it('after SIGKILL of the leader under load, the follower serves within 10 s with every acknowledged order; the old node rejoins as a follower', async () => {
    const g = await group();
    const { leader, customer } = await g.leaderAndFollower();
    const acked: { order: string; charge: number }[] = [];
    let stop = false;
    const drive = async (w: number): Promise<void> => {
      for (let n = 0; !stop; n++) {
        const placed = await g.order(leader, customer, w * 100_000 + n, 10);
        if (placed === null) return;
        if (placed.status === 201) acked.push(placed.body);
      }
    };
    const running = [0, 1, 2, 3].map(drive);
    await waitFor('50 orders acknowledged by the leader', () => acked.length >= 50, REPLICA_WAIT_MS, () => `${acked.length} acknowledged`);
    await g.kill('a');
    const killedMs = performance.now();
    stop = true;
    await Promise.all(running);
    const { node: next } = await g.waitLeader(['b'], 15_000);
    const takeoverMs = performance.now() - killedMs;
    console.log(`takeover after SIGKILL of the leader: ${Math.round(takeoverMs)} ms`);
    expect(takeoverMs).toBeLessThan(10_000);
    expect(await g.expectAcknowledged(next, customer, acked)).toEqual([]);
    expect((await g.order(next, customer, 999_999))?.status).toBe(201);
    await g.startNode('a');
    expect((await g.readiness(g.node('a'))).body?.role).toBe('follower');
  }, 120_000);

  it('after SIGSTOP of the leader the follower serves within 15 s; on SIGCONT the old leader acknowledges nothing more and stops', async () => {
    const g = await group();
    const { leader, customer } = await g.leaderAndFollower();
    const acked: { order: string; charge: number }[] = [];
    for (let n = 0; n < 10; n++) acked.push((await g.order(leader, customer, n))!.body);
    leader.process!.child.kill('SIGSTOP');
    const frozenMs = performance.now();
    // Requests sent to the frozen leader wait in its socket buffer.
    const late = [0, 1, 2].map((n) => g.order(leader, customer, 1000 + n));
    const { node: next } = await g.waitLeader(['b'], 20_000);
    const takeoverMs = performance.now() - frozenMs;
    console.log(`takeover after SIGSTOP of the leader: ${Math.round(takeoverMs)} ms`);
    expect(takeoverMs).toBeLessThan(15_000);
    acked.push((await g.order(next, customer, 2000))!.body);
    leader.process!.child.kill('SIGCONT');
    const exit = await leader.process!.exited;
    expect(exit.code).toBe(1);
    expect(leader.process!.output()).toContain('lost the lease');
    for (const answer of await Promise.all(late)) expect(answer === null || answer.status === 503).toBe(true);
    expect(await g.expectAcknowledged(next, customer, acked)).toEqual([]);
  }, 120_000);

  it('a node started on an empty data directory catches up from the log and takes over with everything', async () => {
    const g = await group();
    await g.startNode('a');
    const { node: leader } = await g.waitLeader(['a']);
    const customer = await g.customer(leader);
    const acked: { order: string; charge: number }[] = [];
    for (let n = 0; n < 30; n++) acked.push((await g.order(leader, customer, n))!.body);
    await g.startNode('c');
    await g.kill('a');
    const { node: next } = await g.waitLeader(['c'], 15_000);
    expect(await g.expectAcknowledged(next, customer, acked)).toEqual([]);
  }, 120_000);

  it('refuses to start a node whose keys differ from the group\'s, naming the key', async () => {
    const g = await group();
    await g.startNode('a');
    await g.waitLeader(['a']);
    const other = Buffer.alloc(16, 7).toString('base64');
    await expect(g.startNode('d', { ORDER_ID_KEY: other })).rejects.toThrow(/ORDER_ID_KEY differs from the group's/);
  }, 120_000);

  it('after a takeover the new leader delivers the webhook messages the old one had in flight, with the same webhook-id', async () => {
    const g = await group();
    const receiver = await startReceiver();
    try {
      const env = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };
      const { leader, customer } = await g.leaderAndFollower(env);
      const registered = await fetch(`${leader.url}/api/v1/webhooks`, {
        method: 'POST',
        headers: { 'x-api-key': customer.key, 'x-api-secret': customer.secret, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.url}/hook`, events: ['order.updated'] }),
      });
      expect(registered.status).toBe(201);
      receiver.setSecret('/hook', ((await registered.json()) as { webhook: { secret: string } }).webhook.secret);
      // The old leader's attempts hang: none is answered before it dies.
      receiver.behave('hang');
      const orders: string[] = [];
      for (let n = 0; n < 3; n++) orders.push((await g.order(leader, customer, n))!.body.order);
      await receiver.waitFor((r) => r.length >= 3);
      const attempted = new Set(receiver.received.map((r) => r.id));
      await g.kill('a');
      receiver.behave('ok');
      receiver.releaseHung();
      await g.waitLeader(['b'], 15_000);
      await receiver.waitFor((r) => orders.every((order) => r.some((m) => m.answered === 'ok' && m.json.data['order'] === order)), 30_000);
      for (const order of orders) {
        const delivered = receiver.received.find((m) => m.answered === 'ok' && m.json.data['order'] === order)!;
        expect(delivered.verified).toBe(true);
        expect(attempted.has(delivered.id)).toBe(true);
      }
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
