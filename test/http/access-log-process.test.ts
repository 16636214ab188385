/**
 * The access log of the real process, on its standard output as a service
 * manager takes it: every line is one JSON object, each answered request
 * has exactly one line with its fields and an ISO-8601 time, no key,
 * secret or admin token appears, and a SIGTERM right after a burst of
 * requests loses none of their lines (they wait in the log's buffer and
 * are written by the stop).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';

const TOKEN = 'access-log-process-token';

/** The JSON lines of the output; a line that is not one fails the test. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the access log of the real process', () => {
  it('writes one parseable line per answered request, with its fields and no secret, and a SIGTERM loses none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-order-api-access-log-'));
    try {
      const server = await spawnServer(dir, TOKEN);
      const admin = async (method: string, path: string, body?: unknown): Promise<any> => {
        const r = await fetch(`${server.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
        return r.json();
      };
      const service = (await admin('POST', '/admin/v1/services', { platform: 'p', name: 'n', rate: '0.01', min: 1, max: 100 })).service.id as number;
      const created = await admin('POST', '/admin/v1/accounts', { name: 'buyer' });
      await admin('POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: '1000', reason: 'test' });
      const headers = { 'x-api-key': created.api_key, 'x-api-secret': created.api_secret, 'content-type': 'application/json' };

      // A burst of more lines than one flush holds, then SIGTERM at once.
      const answered = new Map<string, number>();
      const worker = async (w: number): Promise<void> => {
        for (let i = 0; i < 25; i++) {
          const r = await fetch(`${server.url}/api/v1/order`, { method: 'POST', headers, body: JSON.stringify({ service, target: `https://example.com/${w}/${i}`, quantity: 5 }) });
          answered.set(r.headers.get('request-id')!, r.status);
          await r.arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
      const refused = await fetch(`${server.url}/api/v1/balance`, { headers: { ...headers, 'x-api-secret': 'wrong' } });
      answered.set(refused.headers.get('request-id')!, refused.status);
      // A blocking standard output (the test's pipe) never drops a line.
      const metrics = await (await fetch(`${server.adminUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      expect(metrics).toMatch(/^coa_log_lines_dropped_total 0$/m);
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);

      const output = server.output();
      const lines = jsonLines(output);
      const requests = lines.filter((line) => line['msg'] === 'request' && String(line['route']).startsWith('/api/'));
      expect(requests).toHaveLength(201);
      expect(new Set(requests.map((line) => line['requestId']))).toEqual(new Set(answered.keys()));
      for (const line of requests) {
        expect(line['time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(line['durationMs']).toEqual(expect.any(Number));
        expect(line['status']).toBe(answered.get(line['requestId'] as string));
      }
      expect(requests.filter((line) => line['route'] === '/api/v1/order')).toHaveLength(200);
      expect(requests.find((line) => line['route'] === '/api/v1/order')).toMatchObject({ level: 30, service: 'credit-order-api', method: 'POST', status: 201, code: null, account: created.account.id });
      expect(requests.find((line) => line['route'] === '/api/v1/balance')).toMatchObject({ method: 'GET', status: 401, code: 'AUTH', account: null });
      // The stop's own lines come after every access line.
      const stopped = lines.findIndex((line) => line['msg'] === 'stopped cleanly');
      expect(stopped).toBe(lines.length - 1);
      for (const secret of [created.api_key, created.api_secret, TOKEN]) expect(output).not.toContain(secret);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
