import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/cli/admin-client.js';

describe('AdminClient', () => {
  it('gives up on a server that never answers, with a plain sentence', async () => {
    // Accepts the connection and then says nothing.
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const client = new AdminClient(url, 't', 200);
      await expect(client.send({ method: 'GET', path: '/admin/v1/accounts' })).rejects.toThrow(
        `the server at ${url} did not answer within 0.2 seconds.`,
      );
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
