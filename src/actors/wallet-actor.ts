/**
 * The wallet actor: the shell around the pure decision function. It owns
 * one wallet's state in memory, serialises every command for it, writes the
 * resulting events to the WAL and hands back a promise that resolves when
 * they are durable. It pipelines: the next command is decided at once, in
 * memory, while earlier events are still waiting for their sync; replies
 * wait for the sync that covers them, and reads wait for the sync that
 * covers the wallet's latest change, so nobody sees what a crash could undo.
 *
 * The mailbox is bounded: a command that would make more than
 * `mailboxMax` of this wallet's replies wait is refused (503 UNAVAILABLE).
 */
import { assert, type Clock } from '../platform/index.js';
import { idempotencyExpiryKey, leaseKey, orderIndexKey, type StoredOrders, type TablePut, type Wal, type WalEntry } from '../wal/index.js';
import type { SubscriptionRecord } from '../ledger/index.js';
import { subscriptionRows, type SubscriptionStore } from './subscription-rows.js';
import { checkOrder, checkWallet, type Command, decide, type Decision, type IdempotencyRecord, initialState, type LogEvent, onlyLeaseExtended, type Now, type OrderRecord, type Outcome, type RefillRecord, type WalletState, walletWithCredits } from '../ledger/index.js';
import type { NewOrderId, OrderNumbers, RefillIds } from '../ids/index.js';
import type { Catalog } from './catalog.js';
import type { Request } from './request.js';
import type { ServiceTimes } from './service-times.js';

export interface ActorContext {
  wal: Wal;
  clock: Clock;
  mailboxMax: number;
  idempotencyRetentionMs: number;
  /** Reads a durable Idempotency-Key record (synchronous LMDB read). */
  readIdempotency(key: string): IdempotencyRecord | undefined;
  /**
   * The orders table: fresh ids with their storage keys, the storage key of
   * an id, and a durable order by id (synchronous LMDB read). StoredOrders
   * in src/wal; the simulator keeps its own.
   */
  orders: Pick<StoredOrders, 'newId' | 'keyOf' | 'read'>;
  /** The catalogue's services. */
  services: Pick<Catalog, 'get'>;
  /** Fresh refill ids, shared by every wallet. */
  refillIds: Pick<RefillIds, 'next'>;
  /** Numbers for accepted orders, shared by every wallet. */
  orderNumbers: OrderNumbers;
  /**
   * Renders an outcome as its HTTP answer, for the Idempotency-Key record
   * written in the same commit: a retry gets the first answer byte for byte.
   * Injected, so that rendering stays in the front end.
   */
  renderAnswer(outcome: Outcome, requestId: string): { status: number; body: string };
  /**
   * The change's events with its webhook messages, so they are written in
   * the same commit as the change (the events unchanged when no endpoint
   * wants it). Injected (src/webhooks), absent where there are no webhooks.
   */
  withWebhookMessages?(events: LogEvent[], account: number, order: OrderRecord | null, refill: RefillRecord | null, atMs: number): LogEvent[];
  /** The durable subscriptions and their posts' orders (absent in the simulator, which places none). */
  subscriptions?: SubscriptionStore;
  /** The services' delivery times, which an order's move to `completed` adds to in the same commit (absent in the simulator). */
  serviceTimes?: Pick<ServiceTimes, 'rowFor' | 'appended'>;
}

export interface Delivery {
  decision: Decision;
  /** Resolves when every event this reply depends on is durable; null when nothing is pending. */
  durable: Promise<void> | null;
  /**
   * The Idempotency-Key record written with the decision, when it is
   * remembered: its status and body are the answer, rendered once, for the
   * reply as for any retry.
   */
  remembered: IdempotencyRecord | null;
}

export function idempotencyTableKey(account: number, key: string): string {
  return `${account}:${key}`;
}

export class WalletActor {
  /**
   * The wallet as applied in memory. Its two objects are this actor's own
   * and are updated in place with each decision's result: a fresh state
   * object per order would live until the wallet's next order, far longer
   * than a young-generation GC cycle, and be promoted to the old space,
   * which is what made the order path's major collections frequent. Nothing
   * outside the actor keeps them: the WAL gets its own copy of the row.
   */
  readonly state: WalletState;
  private waiting = 0;
  private lastWrite: Promise<void> | null = null;
  /** Idempotency records applied in memory but not yet durable. */
  /** Created on first use: most wallets are idle, and an empty Map costs memory per wallet. */
  private pendingKeys: Map<string, IdempotencyRecord> | null = null;
  /** Orders changed in memory but not yet durable, so a second move sees the first. */
  private pendingOrders: Map<string, OrderRecord> | null = null;
  /** Subscriptions changed in memory but not yet durable, and the orders of their posts by subscriptionPostKey's text. */
  private pendingSubscriptions: Map<number, SubscriptionRecord> | null = null;
  private pendingPosts: Map<string, OrderRecord> | null = null;

  constructor(
    readonly id: number,
    state: WalletState,
    private readonly ctx: ActorContext,
  ) {
    this.state = { wallet: { ...state.wallet }, bucket: { ...state.bucket } };
  }

  static fresh(wallet: WalletState['wallet'], ctx: ActorContext): WalletActor {
    return new WalletActor(wallet.id, initialState(checkWallet(wallet), ctx.clock.monotonicMs()), ctx);
  }

  /** Depth of the mailbox: commands whose replies are waiting. */
  get depth(): number {
    return this.waiting;
  }

  /** Nothing in flight: the in-memory wallet is exactly the durable row. */
  get idle(): boolean {
    return this.waiting === 0 && this.lastWrite === null;
  }

  /** Resolves when every event this wallet has applied so far is durable. */
  settled(): Promise<void> {
    return this.lastWrite ?? Promise.resolve();
  }

  /**
   * Holds a place in the mailbox for a command that must first wait for
   * something outside the wallet (an order's force-join check), so that
   * such waiters count against the same limit as the mailbox and keep the
   * account from being dropped as idle. Null when the mailbox or the WAL is
   * full. The returned function gives the place back; call it right before
   * send(), in the same turn, so nothing can take the place in between.
   */
  reserve(): (() => void) | null {
    if (this.waiting >= this.ctx.mailboxMax || this.ctx.wal.overloaded()) return null;
    this.waiting++;
    let held = true;
    return () => {
      if (held) this.waiting--;
      held = false;
    };
  }

  /**
   * Returns null when the mailbox or the WAL is full. Every check runs
   * before anything in memory changes: the rows are checked, the answer a
   * key remembers is rendered and the WAL takes the entry first, and only
   * then does the wallet, the order number and the pending maps move on. A
   * broken invariant (which stops the process) thus leaves memory equal to
   * what was committed.
   */
  send(request: Request): Delivery | null {
    if (this.waiting >= this.ctx.mailboxMax || this.ctx.wal.overloaded()) return null;
    const { clock } = this.ctx;
    const now: Now = { monotonicMs: clock.monotonicMs(), wallMs: clock.wallMs() };
    // A new order's id comes with its storage key, kept here for the put below.
    const fresh = request.kind === 'order' || request.kind === 'subscription-post' ? this.ctx.orders.newId(now.wallMs) : null;
    const command = this.prepare(request, now, fresh);
    const decision = decide(this.state, command, now);
    if (decision.events.length === 0) {
      this.apply(decision.state);
      return { decision, durable: this.track(this.lastWrite), remembered: null };
    }
    const { entry, idem, timesRow, numberTaken } = this.entryFor(command, decision, now, fresh);
    const order = decision.order;
    // Set below, once the entry is appended: what the subscription's rows wait for.
    let settledSubscription: (() => void) | null = null;
    // The bookkeeping runs from the batch's one settlement, before the
    // reply's reaction to `durable` (the hot path: no promise reaction of
    // its own per order). It frees the mailbox slot and forgets what is
    // durable now.
    const durable: Promise<void> = this.ctx.wal.appendSettled(entry, (error) => {
      this.waiting--;
      if (error !== null) return;
      this.settle(durable, idem, order);
      settledSubscription?.();
    });
    // Nothing below throws: memory follows the entry the WAL now holds.
    this.apply(decision.state);
    if (timesRow !== null) this.ctx.serviceTimes!.appended(order!.service, timesRow, durable);
    if (order !== null) (this.pendingOrders ??= new Map()).set(order.id, order);
    // A new order's (or subscription's) number is taken in the same turn as the peek (entryFor checked it is the next one).
    if (numberTaken !== null) this.ctx.orderNumbers.take(numberTaken);
    settledSubscription = this.holdSubscription(command, decision);
    if (idem !== null) (this.pendingKeys ??= new Map()).set(idem.key, idem.record);
    this.lastWrite = durable;
    this.waiting++;
    return { decision, durable, remembered: idem === null ? null : idem.record };
  }

  /** Forgets what a durable write kept pending: the last write, if it is, its Idempotency-Key record and its order. */
  private settle(durable: Promise<void>, idem: { key: string; record: IdempotencyRecord } | null, order: OrderRecord | null): void {
    if (this.lastWrite === durable) this.lastWrite = null;
    // An emptied map is dropped, not kept: a Map that shrinks on delete
    // allocates a new table that would outlive many scavenges (the
    // wallet's next order is far away) and be promoted to the old space.
    if (idem !== null && this.pendingKeys?.get(idem.key) === idem.record) {
      this.pendingKeys.delete(idem.key);
      if (this.pendingKeys.size === 0) this.pendingKeys = null;
    }
    if (order !== null && this.pendingOrders?.get(order.id) === order) {
      this.pendingOrders.delete(order.id);
      if (this.pendingOrders.size === 0) this.pendingOrders = null;
    }
  }

  /**
   * The WAL entry of a decision with events, every row checked, and the
   * Idempotency-Key record it writes. Changes nothing in memory.
   */
  private entryFor(
    command: Command,
    decision: Decision,
    now: Now,
    fresh: NewOrderId | null,
  ): { entry: WalEntry; idem: { key: string; record: IdempotencyRecord } | null; timesRow: TablePut | null; numberTaken: number | null } {
    const next = decision.state;
    // The row for the WAL must not be the actor's own object, which the
    // next command changes in place (possibly before this entry is encoded).
    const row = next.wallet === this.state.wallet ? walletWithCredits(next.wallet, next.wallet.credits) : next.wallet;
    const puts: TablePut[] = [{ table: 'wallets', key: this.id, value: checkWallet(row) }];
    const entry: WalEntry = { events: decision.events, puts };
    const order = decision.order;
    let numberTaken: number | null = null;
    if (order !== null) {
      puts.push({ table: 'orders', key: fresh === null ? this.ctx.orders.keyOf(order.id) : fresh.key, value: checkOrder(order) });
      if ('order' in command && command.order !== null) entry.removes = [{ table: 'orderIndex', key: orderIndexKey(command.order) }];
      puts.push({ table: 'orderIndex', key: orderIndexKey(order), value: order.account });
      this.leaseRows(entry, 'order' in command ? command.order : null, order);
      if (command.kind === 'order' || command.kind === 'subscription-post') {
        assert(command.number === this.ctx.orderNumbers.peek(), 'a new order gets the number peeked in the same turn', command.number);
        puts.push({ table: 'numbers', key: command.number, value: order.id });
        numberTaken = command.number;
      }
    }
    if (decision.subscription !== undefined) {
      const rows = subscriptionRows(command, decision.subscription, order, this.ctx.orderNumbers.peek());
      entry.puts.push(...rows.puts);
      if (rows.removes.length > 0) (entry.removes ??= []).push(...rows.removes);
      numberTaken ??= rows.numberTaken;
    }
    if (decision.refill !== null) puts.push({ table: 'refills', key: decision.refill.id, value: decision.refill });
    // A placement never completes an order: the common path skips the look at its events.
    const completed =
      order !== null && command.kind !== 'order' && this.ctx.serviceTimes !== undefined && decision.events.some((e) => e.type === 'order.status' && e.to === 'completed');
    const timesRow = completed ? this.ctx.serviceTimes!.rowFor(order) : null;
    if (timesRow !== null) puts.push(timesRow);
    // A lease's new end changes nothing a customer sees: no message.
    if ((order !== null || decision.refill !== null) && this.ctx.withWebhookMessages !== undefined && !onlyLeaseExtended(decision.events)) {
      // A new array when there are messages: the decision's own is left as it is.
      entry.events = this.ctx.withWebhookMessages(decision.events, this.id, order, decision.refill, now.wallMs);
    }
    const idem = decision.remember === null || (command.kind !== 'order' && command.kind !== 'subscribe') ? null : this.remember(decision, command.requestId, now.wallMs);
    if (idem !== null) {
      const tableKey = idempotencyTableKey(this.id, idem.key);
      puts.push({ table: 'idempotency', key: tableKey, value: idem.record });
      puts.push({ table: 'idempotencyExpiry', key: idempotencyExpiryKey(idem.record.atMs, tableKey), value: 1 });
    }
    return { entry, idem, timesRow, numberTaken };
  }

  /**
   * The lease index follows the order's lease: the entry of the lease it
   * had goes and the entry of the lease it has is written, in the same
   * commit as the order's row.
   */
  private leaseRows(entry: WalEntry, before: OrderRecord | null, after: OrderRecord): void {
    const was = before?.leaseExpiresMs;
    if (was === after.leaseExpiresMs) return;
    if (was !== undefined) (entry.removes ??= []).push({ table: 'leases', key: leaseKey(before!) });
    if (after.leaseExpiresMs !== undefined) entry.puts.push({ table: 'leases', key: leaseKey(after), value: after.account });
  }

  /** The decision's wallet and bucket, copied into the actor's own objects. */
  private apply(next: WalletState): void {
    if (next.wallet !== this.state.wallet) Object.assign(this.state.wallet, next.wallet);
    if (next.bucket !== this.state.bucket) Object.assign(this.state.bucket, next.bucket);
  }

  /**
   * The one prepare step: every lookup a decision needs, gathered into a new
   * immutable command. Commands about one order get it as this actor last
   * applied it (a change not yet durable included), and the ones whose rules
   * depend on the service get that too.
   */
  private prepare(request: Request, now: Now, fresh: NewOrderId | null): Command {
    switch (request.kind) {
      case 'order': {
        const idem = request.request.ok ? request.request.idempotency : null;
        const prior = idem === null ? null : this.findKey(idem.key, now.wallMs);
        // Field by field, once per order: on this V8 a spread that adds
        // properties ({ ...request, orderId, … }) builds an object of a slow
        // shape, about 6 µs to build and slower for decide to read (bench/RESULTS.md, "CPU per order pays").
        return { kind: 'order', requestId: request.requestId, channel: request.channel, request: request.request, orderId: fresh!.id, seq: fresh!.seq, number: this.ctx.orderNumbers.peek(), prior };
      }
      // The same for the lifecycle's commands (an operator's processing system moves orders by the thousand): Object.assign, not a spread.
      case 'set-status':
      case 'progress':
      case 'extend-lease':
      case 'release':
      case 'expire-lease':
        return Object.assign({}, request, { order: this.latestOrder(request.orderId) });
      case 'cancel': {
        const order = this.latestOrder(request.orderId);
        return Object.assign({}, request, { order, service: order === null ? null : this.ctx.services.get(order.service) });
      }
      case 'refill': {
        const order = this.latestOrder(request.orderId);
        return Object.assign({}, request, { order, service: order === null ? null : this.ctx.services.get(order.service), refillId: this.ctx.refillIds.next() });
      }
      case 'refill-status':
        return Object.assign({}, request, { orderId: request.stored.order, order: this.latestOrder(request.stored.order) });
      case 'subscribe': {
        const idem = request.request.ok ? request.request.idempotency : null;
        const prior = idem === null ? null : this.findKey(idem.key, now.wallMs);
        return Object.assign({}, request, { number: this.ctx.orderNumbers.peek(), prior });
      }
      case 'subscription-status':
        return Object.assign({}, request, { subscription: this.latestSubscription(request.subscriptionId) });
      case 'subscription-post': {
        const priorId = this.pendingPosts?.get(`${request.subscriptionId}:${request.post}`)?.id ?? this.ctx.subscriptions?.postOrder(request.subscriptionId, request.post);
        const prior = priorId === undefined ? null : this.latestOrder(priorId);
        const subscription = this.latestSubscription(request.subscriptionId);
        return Object.assign({}, request, { subscription, prior, orderId: fresh!.id, seq: fresh!.seq, number: this.ctx.orderNumbers.peek() });
      }
      default:
        return request;
    }
  }

  private latestOrder(id: string): OrderRecord | null {
    return this.pendingOrders?.get(id) ?? this.ctx.orders.read(id) ?? null;
  }

  private latestSubscription(id: number): SubscriptionRecord | null {
    return this.pendingSubscriptions?.get(id) ?? this.ctx.subscriptions?.read(id) ?? null;
  }

  /**
   * Keeps a decision's subscription (and its post's order) in memory until
   * its commit is durable, so the next command about it sees it; returns
   * what forgets them then, or null when the decision changed none.
   */
  private holdSubscription(command: Command, decision: Decision): (() => void) | null {
    const sub = decision.subscription;
    if (sub === undefined) return null;
    (this.pendingSubscriptions ??= new Map()).set(sub.id, sub);
    const postKey = command.kind === 'subscription-post' && decision.order !== null ? `${sub.id}:${command.post}` : null;
    if (postKey !== null) (this.pendingPosts ??= new Map()).set(postKey, decision.order!);
    return () => {
      if (this.pendingSubscriptions?.get(sub.id) === sub) this.pendingSubscriptions.delete(sub.id);
      if (this.pendingSubscriptions?.size === 0) this.pendingSubscriptions = null;
      if (postKey !== null) this.pendingPosts?.delete(postKey);
      if (this.pendingPosts?.size === 0) this.pendingPosts = null;
    };
  }

  /** Whether this wallet holds a record for the Idempotency-Key that is not yet durable (the sweep keeps its stored one). */
  idempotencyKeyPending(key: string): boolean {
    return this.pendingKeys?.has(key) ?? false;
  }

  /** The Idempotency-Key record of a decision that asks to be remembered: its answer as the front end renders it. */
  private remember(decision: Decision, requestId: string, wallMs: number): { key: string; record: IdempotencyRecord } {
    const { key, fingerprint } = decision.remember!;
    const { status, body } = this.ctx.renderAnswer(decision.outcome, requestId);
    const record: IdempotencyRecord = { fingerprint, status, body, order: decision.order?.id ?? null, atMs: wallMs };
    if (decision.outcome.kind === 'subscribed') record.subscription = decision.outcome.subscription.id;
    return { key, record };
  }

  /** Counts a waiting reply in the mailbox until its promise settles. */
  private track(durable: Promise<void> | null): Promise<void> | null {
    if (durable === null) return null;
    this.waiting++;
    const release = (): void => {
      this.waiting--;
    };
    durable.then(release, release);
    return durable;
  }

  private findKey(key: string, wallMs: number): IdempotencyRecord | null {
    const record = this.pendingKeys?.get(key) ?? this.ctx.readIdempotency(idempotencyTableKey(this.id, key));
    if (record === undefined) return null;
    // Past retention a key is forgotten, as if it had never been used.
    if (wallMs - record.atMs > this.ctx.idempotencyRetentionMs) return null;
    return record;
  }
}
