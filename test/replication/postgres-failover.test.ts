/**
 * The PostgreSQL primary dies (every process SIGKILLed) under load and its
 * synchronous standby is promoted, as Patroni would: the leader finds the
 * new primary through its multi-host URI by itself, and nothing it
 * acknowledged is lost.
 */
import { describe, expect, it } from 'vitest';
import { postgresMissing, REPLICA_POLL_MS, REPLICA_WAIT_MS, useGroup } from '../helpers/replicated-group.js';
import { waitFor } from '../helpers/wait-for.js';

const missing = await postgresMissing();

describe.skipIf(missing !== null)('PostgreSQL failover under a replicated leader', () => {
  const setup = useGroup();

  it('the leader reconnects to the promoted standby by itself and loses nothing acknowledged', async () => {
    const g = setup.group();
    const pg = setup.pg();
    await g.startNode('a');
    const { node: leader } = await g.waitLeader(['a']);
    const customer = await g.customer(leader);
    const acked: { order: string; charge: number }[] = [];
    let stop = false;
    const drive = async (w: number): Promise<void> => {
      for (let n = 0; !stop; n++) {
        const placed = await g.order(leader, customer, w * 100_000 + n, 10);
        if (placed?.status === 201) acked.push(placed.body);
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const running = [0, 1, 2].map(drive);
    let before = 0;
    try {
      await waitFor('30 orders acknowledged by the leader', () => acked.length >= 30, REPLICA_WAIT_MS, () => `${acked.length} acknowledged`);
      await pg.primary.crash();
      before = acked.length;
      await pg.promoteStandby();
      // The same process serves again, on the new primary.
      await waitFor("30 more orders acknowledged on the promoted standby", () => acked.length >= before + 30, REPLICA_WAIT_MS, () => `${acked.length - before} acknowledged since the crash`);
    } finally {
      stop = true;
      await Promise.all(running);
    }
    expect(leader.process!.child.exitCode).toBeNull();
    expect(await g.expectAcknowledged(leader, customer, acked)).toEqual([]);
    // No standby streams behind the promoted primary: the leader says so.
    let standby: boolean | null | undefined = true;
    const noStandby = async (): Promise<boolean> => (standby = (await g.readiness(leader)).body?.synchronous_standby) === false;
    await waitFor('the leader to report no synchronous standby', noStandby, REPLICA_WAIT_MS, () => `synchronous_standby ${String(standby)}`, REPLICA_POLL_MS);
    const metrics = await fetch(`${leader.adminUrl}/metrics`, { headers: { authorization: 'Bearer group-admin-token-for-tests' } });
    const text = await metrics.text();
    expect(text).toMatch(/^coa_replication_synchronous_standby 0$/m);
    expect(text).toMatch(/^coa_replication_leader 1$/m);
  }, 150_000);
});
