/**
 * A port already in use refuses the server that asks for it second. uWS
 * would otherwise share the port (SO_REUSEPORT) and the two servers would
 * split the connections, each with its own data: orders sent to one
 * address landing in two ledgers.
 */
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';

describe('a port in use', () => {
  it('refuses a second server on the customer port, and the first keeps every connection', async () => {
    const first = await startTestServer();
    try {
      const port = Number(new URL(first.url).port);
      await expect(startTestServer({ config: { port } })).rejects.toThrow(`cannot listen on 127.0.0.1:${port}; is the port in use?`);
      // Every connection still reaches the first server.
      for (let i = 0; i < 20; i++) expect((await fetch(`${first.url}/healthz`, { headers: { connection: 'close' } })).status).toBe(200);
    } finally {
      await first.close();
    }
  });

  it('refuses a second server on the admin port', async () => {
    const first = await startTestServer();
    try {
      const adminPort = Number(new URL(first.adminUrl).port);
      await expect(startTestServer({ config: { adminPort } })).rejects.toThrow(`cannot listen on 127.0.0.1:${adminPort}; is the port in use?`);
    } finally {
      await first.close();
    }
  });
});
