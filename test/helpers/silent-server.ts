/**
 * An HTTP server that accepts connections and never answers: what a hung
 * admin server looks like to a client with a timeout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
