/**
 * The durable orders, as the order path and the handlers read them: by
 * public id (decrypted to the key the order is stored under) or by number
 * (API v2's id, through the `numbers` table), and fresh ids for new orders,
 * each with its storage key so that nothing decrypts an id it just made.
 */
import type { NewOrderId, OrderIds } from '../ids/index.js';
import type { OrderRecord } from '../ledger/index.js';
import type { Store } from './store.js';

export class StoredOrders {
  constructor(
    private readonly store: Pick<Store, 'tables'>,
    readonly ids: OrderIds,
  ) {}

  /** A new order's id, storage key and sequence number. */
  newId(wallMs: number): NewOrderId {
    return this.ids.next(wallMs);
  }

  /**
   * The key an order is stored under: its id decrypted, or the id itself
   * when the text cannot be one of this server's ids (such text names no
   * stored order).
   */
  keyOf(id: string): string {
    return this.ids.storageKey(id) ?? id;
  }

  /** A durable order by its public id, or undefined (also for text that cannot be an id). */
  read(id: string): OrderRecord | undefined {
    const key = this.ids.storageKey(id);
    // Stryker disable next-line ConditionalExpression: equivalent: lmdb-js finds no row under a null key (none is ever stored under one), so the look-up skipped here would answer undefined as well
    return key === null ? undefined : (this.store.tables.orders.get(key) as OrderRecord | undefined);
  }

  /** A durable order by its number (API v2's order id), or undefined. */
  readByNumber(number: number): OrderRecord | undefined {
    const id = this.store.tables.numbers.get(number) as string | undefined;
    return id === undefined ? undefined : this.read(id);
  }
}
