/**
 * A Subscriptions order through the client class panels hand out
 * (docs/examples/api-v2-client.php), run by PHP's curl exactly as the API
 * pages show it: order() with username, min, max, posts, delay and expiry,
 * then status() and cancel() of its id, and a malformed one refused by a
 * sentence naming the field. Skips, saying so, where PHP or its curl
 * extension is missing; under CI=true that fails instead.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/server.js';
import { requireTool } from '../helpers/tools.js';

const missing = requireTool('php-curl', "the API v2 subscriptions test with PHP's curl");
const SCRIPT = fileURLToPath(new URL('./php/subscriptions.php', import.meta.url));

describe.skipIf(missing !== null)("Subscriptions through PHP's curl and the usual client class", () => {
  const t = useServer();

  it('places, shows and cancels a subscription, charging nothing, and refuses a malformed one by name', async () => {
    const service = await t.createService({ name: 'Auto likes', rate: '0.01', min: 100, max: 1000, type: 'Subscriptions' });
    const creds = await t.createAccount('php-reseller', '50');
    const key = await t.issueV2Key(creds.id);
    const expiry = new Date(t.clock.wallMs() + 30 * 86_400_000);
    const ddmmyyyy = `${String(expiry.getUTCDate()).padStart(2, '0')}/${String(expiry.getUTCMonth() + 1).padStart(2, '0')}/${expiry.getUTCFullYear()}`;
    // Asynchronous: the server under test shares this event loop.
    const run = await promisify(execFile)('php', [SCRIPT, `${t.url}/api/v2`, key, String(service), ddmmyyyy]);
    expect(run.stderr).toBe('');
    const r = JSON.parse(run.stdout);
    const id = r.placed.order as number;
    expect(Number.isSafeInteger(id)).toBe(true);
    expect(r.status).toEqual({ status: 'Active', expiry: ddmmyyyy, posts: '0', orders: [] });
    expect(r.cancel).toEqual([{ order: id, cancel: 1 }]);
    expect(r.canceled).toEqual({ status: 'Canceled', expiry: ddmmyyyy, posts: '0', orders: [] });
    expect(r.malformed).toEqual({ error: "Field 'delay' must be one of 0, 5, 10, 15, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300, 360, 420, 480, 540, 600 (minutes)." });
    expect((await t.api('GET', '/api/v1/balance', creds)).body.credits).toBe(50);
  });
});
