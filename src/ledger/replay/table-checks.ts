/**
 * The checks of the tables against the state the log leaves, run once the
 * whole log is replayed: the wallets (b), the orders rows and the open
 * orders (c, d), the status index and the counts row (d'), the lease
 * index (g'), and the Idempotency-Key records (e). See `replayLedger` for the whole list.
 */
import { ORDER_STATUSES } from '../rules.js';
import { fail } from './finding.js';
import { isCounts } from './ledger-source.js';
import { asRaw, isInt, type Raw } from './raw.js';
import type { ReplayState } from './replay-state.js';
import { credits, instant, planWindow } from './wording.js';
import { checkSubscriptionRows } from './subscription-events.js';

/** Every check of the tables, in the order their failures are reported. */
export function checkTables(state: ReplayState): void {
  checkWallets(state);
  checkOrderRows(state);
  checkOrderCounts(state);
  checkLeases(state);
  checkIdempotency(state);
  checkSubscriptionRows(state);
}

/** (b): the wallets table against the replay, both ways. */
function checkWallets(state: ReplayState): void {
  for (const { key, value } of state.source.wallets()) {
    const id = key as unknown;
    const wallet = value as Raw | null;
    const account = isInt(id) ? state.accounts.get(id) : undefined;
    if (account === undefined) fail('wallet', null, isInt(id) ? id : null, null, `the wallet row ${String(id)} has no account.created in the log.`);
    account.hasWallet = true;
    if (wallet === null || wallet.credits !== account.balance) {
      fail('wallet', null, id as number, null, `the wallet holds ${credits(wallet?.credits)} but its ledger replays to ${credits(account.balance)}.`);
    }
    // The actor loads its plan window from this row, so a row that differs
    // from the grants would bill the next orders differently. Rows written
    // before the plan existed lack the field: no window, like null.
    if ((wallet.unlimitedExpiresMs ?? null) !== account.unlimitedExpiresMs) {
      fail('wallet', null, id as number, null, `the wallet row holds ${planWindow(wallet.unlimitedExpiresMs)} but its plan grants leave ${planWindow(account.unlimitedExpiresMs)}.`);
    }
  }
  for (const [id, account] of state.accounts) {
    if (!account.hasWallet) fail('wallet', null, id, null, 'the account was created in the log but has no wallet row.');
  }
}

/**
 * (c) and (d) against the orders table: every row was placed in the log
 * (placements claimed theirs during the replay), and every order still open
 * stopped short of, or went past, the status and remains its row holds.
 */
function checkOrderRows(state: ReplayState): void {
  for (const { key, value } of state.rows.unclaimed()) {
    const row = asRaw(value);
    // Rows are stored under an internal key; the public id is in the row.
    const id = typeof row.id === 'string' ? row.id : key;
    fail('order-charge', null, isInt(row.account) ? row.account : null, id, 'the orders row has no order.placed in the log.');
  }
  for (const [id, order] of state.orders.entries()) {
    fail(
      'order-status',
      null,
      order.account,
      id,
      `the orders row says ${standing(order.final)} but the log leaves it ${standing(order)}.`,
    );
  }
}

/**
 * (d'): the status index and the counts row (what stats and metrics
 * report) hold as many orders in each status as the log leaves there.
 */
function checkOrderCounts(state: ReplayState): void {
  const replayed = state.statuses;
  const indexed = state.source.indexCounts();
  const row = state.source.countsRow();
  for (const status of ORDER_STATUSES) {
    if (indexed[status] !== replayed[status]) {
      fail('order-status', null, null, null, `the status index lists ${indexed[status]} ${status} orders but the log leaves ${replayed[status]}.`);
    }
    if (row !== undefined && (!isCounts(row) || row[status] !== replayed[status])) {
      fail('order-status', null, null, null, `the order counts row says ${String((row as Raw | null)?.[status])} ${status} orders but the log leaves ${replayed[status]}.`);
    }
  }
}

/** An order's status and remains, and its worker and lease when it has them, as a sentence says them. */
function standing(o: { status?: unknown; remains?: unknown; worker?: unknown; leaseExpiresMs?: unknown }): string {
  const worker = o.worker === undefined ? '' : `, worker ${String(o.worker)}`;
  const lease = o.leaseExpiresMs === undefined ? '' : `, a lease ending ${instant(o.leaseExpiresMs)}`;
  return `${String(o.status)} with remains ${String(o.remains)}${worker}${lease}`;
}

/**
 * (g'): the lease index (what the sweep reads) holds one entry per
 * processing order under a lease, each naming the lease its row holds.
 */
function checkLeases(state: ReplayState): void {
  let entries = 0;
  for (const { key } of state.source.leases()) {
    entries++;
    const [endsMs, orderId] = Array.isArray(key) ? (key as unknown[]) : [undefined, key];
    const row = typeof orderId === 'string' ? asRaw(state.source.orderRow(state.source.orderKey(orderId))) : {};
    if (row.status !== 'processing' || row.leaseExpiresMs !== endsMs) {
      fail('lifecycle', null, isInt(row.account) ? row.account : null, String(orderId), `the lease index holds a lease ending ${instant(endsMs)} but the orders row is ${standing(row)}.`);
    }
  }
  if (entries !== state.leases) fail('lifecycle', null, null, null, `the lease index holds ${entries} leases but the log leaves ${state.leases} processing orders under a lease.`);
}

/** (e): a key that placed a subscription names one its account placed. */
function checkKeySubscription(state: ReplayState, accountId: number, key: string, subscription: unknown): void {
  const sub = isInt(subscription) ? state.subscriptions.get(subscription) : undefined;
  if (sub === undefined || sub.account !== accountId) {
    fail('idempotency', null, accountId, null, `the idempotency key ${JSON.stringify(key)} points at subscription ${String(subscription)}, which account ${accountId} did not place.`);
  }
}

/** (e): idempotency rows point at orders (or subscriptions) of their own account. */
function checkIdempotency(state: ReplayState): void {
  for (const { key, value } of state.source.idempotency()) {
    state.counts.idempotencyKeys++;
    const k = String(key);
    const colon = k.indexOf(':');
    const accountId = colon > 0 ? Number(k.slice(0, colon)) : NaN;
    if (!isInt(accountId)) fail('idempotency', null, null, null, `the idempotency key ${JSON.stringify(k)} is not of the form accountId:key.`);
    const subscription = (value as { subscription?: unknown } | null)?.subscription;
    if (subscription !== undefined) checkKeySubscription(state, accountId, k.slice(colon + 1), subscription);
    const orderId = (value as { order?: unknown } | null)?.order ?? null;
    if (orderId === null) continue;
    if (typeof orderId !== 'string') {
      fail('idempotency', null, accountId, null, `the idempotency key ${JSON.stringify(k.slice(colon + 1))} names order ${String(orderId)}, which is not an order id.`);
    }
    // Every row was matched to its placement above, so a row is an order.
    const row = state.source.orderRow(state.source.orderKey(orderId));
    if (row === undefined) {
      fail('idempotency', null, accountId, orderId, `the idempotency key ${JSON.stringify(k.slice(colon + 1))} points at an order that does not exist.`);
    }
    const owner = asRaw(row).account;
    if (owner !== accountId) {
      fail('idempotency', null, accountId, orderId, `the idempotency key ${JSON.stringify(k.slice(colon + 1))} points at an order of account ${String(owner)}.`);
    }
  }
}
