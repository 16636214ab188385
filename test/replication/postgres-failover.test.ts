/**
 * The PostgreSQL primary dies (every process SIGKILLed) under load and its
 * synchronous standby is promoted, as Patroni would: the leader finds the
 * new primary through its multi-host URI by itself, and nothing it
 * acknowledged is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgPair } from '../../scripts/cluster/postgres.js';
import { Group, postgresMissing } from '../helpers/replicated-group.js';

const missing = await postgresMissing();
if (missing !== null) console.log(`replication tests skipped: ${missing}`);

describe.skipIf(missing !== null)('PostgreSQL failover under a replicated leader', () => {
  let pg: PgPair;
  let g: Group;
  beforeAll(async () => {
    pg = await Group.startPostgres();
    g = await Group.create(pg);
  }, 120_000);
  afterAll(async () => {
    await g?.stop();
    await pg?.stop();
  }, 60_000);

  it('the leader reconnects to the promoted standby by itself and loses nothing acknowledged', async () => {
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
    while (acked.length < 30) await new Promise((resolve) => setTimeout(resolve, 20));
    await pg.primary.crash();
    const before = acked.length;
    await pg.promoteStandby();
    // The same process serves again, on the new primary.
    const deadline = performance.now() + 30_000;
    while (acked.length < before + 30 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    stop = true;
    await Promise.all(running);
    expect(acked.length).toBeGreaterThanOrEqual(before + 30);
    expect(leader.process!.child.exitCode).toBeNull();
    expect(await g.expectAcknowledged(leader, customer, acked)).toEqual([]);
    // No standby streams behind the promoted primary: the leader says so.
    let standby: boolean | null | undefined = true;
    for (let i = 0; i < 100 && standby !== false; i++) {
      standby = (await g.readiness(leader)).body?.synchronous_standby;
      if (standby !== false) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(standby).toBe(false);
  }, 150_000);
});
