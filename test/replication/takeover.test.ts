import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group, postgresMissing } from '../helpers/replicated-group.js';

const missing = await postgresMissing();
if (missing !== null) console.log(`skipped: ${missing}`);

describe.skipIf(missing !== null)('replicated group: a follower takes over', () => {
  let group: Group;
  beforeAll(async () => {
    group = await Group.start();
  }, 120_000);
  afterAll(async () => {
    await group?.stop();
  }, 60_000);

  it('serves from one leader, and after SIGKILL of it the follower serves every acknowledged order', async () => {
    await group.startNode('a');
    await group.startNode('b');
    const { node: leader } = await group.waitLeader(['a', 'b']);
    const other = group.node(leader.name === 'a' ? 'b' : 'a');
    expect((await group.readiness(other)).body).toEqual({ ok: false, role: 'follower', node: other.name });
    const service = (await group.admin(leader, 'POST', '/admin/v1/services', { platform: 'x', name: 'x', rate: 0.001, min: 1, max: 1000, cancel: true, refill: true })).body.service.id;
    const created = (await group.admin(leader, 'POST', '/admin/v1/accounts', { name: 'r' })).body;
    await group.admin(leader, 'POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: 100, reason: 'test' });
    const acked: { order: string; charge: number }[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${leader.url}/api/v1/order`, {
        method: 'POST',
        headers: { 'x-api-key': created.api_key, 'x-api-secret': created.api_secret, 'content-type': 'application/json' },
        body: JSON.stringify({ service, target: `https://example.com/${i}`, quantity: 100 }),
      });
      expect(res.status).toBe(201);
      acked.push((await res.json()) as { order: string; charge: number });
    }
    const onFollower = await fetch(`${other.url}/api/v1/balance`, { headers: { 'x-api-key': created.api_key, 'x-api-secret': created.api_secret } });
    expect(onFollower.status).toBe(503);
    expect(onFollower.headers.get('retry-after')).toBe('1');
    await group.kill(leader.name);
    const { node: next, waitedMs } = await group.waitLeader([other.name], 15_000);
    console.log(`takeover after SIGKILL: ${Math.round(waitedMs)} ms`);
    for (const ack of acked) {
      const shown = await group.admin(next, 'GET', `/admin/v1/orders/${ack.order}`);
      expect(shown.status).toBe(200);
      expect(shown.body.order.charge).toBe(ack.charge);
    }
    const account = await group.admin(next, 'GET', `/admin/v1/accounts/${created.account.id}`);
    expect(account.body.account.credits).toBe(100 - 20 * 0.1);
  }, 120_000);
});
