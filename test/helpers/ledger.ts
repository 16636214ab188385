/**
 * Builds hand-made ledgers for verify tests: a consistent log plus the table
 * rows the server would have written, computed the way the decision (src/ledger/decide.ts) does.
 * Tests tamper with `events` or `rows` before `write()` to break exactly one
 * invariant.
 */
import { chargeFor, FINAL_STATUSES, isUnlimited, planExpiryAfter, planPriceInr, refundFor, withServiceDefaults, type IdempotencyRecord, type LogEvent, type OrderRecord, type OrderExtras, type OrderStatus, type OrderType, type ServiceRecord, type WalletRecord } from '../../src/ledger/index.js';
import { leaseKey, orderIndexKey, type TableName } from '../../src/wal/index.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { ORDER_COUNTS_KEY } from '../../src/wal/order-counts.js';
import { rmSync } from 'node:fs';
import { afterEach } from 'vitest';
import { verifyLedger, type VerifyReport } from '../../src/ops/index.js';
import { tempDir } from './server.js';

export const CREDIT = 1_000_000;

export class Ledger {
  events: LogEvent[] = [];
  /** Table rows by table, keyed like the server keys them. */
  /** Orders left out of the status index (to break it). */
  unindexed = new Set<string>();
  /** Orders under a lease left out of the lease index (to break it). */
  unleased = new Set<string>();
  /** A counts row to write (the group commit keeps one; hand-made ledgers have none unless set). */
  countsRow: unknown = undefined;
  rows: Record<'wallets' | 'orders' | 'idempotency', Map<string | number, any>> = {
    wallets: new Map(),
    orders: new Map(),
    idempotency: new Map(),
  };
  private atMs = 1_700_000_000_000;
  private orderSeq = 0;
  /** Seq of the first event; tests can start elsewhere to make a gap. */
  seqOf: (index: number) => number = (i) => i + 1;

  private now(): number {
    return (this.atMs += 1000);
  }

  wallet(id: number): WalletRecord {
    return this.rows.wallets.get(id) as WalletRecord;
  }

  order(id: string): OrderRecord {
    return this.rows.orders.get(id) as OrderRecord;
  }

  account(id: number): this {
    this.events.push({ type: 'account.created', atMs: this.now(), account: id, name: `acct${id}`, credits: 0, rateLimitPerMinute: 60 });
    this.rows.wallets.set(id, { id, credits: 0, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null } satisfies WalletRecord);
    return this;
  }

  credit(id: number, amount: number): this {
    const w = this.wallet(id);
    w.credits += amount;
    this.events.push({ type: 'credits.adjusted', atMs: this.now(), account: id, amount, reason: 'test', balance: w.credits });
    return this;
  }

  /** A service.saved as the catalogue logs it; place() orders service 1. */
  service(fields: Partial<ServiceRecord> = {}, id = 1): this {
    const service = withServiceDefaults({ id, platform: 'test', name: `service ${id}`, rate: 100_000, min: 1, max: 1_000_000, enabled: true, ...fields });
    this.events.push({ type: 'service.saved', atMs: this.now(), service });
    return this;
  }

  /** A grant as the actor makes it: the window and the price from the same rules. */
  plan(id: number, months = 1): this {
    const at = this.now();
    const w = this.wallet(id);
    w.unlimitedExpiresMs = planExpiryAfter(at, w.unlimitedExpiresMs, months);
    this.events.push({ type: 'plan.granted', atMs: at, account: id, months, priceInr: planPriceInr(months), expiresMs: w.unlimitedExpiresMs });
    return this;
  }

  /** An order as the actor places it; `type` and `extras` (e.g. drip-feed runs) go on both the event and the row. */
  place(id: number, orderId: string, quantity: number, rate: number, options: { idempotencyKey?: string; extras?: OrderExtras; type?: OrderType } = {}): this {
    const w = this.wallet(id);
    const at = this.now();
    const unlimited = isUnlimited(w, at);
    const { extras } = options;
    const charge = chargeFor(quantity, rate, extras?.runs)!;
    const debit = unlimited ? 0 : charge;
    w.credits -= debit;
    this.events.push({
      type: 'order.placed',
      atMs: at,
      account: id,
      order: orderId,
      service: 1,
      quantity,
      rate,
      charge,
      debit,
      balance: w.credits,
      channel: 'api',
      idempotencyKey: options.idempotencyKey ?? null,
      ...(options.type === undefined ? {} : { orderType: options.type }),
      ...(extras === undefined ? {} : { extras }),
    });
    const row: OrderRecord = {
      id: orderId,
      account: id,
      service: 1,
      target: 'https://example.com/p/1',
      quantity,
      rate,
      charge,
      debit,
      status: 'pending',
      remains: null,
      channel: 'api',
      unlimited,
      createdAtMs: at,
      seq: ++this.orderSeq,
      ...(options.type === undefined ? {} : { type: options.type }),
      ...(extras === undefined ? {} : { extras: { ...extras } }),
    };
    this.rows.orders.set(orderId, row);
    if (options.idempotencyKey !== undefined) {
      this.rows.idempotency.set(`${id}:${options.idempotencyKey}`, {
        fingerprint: 'fp',
        status: 201,
        body: '{}',
        order: orderId,
        atMs: at,
      } satisfies IdempotencyRecord);
    }
    return this;
  }

  /** A claim as the actor makes it: pending to processing for `worker`, with a lease of `leaseSeconds` from its time. */
  claim(orderId: string, worker: string, leaseSeconds = 60): this {
    const o = this.order(orderId);
    const at = this.now();
    const leaseExpiresMs = at + leaseSeconds * 1000;
    const balance = this.wallet(o.account).credits;
    this.events.push({ type: 'order.status', atMs: at, account: o.account, order: orderId, from: o.status, to: 'processing', remains: null, refund: 0, balance, worker, leaseExpiresMs });
    Object.assign(o, { status: 'processing', worker, leaseExpiresMs });
    return this;
  }

  /** The holder extends its lease: it ends `leaseSeconds` from the event's time. */
  extend(orderId: string, leaseSeconds = 60): this {
    const o = this.order(orderId);
    const at = this.now();
    o.leaseExpiresMs = at + leaseSeconds * 1000;
    this.events.push({ type: 'order.lease_extended', atMs: at, account: o.account, order: orderId, worker: o.worker!, leaseExpiresMs: o.leaseExpiresMs });
    return this;
  }

  /** The order back in the claim queue: released by its holder, or (expired) once its lease has ended, the time moved there. */
  release(orderId: string, cause: 'released' | 'expired'): this {
    const o = this.order(orderId);
    if (cause === 'expired') this.atMs = Math.max(this.atMs, o.leaseExpiresMs! - 1000);
    this.events.push({ type: 'order.released', atMs: this.now(), account: o.account, order: orderId, worker: o.worker!, cause });
    o.status = 'pending';
    delete o.worker;
    delete o.leaseExpiresMs;
    return this;
  }

  move(orderId: string, to: OrderStatus, remains: number | null = null): this {
    const o = this.order(orderId);
    const w = this.wallet(o.account);
    const refund = refundFor(o, to, remains);
    w.credits += refund;
    const at = this.now();
    this.events.push({ type: 'order.status', atMs: at, account: o.account, order: orderId, from: o.status, to, remains, refund, balance: w.credits });
    o.status = to;
    o.remains = to === 'partial' ? remains : null;
    // As the actor's move: moving on ends a lease.
    delete o.leaseExpiresMs;
    // As the actor's move: a final state starts the refill window.
    if (FINAL_STATUSES.has(to)) o.finishedAtMs = at;
    return this;
  }

  /** Finds the last event of a type (for tampering). */
  last<T extends LogEvent['type']>(type: T): Extract<LogEvent, { type: T }> {
    for (let i = this.events.length - 1; i >= 0; i--) if (this.events[i]!.type === type) return this.events[i] as Extract<LogEvent, { type: T }>;
    throw new Error(`no ${type} event`);
  }

  /** Seq of the last event of a type, as `write()` will number it. */
  seqOfLast(type: LogEvent['type']): number {
    for (let i = this.events.length - 1; i >= 0; i--) if (this.events[i]!.type === type) return this.seqOf(i);
    throw new Error(`no ${type} event`);
  }

  /** Writes the ledger into a fresh store in one transaction; the caller closes it. */
  write(dir = tempDir()): { store: Store; dir: string } {
    const store = openStore(dir);
    store.root.transactionSync(() => {
      this.events.forEach((event, i) => store.log.put(this.seqOf(i), event));
      for (const table of Object.keys(this.rows) as (keyof Ledger['rows'] & TableName)[]) {
        for (const [key, value] of this.rows[table]) store.tables[table].put(key, value);
      }
      // The status index, as the wallet actor keeps it (tests may drop rows from it).
      for (const order of this.rows.orders.values() as Iterable<OrderRecord>) {
        if (!this.unindexed.has(order.id)) store.tables.orderIndex.put(orderIndexKey(order), order.account);
        if (order.leaseExpiresMs !== undefined && !this.unleased.has(order.id)) store.tables.leases.put(leaseKey(order), order.account);
      }
      if (this.countsRow !== undefined) store.tables.meta.put(ORDER_COUNTS_KEY, this.countsRow);
    });
    return { store, dir };
  }
}

/**
 * For a test file: `verify(ledger)` writes the ledger into a fresh store and
 * verifies it; every store is closed and removed after each test. `opened`
 * lists the stores of the running test.
 */
export function useLedgerStores(): { verify(ledger: Ledger): VerifyReport; opened: { store: Store; dir: string }[] } {
  const opened: { store: Store; dir: string }[] = [];
  afterEach(async () => {
    for (const { store, dir } of opened.splice(0)) {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return {
    opened,
    verify(ledger) {
      const written = ledger.write();
      opened.push(written);
      return verifyLedger(written.store);
    },
  };
}
