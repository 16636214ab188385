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
 */
import { createHash, randomBytes } from 'node:crypto';
import { hashSecret } from '../../src/ids.js';
import { checkWallet, openStore, type AccountProfile, type LogEvent, type ServiceRecord, type WalletRecord } from '../../src/wal/index.js';
import { admin, type ServerProcess } from './server-process.js';

/** The service every benchmark orders: rate 0.001 credits, so quantity 1000 costs 1 credit. */
export const RATE = '0.001';
export const RATE_MICRO = 1000n;
export const CREDITS = '1000000000';
export const CREDITS_MICRO = 1_000_000_000n * 1_000_000n;
/** RATE_LIMIT_MAX of src/actors/token-bucket.ts: the rate limit never refuses a benchmark order. */
export const RATE_LIMIT = 100_000_000;

export interface SeededAccount {
  id: number;
  key: string;
  secret: string;
}

export interface Seeded {
  serviceId: number;
  /** How many accounts exist. */
  count: number;
  /** The credentials of account index i (0-based; its id is i + 1). */
  account(i: number): SeededAccount;
  seconds: number;
  how: 'admin' | 'direct';
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
      accounts[i] = { id: created.account.id, key: created.api_key, secret: created.api_secret };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return {
    serviceId: service.service.id,
    count,
    account: (i) => accounts[i]!,
    seconds: (performance.now() - started) / 1000,
    how: 'admin',
  };
}

/** Deterministic, unguessable-enough credentials for account index i under a salt (same shapes as src/ids.ts). */
function credentials(salt: Buffer, i: number): { key: string; secret: string } {
  const index = Buffer.alloc(8);
  index.writeBigUInt64BE(BigInt(i));
  const key = 'key_' + createHash('sha256').update(salt).update('k').update(index).digest('hex').slice(0, 32);
  const secret = 'sec_' + createHash('sha256').update(salt).update('s').update(index).digest('base64url');
  return { key, secret };
}

export interface DirectSeedOptions {
  /** Accounts per write transaction (default 10,000). */
  batch?: number;
  /** Called after every transaction with the accounts written so far. */
  progress?: (written: number) => void;
}

/**
 * Writes one service and `count` funded accounts into the (fresh, closed)
 * data directory. The server must not be running on it.
 */
export async function seedDirect(dataDir: string, count: number, options: DirectSeedOptions = {}): Promise<Seeded> {
  const started = performance.now();
  const batch = options.batch ?? 10_000;
  const salt = randomBytes(16);
  const store = openStore(dataDir);
  try {
    const existing = store.tables.profiles.getKeysCount() + store.tables.services.getKeysCount();
    if (existing !== 0) throw new Error(`seedDirect: ${dataDir} is not empty`);
    const atMs = Date.now();
    let seq = store.nextSeq;
    const service: ServiceRecord = { id: 1, platform: 'bench', name: 'bench', rate: Number(RATE_MICRO), min: 1, max: 1_000_000, enabled: true };
    const credits = Number(CREDITS_MICRO);
    store.root.transactionSync(() => {
      const event: LogEvent = { type: 'service.saved', atMs, service };
      store.log.put(seq++, event);
      store.tables.services.put(service.id, service);
    });
    for (let from = 0; from < count; from += batch) {
      const to = Math.min(count, from + batch);
      store.root.transactionSync(() => {
        for (let i = from; i < to; i++) {
          const id = i + 1;
          const { key, secret } = credentials(salt, i);
          const name = `bench-${i}`;
          const profile: AccountProfile = { id, name, apiKey: key, secretHash: hashSecret(secret).toString('hex'), createdAtMs: atMs };
          const wallet: WalletRecord = checkWallet({ id, credits, banned: false, rateLimitPerMinute: RATE_LIMIT, unlimitedExpiresMs: null });
          const created: LogEvent = { type: 'account.created', atMs, account: id, name, credits: 0, rateLimitPerMinute: RATE_LIMIT };
          const funded: LogEvent = { type: 'credits.adjusted', atMs, account: id, amount: credits, reason: 'bench seed', balance: credits };
          store.log.put(seq++, created);
          store.log.put(seq++, funded);
          store.tables.profiles.put(id, profile);
          store.tables.wallets.put(id, wallet);
          store.tables.keys.put(key, id);
        }
      });
      options.progress?.(to);
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
  };
}

/** At most `limit` account indexes spread evenly over all of them (every one when count ≤ limit). */
export function spreadIndexes(count: number, limit: number): number[] {
  if (count <= limit) return Array.from({ length: count }, (_, i) => i);
  const out: number[] = new Array(limit);
  for (let j = 0; j < limit; j++) out[j] = Math.floor((j * count) / limit);
  return out;
}
