/**
 * Does a failed authentication's time tell whether the API key exists?
 * Starts the real server in this process (real LMDB in a temporary
 * directory), warms the known key (one valid request, so the account is
 * loaded as it would be for an active customer), then sends, alternating on
 * one keep-alive connection, GET /api/v1/balance with an unknown key and
 * with the known key and a wrong secret, and times each round trip.
 * Reports medians, means and Welch's z for the difference.
 *
 *   npm run build && flock -x /work/cpu.lock node dist/bench/security/auth-timing.js [--samples 2000] [--rounds 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/platform/log.js';
import { startServer } from '../../src/app/server.js';

function arg(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

/** One request on the connection, resolved with its round trip in µs once the whole answer is in. */
function roundTrip(socket: Socket, request: string): Promise<number> {
  return new Promise((resolve) => {
    let text = '';
    const start = process.hrtime.bigint();
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(text)?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve(Number(process.hrtime.bigint() - start) / 1000);
    };
    socket.on('data', onData);
    socket.write(request, 'latin1');
  });
}

function stats(xs: number[]): { median: number; mean: number; sd: number } {
  const sorted = [...xs].sort((a, b) => a - b);
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1));
  return { median: sorted[Math.floor(sorted.length / 2)]!, mean, sd };
}

async function main(): Promise<void> {
  const samples = arg('samples', 2_000);
  const rounds = arg('rounds', 3);
  const dir = mkdtempSync(join(tmpdir(), 'coa-auth-timing-'));
  const config = { ...loadConfig([], {}), port: 0, adminPort: 0, dataDir: dir, adminToken: 'bench', seedDemo: false, walPreallocateMb: 0, authFailuresPerMinute: 100_000_000 };
  const server = await startServer(config, { log: createLogger('silent') });
  try {
    const { account, apiSecret } = await server.context.registry.create('timed');
    // Other accounts, so the key table is not trivially small.
    for (let i = 0; i < 1_000; i++) await server.context.registry.create(`other-${i}`);
    const request = (key: string, secret: string): string =>
      `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nX-API-Secret: ${secret}\r\n\r\n`;
    const socket = connect({ port: server.port, host: '127.0.0.1' });
    await new Promise((resolve) => socket.on('connect', resolve));
    await roundTrip(socket, request(account.profile.apiKey, apiSecret));
    const wrongSecret = 'sec_' + 'w'.repeat(43);
    for (let round = 1; round <= rounds; round++) {
      const unknown: number[] = [];
      const wrong: number[] = [];
      for (let i = 0; i < samples + 200; i++) {
        // A fresh unknown key each time (an attacker probing keys), same length as a real one.
        const probe = 'key_' + (i * 2654435761 + round).toString(16).padStart(32, '0').slice(-32);
        const a = await roundTrip(socket, request(probe, wrongSecret));
        const b = await roundTrip(socket, request(account.profile.apiKey, wrongSecret));
        if (i < 200) continue; // warm-up
        unknown.push(a);
        wrong.push(b);
      }
      const u = stats(unknown);
      const w = stats(wrong);
      const z = (u.mean - w.mean) / Math.sqrt(u.sd ** 2 / unknown.length + w.sd ** 2 / wrong.length);
      process.stdout.write(
        `round ${round}: unknown key median ${u.median.toFixed(1)} µs (mean ${u.mean.toFixed(1)}), ` +
          `wrong secret median ${w.median.toFixed(1)} µs (mean ${w.mean.toFixed(1)}), ` +
          `median difference ${(u.median - w.median).toFixed(1)} µs, z ${z.toFixed(1)} (${samples} samples each)\n`,
      );
    }
    socket.destroy();
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
