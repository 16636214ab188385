/**
 * Verify re-reads every subscription event with its rules: a store whose
 * subscription row, placement or post breaks one is reported, naming the
 * subscription check and what broke. Each case runs a real server, places a
 * subscription and a post over HTTP, stops it, alters one thing in its
 * LMDB store, and verifies the directory as `coa verify --data-dir` does.
 */
import { describe, expect, it } from 'vitest';
import { verifyDirectory } from '../../src/ops/index.js';
import { openStore, type Store } from '../../src/wal/index.js';
import { withServer } from '../helpers/server.js';

async function tampered(alter: (store: Store) => void): Promise<string | null> {
  let dir = '';
  let broken: string | null = null;
  await withServer({}, async (t) => {
    const creds = await t.createAccount('alice', '100');
    const key = await t.issueV2Key(creds.id);
    const service = await t.createService({ name: 'Auto likes', rate: '0.5', min: 10, max: 100, type: 'Subscriptions' });
    const id = (await t.v2({ key, action: 'add', service, username: 'natgeo', min: 10, max: 20, posts: 1 })).body.order as number;
    expect((await t.admin('POST', `/admin/v1/subscriptions/${id}/posts`, { post: 'p1', link: 'https://instagram.com/p/p1', quantity: 15 })).status).toBe(201);
    dir = t.dir;
    await t.server.close();
    const store = openStore(dir);
    alter(store);
    await store.close();
    broken = (await verifyDirectory(dir)).firstBroken;
  });
  return broken;
}

/** Rewrites the first log event of `type` with `change` applied. */
function rewriteEvent(store: Store, type: string, change: (e: Record<string, unknown>) => void): void {
  for (const { key, value } of store.log.getRange({})) {
    const e = value as unknown as Record<string, unknown>;
    if (e.type !== type) continue;
    change(e);
    store.log.putSync(key, e as never);
    return;
  }
  throw new Error(`no ${type} event`);
}

describe('verify of subscriptions', () => {
  it('holds for an untouched store, and names a subscription row that disagrees with the log', async () => {
    expect(await tampered(() => {})).toBe(null);
    const broken = await tampered((store) => {
      for (const { key, value } of store.tables.subscriptions.getRange({})) store.tables.subscriptions.putSync(key, { ...(value as object), postsDone: 0, status: 'Active' });
    });
    expect(broken).toMatch(/^Subscription check failed at account 1: subscription \d+'s row has status Active but the log leaves Completed\.$/);
  });

  it('names a placement at a rate that was not the service\'s, and a completion before its posts', async () => {
    expect(await tampered((store) => rewriteEvent(store, 'subscription.placed', (e) => (e.rate = 1)))).toMatch(/fixed the rate 0\.000001 credits, which is not its service's rate/);
    expect(await tampered((store) => rewriteEvent(store, 'subscription.placed', (e) => (e.posts = 3)))).toMatch(/completes after 1 posts, not the 3 it takes/);
  });

  it("names a post's order outside the subscription's min..max", async () => {
    const broken = await tampered((store) => {
      rewriteEvent(store, 'subscription.placed', (e) => (e.max = 12));
    });
    expect(broken).toMatch(/^Subscription check failed at seq \d+ \(account 1, order \S+\): the post's order breaks subscription \d+: quantity 15 is outside 10\.\.12\.$/);
  });
});

describe('verify of the Idempotency-Key a subscription was placed with', () => {
  it('holds for a key that names its own subscription, and names a key that points at another account\'s', async () => {
    let dir = '';
    const broken: (string | null)[] = [];
    await withServer({}, async (t) => {
      const service = await t.createService({ name: 'Auto likes', rate: '0.5', min: 10, max: 100, type: 'Subscriptions' });
      const alice = await t.createAccount('alice', '10');
      const bob = await t.createAccount('bob', '10');
      const body = { service, username: 'natgeo', min: 10, max: 20 };
      expect((await t.api('POST', '/api/v1/subscription', alice, body, { 'Idempotency-Key': 'k' })).status).toBe(201);
      const bobs = (await t.api('POST', '/api/v1/subscription', bob, body)).body.subscription as number;
      dir = t.dir;
      await t.server.close();
      broken.push((await verifyDirectory(dir)).firstBroken);
      const store = openStore(dir);
      const row = store.tables.idempotency.get(`${alice.id}:k`) as Record<string, unknown>;
      expect(row.subscription).toBeGreaterThan(0);
      store.tables.idempotency.putSync(`${alice.id}:k`, { ...row, subscription: bobs } as never);
      await store.close();
      broken.push((await verifyDirectory(dir)).firstBroken);
      expect(broken).toEqual([null, `Idempotency check failed at account ${alice.id}: the idempotency key "k" points at subscription ${bobs}, which account ${alice.id} did not place.`]);
    });
  });
});
