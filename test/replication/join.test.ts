/**
 * The log in PostgreSQL is trimmed behind what every node has flushed; a
 * node that needs what was trimmed refuses to start and says to use a
 * snapshot, and a node started from a snapshot catches up and can lead.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { postgresMissing, REPLICA_POLL_MS, REPLICA_WAIT_MS, useGroup } from '../helpers/replicated-group.js';
import { waitFor } from '../helpers/wait-for.js';

const missing = await postgresMissing();

describe.skipIf(missing !== null)('a bounded log, and new nodes from a snapshot', () => {
  const setup = useGroup();

  it('trims the log behind every node; an empty node is refused with a sentence; a node from a snapshot catches up and leads', async () => {
    const g = setup.group();
    await g.startNode('a', { REPLICATION_LOG_KEEP: '0' });
    const { node: leader } = await g.waitLeader(['a']);
    const customer = await g.customer(leader);
    const acked: { order: string; charge: number }[] = [];
    for (let n = 0; n < 20; n++) acked.push((await g.order(leader, customer, n))!.body);
    const sql = postgres(g.url, { max: 1, onnotice: () => {} });
    try {
      let trimmed = 0;
      const trimmedYet = async (): Promise<boolean> => (trimmed = Number((await sql`select trimmed_to from coa_group`)[0]!['trimmed_to'])) > 0;
      await waitFor('the log in PostgreSQL trimmed (coa_group.trimmed_to above 0)', trimmedYet, REPLICA_WAIT_MS, undefined, REPLICA_POLL_MS);
      expect(Number((await sql`select count(*) as n from coa_log where position <= ${trimmed}`)[0]!['n'])).toBe(0);
    } finally {
      await sql.end();
    }
    await expect(g.startNode('fresh')).rejects.toThrow(/start this node from a snapshot/);
    const out = join(mkdtempSync(join(tmpdir(), 'coa-snapshot-')), 'snap');
    const taken = await g.admin(leader, 'POST', '/admin/v1/snapshot', { out });
    expect(taken.status).toBe(200);
    await g.startNode('restored', { REPLICATION_LOG_KEEP: '0' }, out);
    expect((await g.readiness(g.node('restored'))).body?.role).toBe('follower');
    // Written after the snapshot: the restored node applies them from the log.
    for (let n = 20; n < 30; n++) acked.push((await g.order(leader, customer, n))!.body);
    await g.kill('a');
    const { node: next } = await g.waitLeader(['restored'], 15_000);
    expect(await g.expectAcknowledged(next, customer, acked)).toEqual([]);
  }, 150_000);
});
