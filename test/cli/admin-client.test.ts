import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/cli/admin-client.js';
import { silentServer } from '../helpers/silent-server.js';

describe('AdminClient', () => {
  it('gives up on a server that never answers, with a plain sentence', async () => {
    const server = await silentServer();
    const { url } = server;
    try {
      const client = new AdminClient(url, 't', 200);
      await expect(client.send({ method: 'GET', path: '/admin/v1/accounts' })).rejects.toThrow(
        `the server at ${url} did not answer within 0.2 seconds.`,
      );
    } finally {
      await server.close();
    }
  });
});
