/**
 * One order through POST /api/v1/order from a seeded account, timed: the
 * order loops of the ops benchmarks (verify-under-load.ts,
 * snapshot-under-load.ts) send the same request and count the same way.
 */
import type { Seeded } from '../http/seed.js';
import type { ServerProcess } from '../http/server-process.js';

/** Places an order as account `i` (modulo the seeded count); resolves to its latency in ms, rejects unless answered 201. */
export async function timedOrder(server: ServerProcess, seeded: Seeded, i: number): Promise<number> {
  const account = seeded.account(i % seeded.count);
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/api/v1/order`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': account.key, 'x-api-secret': account.secret },
    body: JSON.stringify({ service: seeded.serviceId, target: 'https://example.com/p/bench', quantity: 1000 }),
  });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`HTTP ${response.status}`);
  return performance.now() - started;
}
