/**
 * An order's placement is encoded once: the group commit puts the order
 * row's bytes in the orders table and, with what only the event holds, in
 * the log, and every read of the log sees the whole order.placed event
 * again. Stores written before this form (store format 1, every event
 * whole) are read, verified and written on as they are. The placements are
 * made by the ledger's own decision, as the wallet actor makes them.
 */
import { rmSync } from 'node:fs';
import { open, type Database } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { decide, initialState, withServiceDefaults, type Command, type LogEvent, type OrderRecord, type WalletRecord } from '../../src/ledger/index.js';
import { verifyLedger } from '../../src/ops/index.js';
import { LmdbGroupCommit, openStore, orderIndexKey, STORE_FORMAT, STRUCTURES_KEY, TABLE_NAMES, type Store, type TableName, type WalEntry } from '../../src/wal/index.js';
import { readingPlacements, ROW_FIELDS, sharesRow, storedPlacement, wholePlacement } from '../../src/wal/placement-record.js';
import { CREDIT, Ledger } from '../helpers/ledger.js';
import { tempDir } from '../helpers/server.js';

type Placed = Extract<LogEvent, { type: 'order.placed' }>;

const service = withServiceDefaults({ id: 1, platform: 'test', name: 'service 1', rate: 100_000, min: 1, max: 1_000_000, enabled: true });

/** An order placement's WAL entry as the wallet actor builds it, from `decide`. */
function placement(wallet: WalletRecord, orderId: string, number: number, options: { idempotencyKey?: string; webhooks?: number[] } = {}): { entry: WalEntry; event: Placed; row: OrderRecord } {
  const idempotency = options.idempotencyKey === undefined ? null : { key: options.idempotencyKey, fingerprint: 'fp' };
  const command: Command = {
    kind: 'order',
    requestId: 'req_1',
    channel: 'api',
    orderId,
    seq: number,
    number,
    prior: null,
    request: { ok: true, payload: { serviceId: 1, target: 'https://example.com/p/1', quantity: 1000 }, service, idempotency, forceJoin: null },
  };
  const decision = decide(initialState(wallet, 0), command, { monotonicMs: 0, wallMs: 1_700_000_100_000 + number });
  const row = decision.order!;
  let event = decision.events[0] as Placed;
  if (options.webhooks !== undefined) event = Object.assign({}, event, { webhooks: options.webhooks });
  const entry: WalEntry = {
    events: [event],
    puts: [
      { table: 'wallets', key: wallet.id, value: decision.state.wallet },
      { table: 'orders', key: row.id, value: row },
      { table: 'orderIndex', key: orderIndexKey(row), value: row.account },
      { table: 'numbers', key: number, value: row.id },
    ],
  };
  return { entry, event, row };
}

/** The seqs of the log's order.placed events, oldest first. */
function placedSeqs(store: Store): number[] {
  return [...store.log.getRange({})].filter(({ value }) => (value as LogEvent).type === 'order.placed').map(({ key }) => key);
}

/** Whether the log keeps the event at `seq` with the very bytes the orders table keeps for `orderKey`. */
function logHoldsRowBytes(store: Store, seq: number, orderKey: string): boolean {
  const logged = store.log.getBinary(seq)!;
  const row = store.tables.orders.getBinary(orderKey)!;
  return Buffer.from(logged).includes(Buffer.from(row));
}

/** A ledger written as a build of store format 1 left it: lmdb alone, every event whole, the same tables and encodings. */
async function writtenByFormatOne(ledger: Ledger, dir: string): Promise<void> {
  const root = open({ path: dir, maxDbs: 32 });
  const structured = { sharedStructuresKey: STRUCTURES_KEY };
  const log = root.openDB({ name: 'log', ...structured });
  root.openDB({ name: 'chain', useVersions: true });
  const tables = Object.fromEntries(TABLE_NAMES.map((name) => [name, root.openDB({ name, ...(['wallets', 'orders', 'idempotency'].includes(name) ? structured : {}) })]));
  const { wallets, orders, orderIndex, meta } = tables as Record<TableName, Database<unknown, any>>;
  await root.transaction(() => {
    ledger.events.forEach((event, i) => log.put(i + 1, event));
    for (const [key, value] of ledger.rows.wallets) wallets.put(key, value);
    for (const [key, value] of ledger.rows.orders) {
      orders.put(key, value);
      orderIndex.put(orderIndexKey(value as OrderRecord), (value as OrderRecord).account);
    }
    meta.put('storeFormat', 1);
  });
  await root.close();
}

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function opened(dir: string): Store {
  const store = openStore(dir);
  stores.push(store);
  return store;
}

const funded: WalletRecord = { id: 1, credits: 1000 * CREDIT, banned: false, rateLimitPerMinute: 60, unlimitedExpiresMs: null };

/** A store holding account 1 with its funds, written by the ledger helper and opened again (its next seq follows them). */
async function fundedStore(): Promise<{ store: Store; dir: string }> {
  const dir = tempDir();
  dirs.push(dir);
  await new Ledger().account(1).credit(1, 1000 * CREDIT).write(dir).store.close();
  return { store: opened(dir), dir };
}

describe('a placement in the log', () => {
  it('keeps the order row’s bytes once for both places, and reads back as the whole event', async () => {
    const { store, dir } = await fundedStore();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const first = placement(funded, 'order-a', 1, { idempotencyKey: 'k1' });
    const second = placement(first.entry.puts[0]!.value as WalletRecord, 'order-b', 2, { webhooks: [3, 4] });
    wal.append(first.entry);
    await wal.append(second.entry);
    const [seqA, seqB] = placedSeqs(store);
    expect(logHoldsRowBytes(store, seqA!, 'order-a')).toBe(true);
    expect(logHoldsRowBytes(store, seqB!, 'order-b')).toBe(true);
    expect(store.log.get(seqA!)).toStrictEqual(first.event);
    expect(store.log.get(seqB!)).toStrictEqual(second.event);
    expect(store.tables.orders.get('order-b')).toStrictEqual(second.row);
    expect(verifyLedger(store).firstBroken).toBeNull();
    // A reader of the stopped store's files sees the same.
    await store.close();
    const readOnly = openStore(dir, { readOnly: true });
    stores.push(readOnly);
    expect(readOnly.log.get(seqB!)).toStrictEqual(second.event);
    expect(verifyLedger(readOnly).ok).toBe(true);
  });

  it('reads back every field the event shares with the row from the row', async () => {
    const { store } = await fundedStore();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const { entry, event } = placement(funded, 'order-a', 1);
    await wal.append(entry);
    const read = store.log.get(placedSeqs(store)[0]!) as Record<string, unknown>;
    for (const field of ROW_FIELDS) expect(read[field], field).toStrictEqual((event as Record<string, unknown>)[field]);
    expect(ROW_FIELDS).toEqual(['account', 'order', 'number', 'service', 'quantity', 'rate', 'charge', 'debit', 'channel', 'orderType', 'extras', 'subscription', 'post']);
  });

  it('is kept whole when it does not agree with its row, so verify still finds the difference', async () => {
    const { store } = await fundedStore();
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const { entry, event } = placement(funded, 'order-a', 1);
    const row = entry.puts[1]!.value as OrderRecord;
    entry.puts[1] = { table: 'orders', key: 'order-a', value: { ...row, charge: row.charge + 1 } };
    await wal.append(entry);
    const seq = placedSeqs(store)[0]!;
    expect(logHoldsRowBytes(store, seq, 'order-a')).toBe(false);
    expect(store.log.get(seq)).toStrictEqual(event);
    const report = verifyLedger(store);
    expect(report.broken?.invariant).toBe('order-charge');
    expect(report.broken?.sentence).toContain('the orders row has charge');
  });

  it('is read from a store of format 1, which is upgraded, verified, and written on', async () => {
    const ledger = new Ledger().account(1).credit(1, 1000 * CREDIT).place(1, 'old-1', 10, 100_000).place(1, 'old-2', 20, 100_000, { idempotencyKey: 'k' });
    ledger.move('old-1', 'canceled');
    const dir = tempDir();
    dirs.push(dir);
    await writtenByFormatOne(ledger, dir);

    const readOnly = openStore(dir, { readOnly: true });
    expect(readOnly.tables.meta.get('storeFormat')).toBe(1);
    expect([...readOnly.log.getRange({})].map(({ value }) => value)).toStrictEqual(ledger.events);
    expect(verifyLedger(readOnly)).toMatchObject({ ok: true, counts: { orders: 2 } });
    await readOnly.close();

    const store = opened(dir);
    expect(store.tables.meta.get('storeFormat')).toBe(STORE_FORMAT);
    expect(STORE_FORMAT).toBe(2);
    const wal = new LmdbGroupCommit(store, { onFatal: (e) => { throw e; } });
    const { entry, event } = placement(ledger.wallet(1), 'new-1', 1);
    await wal.append(entry);
    const seqs = placedSeqs(store);
    expect(seqs).toHaveLength(3);
    expect(store.log.get(seqs[0]!)).toStrictEqual(ledger.events.find((e) => e.type === 'order.placed'));
    expect(store.log.get(seqs[1]!)).toStrictEqual(ledger.last('order.placed'));
    expect(store.log.get(seqs[2]!)).toStrictEqual(event);
    expect(logHoldsRowBytes(store, seqs[2]!, 'new-1')).toBe(true);
    expect(verifyLedger(store)).toMatchObject({ ok: true, counts: { orders: 3 } });
  });

});

describe('a placement’s stored form, field by field', () => {
  const row = {
    id: 'o1', account: 7, number: 12, service: 3, quantity: 1000, rate: 100_000, charge: 100_000, debit: 100_000, channel: 'api', type: 'Default',
    extras: { comments: 'x' }, subscription: 5, post: 'p1', target: 't', status: 'Pending', remains: null, unlimited: false, createdAtMs: 1, seq: 1,
  } as unknown as OrderRecord;
  const event = {
    type: 'order.placed', atMs: 9, account: 7, order: 'o1', number: 12, service: 3, quantity: 1000, rate: 100_000, charge: 100_000, debit: 100_000,
    balance: 40, channel: 'api', idempotencyKey: 'k', orderType: 'Default', extras: row.extras, subscription: 5, post: 'p1', webhooks: [2],
  } as Placed;
  const bytes = Uint8Array.from([1, 2, 3]);
  const decodeRow = (b: Uint8Array): unknown => (b === bytes ? row : undefined);

  it('shares the row only when every shared field holds the row’s value', () => {
    expect(sharesRow(event, row)).toBe(true);
    const differing: [keyof Placed, unknown][] = [
      ['account', 8], ['order', 'o2'], ['number', 13], ['service', 4], ['quantity', 999], ['rate', 1], ['charge', 1], ['debit', 0],
      ['channel', 'web'], ['orderType', 'Package'], ['extras', { comments: 'x' }], ['subscription', 6], ['post', 'p2'],
    ];
    for (const [field, value] of differing) expect(sharesRow({ ...event, [field]: value } as Placed, row), field).toBe(false);
  });

  it('keeps what only the event holds, and webhooks only when the event has them', () => {
    expect(storedPlacement(event, bytes)).toStrictEqual({ type: 'order.placed', atMs: 9, balance: 40, idempotencyKey: 'k', row: bytes, webhooks: [2] });
    const { webhooks: _, ...without } = event;
    expect(storedPlacement(without as Placed, bytes)).toStrictEqual({ type: 'order.placed', atMs: 9, balance: 40, idempotencyKey: 'k', row: bytes });
  });

  it('reads back the whole event, with the optional fields only where the row and the event have them', () => {
    expect(wholePlacement(storedPlacement(event, bytes), decodeRow)).toStrictEqual(event);
    const { type: _t, extras: _e, subscription: _s, post: _p, ...plainRow } = row;
    const { orderType: _o, extras: _x, subscription: _u, post: _q, webhooks: _w, ...plainEvent } = event;
    expect(wholePlacement(storedPlacement(plainEvent as Placed, bytes), () => plainRow)).toStrictEqual(plainEvent);
  });

  it('leaves any other value as it is, and a stored form whose row cannot be decoded', () => {
    const stored = storedPlacement(event, bytes);
    const others = [null, undefined, 5, 'order.placed', { type: 'order.placed', row: [1, 2, 3] }, { type: 'order.moved', row: bytes }, { ...event }];
    for (const other of others) expect(wholePlacement(other, decodeRow)).toBe(other);
    expect(wholePlacement(stored, () => { throw new Error('bad bytes'); })).toBe(stored);
    expect(wholePlacement(stored, () => null)).toBe(stored);
    expect(wholePlacement(stored, () => 'a string')).toBe(stored);
  });

  it('the log’s decoder turns every stored placement it reads into the whole event', () => {
    class Base {
      constructor(readonly options: object) {}
      decode(source: Uint8Array): unknown {
        return source[0] === 1 ? storedPlacement(event, bytes) : { type: 'credits.adjusted' };
      }
    }
    const Reading = readingPlacements(Base, decodeRow);
    const decoder = new Reading({});
    expect(decoder.decode(Uint8Array.from([1]))).toStrictEqual(event);
    expect(decoder.decode(Uint8Array.from([0]))).toStrictEqual({ type: 'credits.adjusted' });
  });
});
