/**
 * Real HAProxy (the Debian package) with deploy/haproxy.cfg in front of two
 * replicated nodes: traffic reaches only the leader, a takeover is followed
 * without the client changing anything, and every kind of request the
 * nodes' uWS release drops unanswered gets an answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Haproxy } from '../../scripts/cluster/haproxy.js';
import type { PgPair } from '../../scripts/cluster/postgres.js';
import { rawRequest } from '../hostile/support.js';
import { type Customer, Group, postgresMissing, REPLICA_POLL_MS, REPLICA_WAIT_MS } from '../helpers/replicated-group.js';
import { requireTool } from '../helpers/tools.js';
import { waitFor } from '../helpers/wait-for.js';

type HaproxyModule = typeof import('../../scripts/cluster/haproxy.js');
type PostgresModule = typeof import('../../scripts/cluster/postgres.js');
const haproxy = (await import('../../dist/scripts/cluster/haproxy.js' as string)) as HaproxyModule;
const { freePort } = (await import('../../dist/scripts/cluster/postgres.js' as string)) as PostgresModule;
const missing = (await postgresMissing('the HAProxy tests')) ?? requireTool('haproxy', 'the HAProxy tests');

describe.skipIf(missing !== null)('HAProxy in front of a replicated group', () => {
  let pg: PgPair;
  let g: Group;
  let proxy: Haproxy;
  let port: number;
  let customer: Customer;
  const auth = (): string => `X-API-Key: ${customer.key}\r\nX-API-Secret: ${customer.secret}\r\n`;

  beforeAll(async () => {
    pg = await Group.startPostgres();
    g = await Group.create(pg);
    await g.startNode('a');
    const { node: leader } = await g.waitLeader(['a']);
    await g.startNode('b');
    port = await freePort();
    proxy = await haproxy.Haproxy.start(`127.0.0.1:${port}`, `127.0.0.1:${g.node('a').port}`, `127.0.0.1:${g.node('b').port}`);
    customer = await g.customer(leader);
  }, 150_000);
  afterAll(async () => {
    await proxy?.stop();
    await g?.stop();
    await pg?.stop();
  }, 60_000);

  const viaProxy = async (n: number): Promise<number> => {
    const res = await fetch(`${proxy.url}/api/v1/order`, {
      method: 'POST',
      headers: { 'x-api-key': customer.key, 'x-api-secret': customer.secret, 'content-type': 'application/json' },
      body: JSON.stringify({ service: customer.service, target: `https://example.com/p${n}`, quantity: 10 }),
    });
    return res.status;
  };

  it('sends orders only to the leader, and follows a takeover', async () => {
    let ok = 0;
    for (let n = 0; n < 20; n++) if ((await viaProxy(n)) === 201) ok++;
    expect(ok).toBe(20);
    await g.kill('a');
    let status = 0;
    let n = 100;
    const placed = async (): Promise<boolean> => (status = await viaProxy(n++)) === 201;
    await waitFor('an order through HAProxy answered 201 after the leader was killed', placed, REPLICA_WAIT_MS, () => `last answer ${status}`, REPLICA_POLL_MS);
    expect((await g.readiness(g.node('b'))).body?.role).toBe('leader');
  }, 120_000);

  const refused: Array<[string, () => string, RegExp]> = [
    ['a header name with `_`', () => `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX_Forwarded_For: 203.0.113.7\r\n${auth()}\r\n`, /Header names/],
    ['a header name with `.`', () => `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nA.b: c\r\n${auth()}\r\n`, /Header names/],
    ['a header name with other tchar', () => `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nA~b: c\r\n${auth()}\r\n`, /Header names/],
    ['no Host', () => `GET /api/v1/balance HTTP/1.1\r\n${auth()}\r\n`, /Host/],
    ['an asterisk-form request line', () => 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', /./],
  ];
  it.each(refused)('%s: HAProxy answers 400 with a sentence', async (_name, request, sentence) => {
    const r = await rawRequest(port, request(), { timeoutMs: 5_000 });
    expect(r.status).toBe(400);
    expect(r.body.toString()).toMatch(sentence);
  });

  it('an absolute-form request line is rewritten into origin form and answered by the leader', async () => {
    const r = await rawRequest(port, `GET http://x/api/v1/balance HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`, { timeoutMs: 5_000 });
    expect(r.status).toBe(200);
    expect(r.body.toString()).toContain('"credits"');
  });
});
