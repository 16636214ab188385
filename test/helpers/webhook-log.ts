/**
 * What the webhook pieces' own tests write into a real store: the two
 * forms of a message in the log (a placement naming its endpoints, and a
 * `webhook.queued` event), an event that holds no message, and a store with
 * its group commit in a temporary directory.
 */
import type { LogEvent } from '../../src/ledger/index.js';
import { LmdbGroupCommit, type Store } from '../../src/wal/index.js';
import { tempStores } from './temp-store.js';

/** A placement of `order` that names `webhooks`: one order.updated message to each. */
export function placed(order: string, webhooks: number[], atMs = 1_000): LogEvent {
  return { type: 'order.placed', atMs, account: 1, order, service: 1, quantity: 5, rate: 1, charge: 5, debit: 5, balance: 0, channel: 'api', idempotencyKey: null, number: 1, webhooks };
}

/** A later change of `order` for one endpoint, as the outbox writes it. */
export function queued(webhook: number, order: string, status: 'processing' | 'completed' = 'processing', atMs = 2_000): LogEvent {
  const id = new Uint8Array(16).fill(webhook + order.length + (status === 'completed' ? 1 : 0));
  return { type: 'webhook.queued', atMs, account: 1, webhook, id, order: { id: order, number: 1, status, quantity: 5, charge: 5, startCount: null, remains: 0 } };
}

/** An event that holds no message. */
export function other(atMs = 1_000): LogEvent {
  return { type: 'webhook.failing', atMs, account: 1, webhook: 99, reason: 'not a message' };
}

/** Temporary stores with their group commit; `cleanup` is an afterEach hook. */
export function tempLogs(prefix: string): { open(): { store: Store; wal: LmdbGroupCommit; dir: string }; cleanup(): Promise<void> } {
  const stores = tempStores(prefix);
  const wals: LmdbGroupCommit[] = [];
  return {
    open() {
      const { store, dir } = stores.open();
      const wal = new LmdbGroupCommit(store, { onFatal: (error) => { throw error; } });
      wals.push(wal);
      return { store, wal, dir };
    },
    async cleanup() {
      for (const wal of wals.splice(0)) await wal.close().catch(() => {});
      await stores.cleanup();
    },
  };
}
