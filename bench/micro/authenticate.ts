/**
 * What checking an API v1 key and secret costs the event loop for a key in
 * use (its account loaded): the server's registry, whose cache of verified
 * secrets compares the presented secret with the remembered one, against a
 * registry over the same store made with a cache of 0 entries, which
 * hashes the secret (SHA-256) on every request as a key without an entry
 * is. Process CPU per call, the two alternated, each line one round.
 *
 *   npm run build && node dist/bench/micro/run.js authenticate
 */
import { Registry } from '../../src/actors/index.js';
import { benchServer, fundedAccount } from './order-path.js';

const CALLS = 200_000;

function nsPerCall(check: () => unknown): number {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) check();
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / CALLS;
}

export async function authenticate(): Promise<void> {
  const { server, close } = await benchServer();
  try {
    const ctx = server.context;
    const { apiKey, apiSecret } = await fundedAccount(server, 'bench');
    const hashing = new Registry(ctx.store, ctx.wal, ctx.clock, ctx, 60, 0);
    // A fresh string per request, as each request's header is.
    const presented = (): string => apiSecret.slice(0, 4) + apiSecret.slice(4);
    const cached = (): unknown => ctx.registry.authenticate(apiKey, presented());
    const hashed = (): unknown => hashing.authenticate(apiKey, presented());
    if (cached() === null || hashed() === null) throw new Error('the bench credentials are valid');
    nsPerCall(cached);
    nsPerCall(hashed);
    process.stdout.write('\n## authenticating a key in use (process ns of CPU per call)\n\n| round | SHA-256 of the secret each call (cache of 0) | verified secret remembered (cache) |\n|---|---:|---:|\n');
    for (let round = 1; round <= 6; round++) {
      const a = nsPerCall(hashed);
      const b = nsPerCall(cached);
      process.stdout.write(`| ${round} | ${Math.round(a)} | ${Math.round(b)} |\n`);
    }
  } finally {
    await close();
  }
}
