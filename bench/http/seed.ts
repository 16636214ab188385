/**
 * Funded accounts and one service for the benchmarks, two ways:
 *
 *  - through the admin API (POST /admin/v1/services, /accounts,
 *    /accounts/:id/credits), as an operator would: exercises the real path,
 *    about 1,200 accounts/s here;
 *  - directly into a fresh LMDB before the server starts, with the project's
 *    own store (openStore from src/wal) and the same records the server
 *    writes: a service.saved event and `services` row, and per account the
 *    `profiles`, `wallets` and `keys` rows of Registry.create() plus an
 *    account.created and a credits.adjusted event, so GET /admin/v1/verify
 *    still passes. 10,000 accounts per transactionSync; about 100,000
 *    accounts/s here, which is what makes a million-account data set
 *    practical.
 *
 * Direct seeding derives each account's key and secret from a per-seed salt
 * and the account's index, so the credentials of any account can be
 * recomputed without keeping a million of them in memory.
 *
 * Direct seeding can also write already-placed orders (`orders`), spread
 * round-robin over the accounts, as the wallet actor writes an accepted
 * order: an order.placed event, the `orders` row under its storage key and
 * the `orderIndex` row, with the order-id secret in `meta` where the server
 * looks for it. Log seqs, storage keys (creation millisecond, then sequence
 * number) and index keys all ascend, so LMDB only appends; 50,000 orders per
 * transactionSync, about 160,000 orders/s and 300 MiB per million here.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hashSecret } from '../../src/ids/keys.js';
import { multiplyMicro } from '../../src/money/index.js';
import { OrderIds } from '../../src/ids/order-ids.js';
import { lastOrderNumber, noOrders, ORDER_COUNTS_KEY, openStore, orderIndexKey } from '../../src/wal/index.js';
import { withServiceDefaults, checkOrder, checkWallet, type AccountProfile, type LogEvent, type OrderRecord, type ServiceRecord, type WalletRecord } from '../../src/ledger/index.js';
import { admin, type ServerProcess } from './server-process.js';

/** The service every benchmark orders: rate 0.001 credits, so quantity 1000 costs 1 credit. */
export const RATE = '0.001';
export const RATE_MICRO = 1000n;
export const CREDITS = '1000000000';
export const CREDITS_MICRO = 1_000_000_000n * 1_000_000n;
/** RATE_LIMIT_MAX of src/actors/token-bucket.ts: the rate limit never refuses a benchmark order. */
export const RATE_LIMIT = 100_000_000;
/** Quantity of every directly seeded order: 1 credit each at RATE. */
export const SEEDED_ORDER_QUANTITY = 1000;

export interface SeededAccount {
  id: number;
  key: string;
  secret: string;
  /** The account's API v2 key (the v2 scenario orders with it). */
  v2Key: string;
}

export interface Seeded {
  serviceId: number;
  /** How many accounts exist. */
  count: number;
  /** The credentials of account index i (0-based; its id is i + 1). */
  account(i: number): SeededAccount;
  seconds: number;
  how: 'admin' | 'direct';
  /** Stored orders written by the seed (direct seeding only; 0 otherwise). */
  orders: number;
  /** Seconds of `seconds` spent writing those orders. */
  ordersSeconds: number;
  /** A few seeded orders (at most 16, spread evenly): their public ids and account indexes. */
  orderSample: { account: number; id: string }[];
}

export async function seedViaAdmin(server: ServerProcess, count: number, concurrency = 64): Promise<Seeded> {
  const started = performance.now();
  const service = JSON.parse(
    await admin(server, 'POST', '/admin/v1/services', { platform: 'bench', name: 'bench', rate: Number(RATE), min: 1, max: 1_000_000 }),
  ) as { service: { id: number } };
  const accounts: SeededAccount[] = new Array(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const created = JSON.parse(await admin(server, 'POST', '/admin/v1/accounts', { name: `bench-${i}` })) as {
        account: { id: number };
        api_key: string;
        api_secret: string;
      };
      await admin(server, 'POST', `/admin/v1/accounts/${created.account.id}/credits`, { amount: CREDITS, reason: 'bench' });
      const issued = JSON.parse(await admin(server, 'POST', `/admin/v1/accounts/${created.account.id}/v2-key`)) as { v2_key: string };
      accounts[i] = { id: created.account.id, key: created.api_key, secret: created.api_secret, v2Key: issued.v2_key };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return {
    serviceId: service.service.id,
    count,
    account: (i) => accounts[i]!,
    seconds: (performance.now() - started) / 1000,
    how: 'admin',
    orders: 0,
    ordersSeconds: 0,
    orderSample: [],
  };
}

/** Deterministic, unguessable-enough credentials for account index i under a salt (same shapes as src/ids/keys.ts). */
function credentials(salt: Buffer, i: number): { key: string; secret: string; v2Key: string } {
  const index = Buffer.alloc(8);
  index.writeBigUInt64BE(BigInt(i));
  const key = 'key_' + createHash('sha256').update(salt).update('k').update(index).digest('hex').slice(0, 32);
  const secret = 'sec_' + createHash('sha256').update(salt).update('s').update(index).digest('base64url');
  const v2Key = createHash('sha256').update(salt).update('v2').update(index).digest('hex').slice(0, 32);
  return { key, secret, v2Key };
}

export interface DirectSeedOptions {
  /** Accounts per write transaction (default 10,000). */
  batch?: number;
  /** Already-placed orders to write after the accounts, round-robin over them (default 0). */
  orders?: number;
  /** Orders per write transaction (default 50,000). */
  ordersBatch?: number;
  /**
   * When set, every other order is completed (an order.status event, its row
   * and index entry moved) this many orders after it was placed, as an
   * operator working through a backlog would (default: none, all pending).
   */
  completeLag?: number;
  /** Called after every transaction with the accounts (then the orders) written so far. */
  progress?: (written: number, what: 'accounts' | 'orders') => void;
}

/**
 * Writes one service and `count` funded accounts, then `orders` placed
 * orders, into the (fresh, closed) data directory. The server must not be
 * running on it.
 */
export async function seedDirect(dataDir: string, count: number, options: DirectSeedOptions = {}): Promise<Seeded> {
  const started = performance.now();
  const batch = options.batch ?? 10_000;
  const orders = options.orders ?? 0;
  const salt = randomBytes(16);
  if (!Number.isSafeInteger(orders) || orders < 0) throw new Error(`seedDirect: orders must be a non-negative integer, not ${orders}`);
  if (orders > 0 && count === 0) throw new Error('seedDirect: orders need at least one account');
  const service: ServiceRecord = withServiceDefaults({ id: 1, platform: 'bench', name: 'bench', rate: Number(RATE_MICRO), min: 1, max: 1_000_000, enabled: true });
  const credits = Number(CREDITS_MICRO);
  const charge = multiplyMicro(SEEDED_ORDER_QUANTITY, service.rate)!;
  // Order k goes to account k % count, so account i holds ⌊orders / count⌋
  // orders, one more when i < orders % count.
  const ordersOf = (i: number): number => Math.floor(orders / count) + (i < orders % count ? 1 : 0);
  if (orders > 0 && ordersOf(0) * charge > credits) throw new Error(`seedDirect: ${ordersOf(0)} orders of ${charge} micro-credits exceed an account's credits`);
  const store = openStore(dataDir);
  let ordersSeconds = 0;
  let orderSample: Seeded['orderSample'] = [];
  try {
    const existing = store.tables.profiles.getKeysCount() + store.tables.services.getKeysCount();
    if (existing !== 0) throw new Error(`seedDirect: ${dataDir} is not empty`);
    const atMs = Date.now();
    let seq = store.nextSeq;
    const orderIdSecret = orders > 0 ? OrderIds.newSecret() : null;
    store.root.transactionSync(() => {
      const event: LogEvent = { type: 'service.saved', atMs, service };
      store.log.put(seq++, event);
      store.tables.services.put(service.id, service);
      // As src/app/storage.ts orderIdSecret() would create it on first start.
      if (orderIdSecret !== null) store.tables.meta.put('orderIdSecret', orderIdSecret);
    });
    for (let from = 0; from < count; from += batch) {
      const to = Math.min(count, from + batch);
      store.root.transactionSync(() => {
        for (let i = from; i < to; i++) {
          const id = i + 1;
          const { key, secret, v2Key } = credentials(salt, i);
          const name = `bench-${i}`;
          const v2KeyHash = hashSecret(v2Key).toString('hex');
          const profile: AccountProfile = { id, name, apiKey: key, secretHash: hashSecret(secret).toString('hex'), v2KeyHash, createdAtMs: atMs };
          // The wallet row is written once, already holding what the orders below take from it.
          const balance = credits - ordersOf(i) * charge;
          const wallet: WalletRecord = checkWallet({ id, credits: balance, banned: false, rateLimitPerMinute: RATE_LIMIT, unlimitedExpiresMs: null });
          const created: LogEvent = { type: 'account.created', atMs, account: id, name, credits: 0, rateLimitPerMinute: RATE_LIMIT };
          const funded: LogEvent = { type: 'credits.adjusted', atMs, account: id, amount: credits, reason: 'bench seed', balance: credits };
          store.log.put(seq++, created);
          store.log.put(seq++, funded);
          store.tables.profiles.put(id, profile);
          store.tables.wallets.put(id, wallet);
          store.tables.keys.put(key, id);
          store.tables.v2keys.put(v2KeyHash, id);
        }
      });
      options.progress?.(to, 'accounts');
    }
    if (orderIdSecret !== null) {
      const ordersStarted = performance.now();
      const written = writeOrders(store, seq, orderIdSecret, count, orders, { service, credits, charge }, options);
      orderSample = written.sample;
      // The counts row the group commit keeps (else the server counts the index at its first start).
      // (A block body: a callback that returns the put's promise would keep the transaction open.)
      store.root.transactionSync(() => {
        store.tables.meta.put(ORDER_COUNTS_KEY, { ...noOrders(), pending: orders - written.completed, completed: written.completed });
      });
      ordersSeconds = (performance.now() - ordersStarted) / 1000;
    }
  } finally {
    await store.close();
  }
  return {
    serviceId: 1,
    count,
    account: (i) => ({ id: i + 1, ...credentials(salt, i) }),
    seconds: (performance.now() - started) / 1000,
    how: 'direct',
    orders,
    ordersSeconds,
    orderSample,
  };
}

/**
 * The orders of seedDirect, from log seq `seq` on: what WalletActor.send
 * writes for an accepted API order (decideOrder in src/ledger/decide.ts),
 * with ids from the server's own OrderIds under the stored secret. Returns
 * a sample of the ids.
 */
function writeOrders(
  store: ReturnType<typeof openStore>,
  seq: number,
  secret: Buffer,
  count: number,
  orders: number,
  money: { service: ServiceRecord; credits: number; charge: number },
  options: DirectSeedOptions,
): { sample: Seeded['orderSample']; completed: number } {
  const { service, credits, charge } = money;
  const lag = options.completeLag ?? 0;
  // The last `lag` orders, so the one placed `lag` orders ago can be completed.
  const recent: OrderRecord[] = new Array(lag);
  let completed = 0;
  const batch = options.ordersBatch ?? 50_000;
  const ids = new OrderIds(secret);
  const sampleEvery = Math.max(1, Math.floor(orders / 16));
  const sample: Seeded['orderSample'] = [];
  let wallMs = 0;
  const firstNumber = lastOrderNumber(store) + 1;
  for (let from = 0; from < orders; from += batch) {
    const to = Math.min(orders, from + batch);
    store.root.transactionSync(() => {
      for (let k = from; k < to; k++) {
        // Never backwards, so storage keys and index keys keep ascending.
        wallMs = Math.max(wallMs, Date.now());
        const next = ids.next(wallMs);
        const accountIndex = k % count;
        const account = accountIndex + 1;
        // The balance right after this order: the account's (⌊k / count⌋ + 1)-th.
        const balance = credits - (Math.floor(k / count) + 1) * charge;
        const order: OrderRecord = {
          id: next.id,
          account,
          service: service.id,
          target: `https://example.com/seed/${k}`,
          quantity: SEEDED_ORDER_QUANTITY,
          rate: service.rate,
          charge,
          debit: charge,
          status: 'pending',
          remains: null,
          channel: 'api',
          unlimited: false,
          createdAtMs: wallMs,
          seq: next.seq,
          number: firstNumber + k,
        };
        const placed: LogEvent = {
          type: 'order.placed',
          atMs: wallMs,
          account,
          order: order.id,
          number: order.number!,
          service: service.id,
          quantity: order.quantity,
          rate: order.rate,
          charge,
          debit: charge,
          balance,
          channel: 'api',
          idempotencyKey: null,
        };
        store.log.put(seq++, placed);
        store.tables.orders.put(ids.storageKey(order.id)!, checkOrder(order));
        store.tables.orderIndex.put(orderIndexKey(order), account);
        store.tables.numbers.put(order.number!, order.id);
        if (k % sampleEvery === 0 && sample.length < 16) sample.push({ account: accountIndex, id: order.id });
        if (lag > 0) {
          const old = recent[k % lag];
          recent[k % lag] = order;
          if (old !== undefined && (k - lag) % 2 === 0) {
            // The old order's account has placed ⌊(k − b) / count⌋ + 1 orders by now (b its index); completing refunds nothing.
            const b = old.account - 1;
            const oldBalance = credits - (Math.floor((k - b) / count) + 1) * charge;
            const done: OrderRecord = { ...old, status: 'completed' };
            const moved: LogEvent = { type: 'order.status', atMs: wallMs, account: old.account, order: old.id, from: 'pending', to: 'completed', remains: null, refund: 0, balance: oldBalance };
            store.log.put(seq++, moved);
            store.tables.orders.put(ids.storageKey(old.id)!, checkOrder(done));
            store.tables.orderIndex.remove(orderIndexKey(old));
            store.tables.orderIndex.put(orderIndexKey(done), old.account);
            completed++;
          }
        }
      }
    });
    options.progress?.(to, 'orders');
  }
  return { sample, completed };
}

/** At most `limit` account indexes spread evenly over all of them (every one when count ≤ limit). */
export function spreadIndexes(count: number, limit: number): number[] {
  if (count <= limit) return Array.from({ length: count }, (_, i) => i);
  const out: number[] = new Array(limit);
  for (let j = 0; j < limit; j++) out[j] = Math.floor((j * count) / limit);
  return out;
}
