/**
 * API v2 driven by a real reseller client: PHP's curl through the client
 * class panels hand out (docs/examples/api-v2-client.php), sending
 * form-encoded fields, and `Expect: 100-continue` for a long comment list.
 * Skips, saying so, where PHP or its curl extension is missing; under
 * CI=true that fails instead (test/helpers/tools.ts).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/server.js';
import { EXAMPLE_MAX, EXAMPLE_MIN, EXAMPLE_RATE, TYPE_EXAMPLES } from './order-type-examples.js';
import { requireTool } from '../helpers/tools.js';

const missing = requireTool('php-curl', "the API v2 test with PHP's curl");

const SCRIPT = fileURLToPath(new URL('./php/reseller.php', import.meta.url));
const ORDER_TYPES_SCRIPT = fileURLToPath(new URL('./php/order-types.php', import.meta.url));

/** Runs a script without blocking the event loop (the server under test shares it); `input` goes to its stdin. */
function php(args: string[], script = SCRIPT, input = ''): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('php', [script, ...args]);
    child.stdin.end(input);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe.skipIf(missing !== null)("API v2 through PHP's curl and the usual client class", () => {

  const t = useServer({ perTest: true, config: { currency: 'USD' } });

  it('every action answers in the shapes the class decodes; a long comment list goes through Expect: 100-continue', async () => {
    const service = await t.createService({ name: 'Likes', rate: '0.002', min: 10, max: 10_000, refill: true, cancel: true, dripfeed: true });
    const comments = await t.createService({ name: 'Comments', rate: '0.05', min: 1, max: 1000, type: 'Custom Comments' });
    const creds = await t.createAccount('php-reseller', '50');
    const key = await t.issueV2Key(creds.id);

    const run = await php([`${t.url}/api/v2`, key, String(service), String(comments)]);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const r = JSON.parse(run.out);

    expect(r.services).toHaveLength(2);
    expect(r.services[0]).toEqual({ service, name: 'Likes', type: 'Default', category: 'instagram', rate: '2', min: '10', max: '10000', refill: true, cancel: true, dripfeed: true, average_time: 'Not enough data' });
    expect(r.balance).toEqual({ balance: '50', currency: 'USD' });
    const [first, second] = r.orders.map((o: { order: number }) => o.order);
    expect(second).toBe(first + 1);
    expect(r.status).toEqual({ charge: '0.2', start_count: '0', status: 'Pending', remains: '100', currency: 'USD' });
    expect(r.multiStatus).toEqual({
      [first]: { charge: '0.2', start_count: '0', status: 'Pending', remains: '100', currency: 'USD' },
      // Drip-feed: 200 × 2 runs × 0.002; remains counts both runs' units.
      [second]: { charge: '0.8', start_count: '0', status: 'Pending', remains: '400', currency: 'USD' },
      '999999': { error: 'Incorrect order ID' },
    });
    expect(r.cancel).toEqual([
      { order: second, cancel: 1 },
      { order: 999999, cancel: { error: 'Incorrect order ID' } },
    ]);
    // A pending order cannot be refilled; the sentence says why.
    expect(r.refill.error).toMatch(/refill/i);
    expect(r.multiRefill).toEqual([{ order: first, refill: { error: expect.stringMatching(/refill/i) } }]);
    expect(r.refillStatus).toEqual({ error: 'Incorrect refill ID' });
    expect(r.multiRefillStatus).toEqual([{ refill: 999999, status: { error: 'Incorrect refill ID' } }]);

    expect(r.bodyBytes).toBeGreaterThan(1024);
    expect(r.expectSent).toBe(true);
    // The server said continue before the body was sent, then answered.
    expect(r.statusLines).toEqual(['HTTP/1.1 100 Continue', 'HTTP/1.1 200 OK']);
    expect(r.longByRawCurl.order).toBe(second + 1);
    expect(r.longByClass.order).toBe(second + 2);
    const long = await t.admin('GET', `/admin/v1/orders/${r.longByClass.order}`);
    expect(long.body.order.quantity).toBe(60);
    expect(r.badKey).toEqual({ error: 'Invalid API key' });

    // 50 − 0.2 − 0.8 (refunded by the cancel) − 2 × 60 × 0.05.
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(43.8);
    expect((await t.admin('GET', '/admin/v1/verify')).body.ok).toBe(true);
  });

  it('every order type: its example payload is placed through the class, each malformed one refused with its sentence, nothing charged for those', async () => {
    const creds = await t.createAccount('php-types', '1000');
    const key = await t.issueV2Key(creds.id);
    const link = 'https://instagram.com/p/php-types';
    const cases: { service: number; link: string; fields: Record<string, string | number> }[] = [];
    const expected: unknown[] = [];
    let spent = 0;
    for (const example of TYPE_EXAMPLES) {
      const service = await t.createService({ name: example.type, rate: EXAMPLE_RATE, min: EXAMPLE_MIN, max: EXAMPLE_MAX, type: example.type });
      cases.push({ service, link, fields: example.fields });
      expected.push({ order: expect.any(Number) });
      spent += example.quantity * 0.5;
      for (const [fields, sentence] of example.malformed) {
        cases.push({ service, link, fields });
        expected.push({ error: expect.stringMatching(sentence) });
      }
    }
    const run = await php([`${t.url}/api/v2`, key], ORDER_TYPES_SCRIPT, JSON.stringify(cases));
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const answers = JSON.parse(run.out);
    expect(answers).toEqual(expected);
    let i = 0;
    for (const example of TYPE_EXAMPLES) {
      const order = (await t.admin('GET', `/admin/v1/orders/${answers[i].order}`)).body.order;
      expect(order).toMatchObject({ type: example.type, quantity: example.quantity, target: link, ...example.shown });
      i += 1 + example.malformed.length;
    }
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(1000 - spent);
    expect((await t.admin('GET', '/admin/v1/verify')).body.ok).toBe(true);
  });
});
