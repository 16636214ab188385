/**
 * A seeded, deterministic simulation of the wallet actors over the
 * fault-injecting in-memory WAL (TigerBeetle-style). One seed decides every
 * command, every sync, every clock move and every fault, so a failing seed
 * reproduces exactly: run it again with `SIM_SEED=<seed>`.
 *
 * The simulation plays the clients and the operator, and remembers only what
 * they were told: a reply counts as acknowledged once its `durable` promise
 * resolved (or at once when it had none). At random points the process
 * crashes (the unsynced tail is lost) or a sync fails (fail-stop); the
 * simulation then restarts from the durable image, as the server does on
 * start, and checks that nothing acknowledged was lost and that the ledger is
 * still exact.
 *
 * Nothing here reads a real clock or schedules a timer: the only
 * asynchrony is promise callbacks, drained after every step.
 */
import { mulberry32 } from '../../scripts/mulberry32.js';
import { type Clock, ManualClock } from '../../src/platform/clock.js';
import { formatMicro } from '../../src/money/index.js';
import { WalletActor, idempotencyTableKey, type ActorContext, type Delivery } from '../../src/actors/wallet-actor.js';
import type { Request as Command } from '../../src/actors/index.js';
import { chargeFor, FINAL_STATUSES, type IdempotencyRecord, isOpenRefill, ORDER_STATUSES, type OrderRecord, type OrderStatus, readOrderPayload, REFILL_STATUSES, refillMoveRefusal, type RefillRecord, type RefillStatus, remainsShown, replayLedger, RUNS_MAX, LEASE_SECONDS_MIN, type ServiceRecord, STATUS_RANK, unitsOrdered, type WalletRecord, type WalletState, withServiceDefaults } from '../../src/ledger/index.js';
import { renderAnswer } from '../../src/http/transport/answer.js';
import { checkOrderInput } from '../../src/http/orders/order-input.js';
import { orderRequest, refusedOrder } from '../../src/http/orders/order-submit.js';
import type { OrderBody } from '../../src/http/orders/schemas.js';
import { TARGET_CHARS_MAX } from '../../src/http/limits.js';
import { OrderNumbers } from '../../src/ids/order-numbers.js';
import { imageLedgerSource, orderIndexKey, PENDING_ENTRIES_MAX } from '../../src/wal/index.js';
import { MS_PER_DAY } from '../../src/platform/units.js';
import { MemoryWal, emptyImage, tableKeyString, type DurableImage } from '../../src/wal/memory-wal.js';

// --- Deterministic randomness -------------------------------------------

export { mulberry32 } from '../../scripts/mulberry32.js';

class Random {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** An integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('invariant: pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }
}

// --- Options and results --------------------------------------------------

/**
 * Which actor shell the simulation drives. `ack-before-sync` is deliberately
 * broken: it hands every reply back as acknowledged at once, before the sync
 * that covers it. It exists to prove that the invariants catch that bug.
 */
export type ActorVariant = 'correct' | 'ack-before-sync';

export interface SimulationOptions {
  seed: number;
  steps: number;
  /** Number of wallets (actors); default 3. */
  wallets?: number;
  /** Process crashes that lose the unsynced tail; default on. */
  crashes?: boolean;
  /** Syncs that fail (fail-stop), sometimes after the batch reached the disk; default on. */
  commitFailures?: boolean;
  /** Balance reads, whose answers must be durable balances; default on. */
  balanceReads?: boolean;
  actor?: ActorVariant;
}

export interface SimulationReport {
  seed: number;
  steps: number;
  commands: number;
  /** Commands refused because a mailbox or the WAL was full (503). */
  refused: number;
  acknowledged: number;
  ordersAcknowledged: number;
  /** Acknowledged orders of a typed service (not Default). */
  typedOrdersAcknowledged: number;
  /** Acknowledged partial moves of drip-feed orders refunding more units than one run holds. */
  partialsOverRuns: number;
  /** Acknowledged customer cancels that refunded, cancel requests, and refills opened. */
  cancelsRefunded: number;
  cancelRequests: number;
  refillsOpened: number;
  /** Acknowledged claims with a lease, and acknowledged releases and expiries of one. */
  leasesTaken: number;
  leasesEnded: number;
  syncs: number;
  crashes: number;
  commitFailures: number;
  replaysChecked: number;
  durableEvents: number;
  /** A digest of the final durable image: equal digests, equal runs. */
  digest: string;
}

export class SimulationFailure extends Error {
  constructor(
    readonly seed: number,
    readonly step: number,
    detail: string,
    trace: readonly string[],
  ) {
    super(
      `seed ${seed}, step ${step}: ${detail}\n` +
        `reproduce: SIM_SEED=${seed} npx vitest run test/sim\n` +
        `last steps:\n  ${trace.slice(-30).join('\n  ')}`,
    );
    this.name = 'SimulationFailure';
  }
}

// --- The world --------------------------------------------------------------

/** What the simulation needs of an actor: the real shell, or a broken one. */
interface SimActor {
  readonly state: WalletState;
  /** Replies waiting for their sync (the mailbox depth). */
  readonly depth: number;
  send(command: Command): Delivery | null;
}

/** Deliberately broken: acknowledges every reply before its sync. */
class AckBeforeSyncActor implements SimActor {
  constructor(private readonly inner: WalletActor) {}
  get state(): WalletState {
    return this.inner.state;
  }
  get depth(): number {
    return this.inner.depth;
  }
  send(command: Command): Delivery | null {
    const delivery = this.inner.send(command);
    return delivery === null ? null : { decision: delivery.decision, durable: Promise.resolve(), remembered: delivery.remembered };
  }
}

const SERVICES: ServiceRecord[] = [
  // Service 1 allows customer cancels and refills (30 days); service 2 neither, so both paths run.
  withServiceDefaults({ id: 1, platform: 'instagram', name: 'Followers', rate: 1_500, min: 10, max: 10_000, enabled: true, cancel: true, refill: true }),
  withServiceDefaults({ id: 2, platform: 'telegram', name: 'Members', rate: 2_000_000, min: 1, max: 20, enabled: true }),
  withServiceDefaults({ id: 3, platform: 'youtube', name: 'Views (retired)', rate: 1_000, min: 1, max: 100, enabled: false }),
  // Service 4 is drip-feed: quantity is per run, the charge covers every run,
  // and remains (so a partial refund) counts units over all the runs.
  withServiceDefaults({ id: 4, platform: 'instagram', name: 'Likes (drip-feed)', rate: 2_500, min: 10, max: 1_000, enabled: true, cancel: true, refill: true, dripfeed: true }),
  // Service 5 is typed: its quantity is the number of comment lines sent.
  withServiceDefaults({ id: 5, platform: 'instagram', name: 'Comments', type: 'Custom Comments', rate: 150_000, min: 1, max: 12, enabled: true, cancel: true }),
  // Service 6 is a package: one unit, and a quantity sent with it is refused.
  withServiceDefaults({ id: 6, platform: 'tiktok', name: 'Starter package', type: 'Package', rate: 3_000_000, min: 1, max: 1, enabled: true }),
];
const serviceById = (id: number): ServiceRecord | null => SERVICES.find((s) => s.id === id) ?? null;
const UNKNOWN_SERVICE_ID = 99;
/** Keys never expire within a run: a replay must work however far the clock moved. */
const RETENTION_MS = 100 * 365 * MS_PER_DAY;
const MAILBOX_MAX = 1_000_000;
const RATE_LIMIT_PER_MINUTE = 100_000_000;

/** The first answer a client was given for an Idempotency-Key. */
interface KeyAnswer {
  wallet: number;
  key: string;
  /** The request body as sent; a retry sends it again. */
  sent: OrderBody;
  fingerprint: string;
  body: string;
  order: string | null;
}

interface AckedOrder {
  wallet: number;
  order: OrderRecord;
}

const RANK = STATUS_RANK;

function digestOf(image: DurableImage): string {
  // FNV-1a over a canonical JSON form; enough to tell two runs apart.
  const tables = Object.entries(image.tables).map(([name, rows]) => [name, [...rows.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))]);
  const text = JSON.stringify({ events: image.events, tables });
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `${text.length}:${h.toString(16)}`;
}

class Simulation {
  private readonly rng: Random;
  private readonly clock = new ManualClock();
  private readonly walletIds: number[];
  private readonly batchEntriesMax: number;
  /** Most seeds never fill a mailbox or the WAL; some run with tiny bounds so that they do. */
  private readonly mailboxMax: number;
  private readonly pendingEntriesMax: number;
  private wal: MemoryWal;
  private actors = new Map<number, SimActor>();
  private fatal: unknown = null;
  private step = 0;
  private readonly trace: string[] = [];
  private counter = 0;
  /** The first check that failed inside a promise callback. */
  private asyncFailure: unknown = null;

  // What clients and the operator were told (acknowledged replies only).
  private readonly ackedOrders = new Map<string, AckedOrder>();
  private readonly ackedKeys = new Map<string, KeyAnswer>();
  /** Reasons of acknowledged credits, status moves and plan grants: each must be in the durable log. */
  private readonly ackedReasons = new Set<string>();
  private readonly ackedStatus = new Map<string, OrderStatus>();
  /** Orders claimed with a lease (decided, maybe not durable), with the worker that claimed them. */
  private readonly claimed: { order: { id: string; wallet: number; units: number }; worker: string }[] = [];
  // What the clients know exists (accepted in memory, acknowledged or not).
  /** `units` counts every run of a drip-feed order (see unitsOrdered): what remains may name. */
  private readonly knownOrders: { id: string; wallet: number; units: number }[] = [];
  private readonly usedKeys = new Map<number, { key: string; sent: OrderBody }[]>();
  /** Refills accepted in memory, and the status each was acknowledged in. */
  private readonly knownRefills: number[] = [];
  private readonly ackedRefills = new Map<number, RefillStatus>();
  /** Refill ids are never reused, across restarts too (the server reads its next id from the table). */
  private refillIds = 0;

  readonly report: SimulationReport;

  constructor(private readonly options: Required<SimulationOptions>) {
    this.rng = new Random(options.seed);
    this.walletIds = Array.from({ length: options.wallets }, (_, i) => i + 1);
    this.batchEntriesMax = this.rng.chance(0.5) ? 4096 : this.rng.int(1, 6);
    this.mailboxMax = this.rng.chance(0.2) ? this.rng.int(1, 8) : MAILBOX_MAX;
    this.pendingEntriesMax = this.rng.chance(0.2) ? this.rng.int(1, 20) : PENDING_ENTRIES_MAX;
    this.report = {
      seed: options.seed,
      steps: options.steps,
      commands: 0,
      refused: 0,
      acknowledged: 0,
      ordersAcknowledged: 0,
      typedOrdersAcknowledged: 0,
      partialsOverRuns: 0,
      cancelsRefunded: 0,
      cancelRequests: 0,
      refillsOpened: 0,
      leasesTaken: 0,
      leasesEnded: 0,
      syncs: 0,
      crashes: 0,
      commitFailures: 0,
      replaysChecked: 0,
      durableEvents: 0,
      digest: '',
    };
    this.wal = this.boot(this.genesis());
  }

  // --- Failure reporting -------------------------------------------------

  private fail(detail: string): never {
    throw new SimulationFailure(this.options.seed, this.step, detail, this.trace);
  }

  private check(condition: boolean, detail: () => string): void {
    if (!condition) this.fail(detail());
  }

  private note(line: string): void {
    this.trace.push(`#${this.step} ${line}`);
    // Bounded: only the tail is ever printed.
    if (this.trace.length > 200) this.trace.splice(0, 100);
  }

  // --- Process life ------------------------------------------------------

  /** The durable state of a fresh data directory: accounts and services, with their events. */
  private genesis(): DurableImage {
    const image = emptyImage();
    const atMs = this.clock.wallMs();
    for (const service of SERVICES) {
      image.events.push({ type: 'service.saved', atMs, service });
      image.tables.services.set(tableKeyString(service.id), service);
    }
    for (const id of this.walletIds) {
      const credits = this.rng.int(0, 60) * 1_000_000 + this.rng.int(0, 999_999);
      const wallet: WalletRecord = { id, credits, banned: false, rateLimitPerMinute: RATE_LIMIT_PER_MINUTE, unlimitedExpiresMs: null };
      // As the server does: an account opens empty and money arrives by a logged adjustment.
      image.events.push({ type: 'account.created', atMs, account: id, name: `w${id}`, credits: 0, rateLimitPerMinute: RATE_LIMIT_PER_MINUTE });
      image.events.push({ type: 'credits.adjusted', atMs, account: id, amount: credits, reason: `opening credit w${id}`, balance: credits });
      image.tables.wallets.set(tableKeyString(id), wallet);
    }
    return image;
  }

  /** Starts a process on a durable image: a new WAL and one fresh actor per durable wallet row. */
  private boot(image: DurableImage): MemoryWal {
    const wal = new MemoryWal({
      initial: image,
      batchEntriesMax: this.batchEntriesMax,
      pendingEntriesMax: this.pendingEntriesMax,
      onFatal: (error) => {
        this.fatal = error;
      },
    });
    const clock: Clock = this.clock;
    const ctx: ActorContext = {
      wal,
      clock,
      mailboxMax: this.mailboxMax,
      idempotencyRetentionMs: RETENTION_MS,
      readIdempotency: (key) => wal.get('idempotency', key) as IdempotencyRecord | undefined,
      orders: {
        // Kept under their public ids: the in-memory image has no storage keys of its own.
        newId: () => {
          const n = this.nextId();
          const id = `o-${this.options.seed}-${n}`;
          return { id, key: id, seq: n };
        },
        keyOf: (id) => id,
        read: (id) => wal.get('orders', id) as OrderRecord | undefined,
      },
      services: { get: serviceById },
      refillIds: { next: () => ++this.refillIds },
      // As the server does: continue after the highest durable number (a crash forgets the rest).
      orderNumbers: new OrderNumbers([...image.tables.numbers.keys()].reduce((max, key) => Math.max(max, Number(key)), 0)),
      renderAnswer,
    };
    this.actors = new Map();
    for (const id of this.walletIds) {
      const row = wal.get('wallets', id) as WalletRecord | undefined;
      this.check(row !== undefined, () => `wallet ${id} has no durable row at start-up`);
      const actor = WalletActor.fresh(row!, ctx);
      this.actors.set(id, this.options.actor === 'ack-before-sync' ? new AckBeforeSyncActor(actor) : actor);
    }
    this.fatal = null;
    return wal;
  }

  /** The process stops (crash or fail-stop) and starts again from what is durable. */
  private async restart(why: string): Promise<void> {
    const lost = this.wal.crashed ? 0 : this.wal.crash();
    this.note(`restart after ${why}; ${lost} unsynced entries lost`);
    await this.settle();
    const image = this.wal.durableImage();
    this.checkDurable(image, `after ${why}`);
    this.wal = this.boot(image);
    await this.checkReplays(`after ${why}`);
  }

  // --- Commands ----------------------------------------------------------

  private nextId(): number {
    return ++this.counter;
  }

  /** Sends a command and tracks its acknowledgement. */
  private send(wallet: number, command: Command, onAck: (delivery: Delivery) => void): Delivery | null {
    this.report.commands++;
    const actor = this.actors.get(wallet)!;
    const delivery = actor.send(command);
    this.check(actor.depth <= this.mailboxMax, () => `w${wallet}: mailbox holds ${actor.depth}, more than its bound ${this.mailboxMax}`);
    this.check(
      this.wal.stats().pendingEntries <= this.pendingEntriesMax,
      () => `the WAL holds ${this.wal.stats().pendingEntries} pending entries, more than its bound ${this.pendingEntriesMax}`,
    );
    if (delivery === null) {
      this.report.refused++;
      this.note(`w${wallet} ${command.kind}: refused (mailbox or WAL full)`);
      return null;
    }
    const ack = (): void => {
      this.report.acknowledged++;
      // Checks made in a promise callback are kept and rethrown by the run
      // loop after its drain, so they fail the run (with the seed) instead of
      // becoming unhandled rejections.
      try {
        onAck(delivery);
      } catch (error) {
        this.asyncFailure ??= error;
      }
    };
    if (delivery.durable === null) ack();
    else delivery.durable.then(ack, () => {});
    return delivery;
  }

  private outcomeText(d: Delivery): string {
    const o = d.decision.outcome;
    if (o.kind === 'error') return `error ${o.error.code}`;
    return o.kind;
  }

  /**
   * A request body as a client sends it: mostly one its service takes, and
   * about one in ten that it refuses (a quantity out of range, drip-feed runs
   * out of range or on a service without drip-feed, a comment list too long
   * or empty, a quantity other than 1 sent with a package).
   */
  private randomBody(): OrderBody {
    const r = this.rng.float();
    const serviceId = r < 0.3 ? 1 : r < 0.5 ? 2 : r < 0.68 ? 4 : r < 0.82 ? 5 : r < 0.88 ? 6 : r < 0.94 ? 3 : UNKNOWN_SERVICE_ID;
    const service = serviceById(serviceId);
    const body: OrderBody = { service: serviceId, target: `https://example.com/p/${this.rng.int(1, 5)}` };
    const refused = this.rng.chance(0.1);
    if (service?.type === 'Package') {
      if (refused) body.quantity = 2;
    } else if (service?.type === 'Custom Comments') {
      const lines = refused ? this.rng.pick([0, service.max + 1]) : this.rng.int(service.min, service.max);
      body.comments = Array.from({ length: lines }, (_, i) => `comment ${i + 1}`).join('\n');
    } else if (service === null) {
      body.quantity = this.rng.int(1, 100);
    } else {
      body.quantity = refused && this.rng.chance(0.5) ? this.rng.pick([0, -1, service.min - 1, service.max + 1]) : this.rng.int(service.min, service.max);
      if (service.dripfeed ? this.rng.chance(0.8) : refused && this.rng.chance(0.5)) {
        body.runs = refused ? this.rng.pick([1, RUNS_MAX + 1]) : this.rng.int(2, 6);
        body.interval = this.rng.int(1, 120);
      }
    }
    return body;
  }

  /** The order command for `body` sent with Idempotency-Key `key` (or none), built as the HTTP layer builds it. */
  private orderCommand(body: OrderBody, key: string | null): Extract<Command, { kind: 'order' }> {
    const n = this.nextId();
    const checked = checkOrderInput(body, TARGET_CHARS_MAX, serviceById);
    return {
      kind: 'order',
      requestId: `req-${this.options.seed}-${n}`,
      channel: 'api',
      request: checked.ok ? orderRequest(checked.payload, checked.service, key) : refusedOrder(checked.error),
    };
  }

  private placeOrder(): void {
    const wallet = this.rng.pick(this.walletIds);
    let body = this.randomBody();
    let key: string | null = null;
    if (this.rng.chance(0.5)) {
      const used = this.usedKeys.get(wallet) ?? [];
      if (used.length > 0 && this.rng.chance(0.35)) {
        const prior = this.rng.pick(used);
        key = prior.key;
        // Reused with the same body (a retry) or, sometimes, a different one (a client bug).
        if (this.rng.chance(0.65)) body = { ...prior.sent };
        else if (prior.sent.quantity !== undefined) body = { ...prior.sent, quantity: prior.sent.quantity + this.rng.int(1, 3) };
        else body = { ...prior.sent, target: `${prior.sent.target}/other` };
      } else {
        key = `k${this.nextId()}`;
        used.push({ key, sent: { ...body } });
        this.usedKeys.set(wallet, used);
      }
    }
    const command = this.orderCommand(body, key);
    const delivery = this.send(wallet, command, (d) => this.onOrderAck(wallet, command, body, d));
    if (delivery === null) return;
    const order = delivery.decision.order;
    if (order !== null) this.knownOrders.push({ id: order.id, wallet, units: unitsOrdered(order) });
    const runs = body.runs === undefined ? '' : `x${body.runs} runs`;
    this.note(`w${wallet} order ${body.service}x${body.quantity ?? body.comments?.split('\n').length ?? '-'}${runs}${key === null ? '' : ` key ${key}`}: ${this.outcomeText(delivery)}`);
  }

  private onOrderAck(wallet: number, command: Extract<Command, { kind: 'order' }>, sent: OrderBody, d: Delivery): void {
    const outcome = d.decision.outcome;
    const request = command.request;
    if (outcome.kind === 'placed') {
      const order = d.decision.order;
      this.check(order !== null && request.ok, () => `w${wallet}: an accepted order reply carries no order, or its request was invalid`);
      if (!request.ok) return;
      // The service's type reads the body (units per run, runs); the charge covers every run.
      const read = readOrderPayload(request.payload, request.service);
      const expected = read.ok ? chargeFor(read.input.quantity, request.service!.rate, read.input.extras?.runs) : null;
      this.check(order!.charge === expected, () => `order ${order!.id}: charge ${order!.charge}, but ${JSON.stringify(sent)} costs ${expected}`);
      this.ackedOrders.set(order!.id, { wallet, order: order! });
      this.report.ordersAcknowledged++;
      if (order!.type !== undefined) this.report.typedOrdersAcknowledged++;
    }
    if (!request.ok || request.idempotency === null) return;
    const { key, fingerprint } = request.idempotency;
    const slot = `${wallet}:${key}`;
    const known = this.ackedKeys.get(slot);
    const firstAnswer = (body: string, order: string | null): void => {
      // A key answered afresh twice would mean two executions (two orders).
      this.check(known === undefined, () => `key ${slot} was executed again although its first answer was acknowledged`);
      this.ackedKeys.set(slot, { wallet, key, sent: { ...sent }, fingerprint, body, order });
    };
    if (outcome.kind === 'placed') firstAnswer(renderAnswer(outcome, command.requestId).body, d.decision.order!.id);
    else if (outcome.kind === 'error' && d.decision.remember !== null) firstAnswer(renderAnswer(outcome, command.requestId).body, null);
    else if (outcome.kind === 'replay') {
      if (known === undefined) {
        // The first answer became durable without being acknowledged (a sync that
        // failed after the data reached the disk); from now on it is the answer.
        this.ackedKeys.set(slot, { wallet, key, sent: { ...sent }, fingerprint, body: outcome.record.body, order: outcome.record.order });
      } else {
        this.check(outcome.record.body === known.body, () => `key ${slot}: replayed body ${outcome.record.body} differs from the first answer ${known.body}`);
        this.check(outcome.record.fingerprint === fingerprint, () => `key ${slot}: replay for a different payload`);
      }
    } else if (outcome.kind === 'error' && outcome.error.code === 'IDEMPOTENCY' && known !== undefined) {
      this.check(known.fingerprint !== fingerprint, () => `key ${slot}: same payload refused as IDEMPOTENCY`);
    }
  }

  private credit(): void {
    const wallet = this.rng.pick(this.walletIds);
    const reason = `credit-${this.nextId()}`;
    const current = this.actors.get(wallet)!.state.wallet.credits;
    const amount = this.rng.chance(0.75)
      ? this.rng.int(1, 30) * 1_000_000 + this.rng.int(0, 999_999)
      : 0 - this.rng.int(1, current + 2_000_000);
    const delivery = this.send(wallet, { kind: 'credit', amount, reason }, (d) => {
      if (d.decision.outcome.kind === 'credited') this.ackedReasons.add(reason);
    });
    if (delivery !== null) this.note(`w${wallet} credit ${amount}: ${this.outcomeText(delivery)}`);
  }

  private setStatus(): void {
    if (this.knownOrders.length === 0) return;
    const target = this.rng.pick(this.knownOrders);
    // Mostly the order's own wallet; sometimes another one, which must not find it.
    const wallet = this.rng.chance(0.9) ? target.wallet : this.rng.pick(this.walletIds);
    const to = this.rng.pick(ORDER_STATUSES);
    let remains: number | null = null;
    if (to === 'partial') {
      remains = this.rng.chance(0.85) && target.units >= 2 ? this.rng.int(1, target.units - 1) : this.rng.pick([0, target.units]);
    } else if (this.rng.chance(0.05)) {
      remains = 1;
    }
    const reason = `status-${this.nextId()}`;
    const command: Command = { kind: 'set-status', orderId: target.id, to, remains, reason };
    const delivery = this.send(wallet, command, (d) => {
      const o = d.decision.outcome;
      if (o.kind !== 'moved') return;
      this.ackedReasons.add(reason);
      if (to === 'partial' && o.order.extras?.runs !== undefined && remains! > o.order.quantity) this.report.partialsOverRuns++;
      const before = this.ackedStatus.get(target.id);
      this.check(before === undefined || RANK.get(before)! < RANK.get(to)!, () => `order ${target.id}: acknowledged move ${before} → ${to} goes backwards`);
      this.check(before === undefined || !FINAL_STATUSES.has(before), () => `order ${target.id}: acknowledged move away from final ${before}`);
      this.ackedStatus.set(target.id, to);
    });
    if (delivery !== null) this.note(`w${wallet} status ${target.id} → ${to}${remains === null ? '' : ` remains ${remains}`}: ${this.outcomeText(delivery)}`);
  }

  /**
   * The lifecycle commands: a customer's cancel (of a pending order: a
   * refund; of a started one: a request), operator progress, a refill
   * request, and an operator's refill move (from the durable refill row, as
   * the admin API reads it).
   */
  private lifecycle(): void {
    if (this.knownOrders.length === 0) return;
    const target = this.rng.pick(this.knownOrders);
    let wallet = this.rng.chance(0.9) ? target.wallet : this.rng.pick(this.walletIds);
    const r = this.rng.float();
    let command: Command;
    if (r < 0.35) command = { kind: 'cancel', orderId: target.id };
    else if (r < 0.55) command = { kind: 'progress', orderId: target.id, startCount: this.rng.int(0, 1000), remains: this.rng.int(0, target.units + 1) };
    else if (r < 0.8 || this.knownRefills.length === 0) command = { kind: 'refill', orderId: target.id };
    else {
      const stored = this.wal.get('refills', this.rng.pick(this.knownRefills)) as RefillRecord | undefined;
      if (stored === undefined) return;
      wallet = stored.account;
      const reason = `refill-${this.nextId()}`;
      command = { kind: 'refill-status', stored, to: this.rng.pick(REFILL_STATUSES), reason };
    }
    const delivery = this.send(wallet, command, (d) => {
      if (d.decision.outcome.kind === 'error') return;
      for (const e of d.decision.events) {
        if (e.type === 'order.status' && e.refund > 0) this.report.cancelsRefunded++;
        if (e.type === 'order.cancel_requested') this.report.cancelRequests++;
        if (e.type === 'refill.requested') this.report.refillsOpened++;
        if (e.type === 'order.status') {
          const before = this.ackedStatus.get(e.order);
          this.check(before === undefined || !FINAL_STATUSES.has(before), () => `order ${e.order}: a customer cancel was acknowledged after final ${before}`);
          this.ackedStatus.set(e.order, e.to);
        }
        if (e.type === 'refill.requested' || e.type === 'refill.status') this.ackedRefills.set(e.refill, e.type === 'refill.status' ? e.to : 'pending');
        if (e.type === 'refill.status' && e.reason !== undefined) this.ackedReasons.add(e.reason);
      }
    });
    if (delivery === null) return;
    if (command.kind === 'refill' && delivery.decision.refill !== null) this.knownRefills.push(delivery.decision.refill.id);
    this.note(`w${wallet} ${command.kind} ${target.id}: ${this.outcomeText(delivery)}`);
  }

  /**
   * The claim queue's commands on one order: a claim with a lease, its
   * holder (or another worker) extending or releasing it, and the sweep's
   * expiry, on the simulated clock, so leases end as the clock moves.
   */
  private lease(): void {
    if (this.knownOrders.length === 0) return;
    const r = this.rng.float();
    // Claims take any order; the other commands mostly name one claimed before, by its worker.
    const claimed = r >= 0.4 && this.claimed.length > 0 && this.rng.chance(0.9) ? this.rng.pick(this.claimed) : null;
    const target = claimed?.order ?? this.rng.pick(this.knownOrders);
    const worker = claimed !== null && this.rng.chance(0.8) ? claimed.worker : this.rng.pick(['w1', 'w2']);
    const leaseExpiresMs = this.clock.wallMs() + this.rng.int(LEASE_SECONDS_MIN, 2 * LEASE_SECONDS_MIN) * 1000;
    let command: Command;
    if (r < 0.4) command = { kind: 'set-status', orderId: target.id, to: 'processing', remains: null, claim: { worker, leaseExpiresMs } };
    else if (r < 0.6) command = { kind: 'extend-lease', orderId: target.id, worker, leaseExpiresMs };
    else if (r < 0.75) command = { kind: 'release', orderId: target.id, worker };
    else command = { kind: 'expire-lease', orderId: target.id };
    const delivery = this.send(target.wallet, command, (d) => {
      if (d.decision.outcome.kind === 'error') return;
      for (const e of d.decision.events) {
        if (e.type === 'order.status') {
          this.report.leasesTaken++;
          this.ackedStatus.set(e.order, e.to);
        }
        if (e.type === 'order.released') {
          this.report.leasesEnded++;
          this.ackedStatus.set(e.order, 'pending');
        }
      }
    });
    if (delivery === null) return;
    if (command.kind === 'set-status' && delivery.decision.outcome.kind === 'moved') this.claimed.push({ order: target, worker });
    this.note(`w${target.wallet} ${command.kind} ${target.id} by ${worker}: ${this.outcomeText(delivery)}`);
  }

  private grantPlan(): void {
    const wallet = this.rng.pick(this.walletIds);
    const months = this.rng.int(1, 2);
    const reason = `plan-${this.nextId()}`;
    const delivery = this.send(wallet, { kind: 'grant-plan', months, reason }, (d) => {
      if (d.decision.outcome.kind === 'changed') this.ackedReasons.add(reason);
    });
    if (delivery !== null) this.note(`w${wallet} plan +${months} months: ${this.outcomeText(delivery)}`);
  }

  /** A balance read: its answer must be a balance that is durable when the client gets it. */
  private readBalance(): void {
    const wallet = this.rng.pick(this.walletIds);
    const delivery = this.send(wallet, { kind: 'balance' }, (d) => {
      const o = d.decision.outcome;
      if (o.kind !== 'balance') return;
      const shown = /"credits":([0-9.]+)/.exec(renderAnswer(o, 'sim').body)?.[1];
      const durable = this.durableBalances(this.wal.durableImage(), wallet).map(formatMicro);
      this.check(shown !== undefined && durable.includes(shown), () => `w${wallet}: a balance read showed ${shown}, which is not a durable balance (${durable.slice(-5).join(', ')})`);
    });
    if (delivery !== null) this.note(`w${wallet} balance: ${this.outcomeText(delivery)}`);
  }

  // --- The run -----------------------------------------------------------

  async run(): Promise<SimulationReport> {
    for (this.step = 1; this.step <= this.options.steps; this.step++) {
      if (this.fatal !== null) await this.restart('a failed commit');
      const r = this.rng.float();
      if (r < 0.36) this.placeOrder();
      else if (r < 0.46) this.credit();
      else if (r < 0.53) this.setStatus();
      else if (r < 0.6) {
        if (this.rng.chance(0.25)) this.lease();
        else this.lifecycle();
      }
      else if (r < 0.63) this.grantPlan();
      else if (r < 0.66) {
        if (this.options.balanceReads) this.readBalance();
      }
      else if (r < 0.72) {
        const ms = this.rng.chance(0.9) ? this.rng.int(1, 120_000) : this.rng.int(1, 45) * MS_PER_DAY;
        this.clock.advance(ms);
        this.note(`clock +${ms} ms`);
      } else if (r < 0.92) {
        const all = this.rng.chance(0.2);
        const entries = all ? this.wal.syncAll() : this.wal.step();
        this.report.syncs++;
        this.note(`${all ? 'sync all' : 'sync next'}: ${entries} entries durable`);
      } else if (r < 0.96) {
        this.wal.seal();
        this.note('seal batch');
      } else if (r < 0.98) {
        if (this.options.crashes) {
          this.report.crashes++;
          await this.restart('a crash');
        }
      } else if (this.options.commitFailures && this.wal.failure === null) {
        const durable = this.rng.chance(0.5);
        this.wal.failNextCommit(new Error(`simulated sync failure (seed ${this.options.seed}, step ${this.step})`), { durable });
        this.report.commitFailures++;
        this.note(`next sync fails${durable ? ' after the data reached the disk' : ''}`);
      }
      await this.settle();
    }
    // The end: let everything in flight complete, then compare memory and disk.
    if (this.fatal === null) {
      this.wal.syncAll();
      await this.settle();
    }
    if (this.fatal === null) {
      const image = this.wal.durableImage();
      for (const [id, actor] of this.actors) {
        const row = image.tables.wallets.get(tableKeyString(id)) as WalletRecord;
        this.check(
          row.credits === actor.state.wallet.credits && row.unlimitedExpiresMs === actor.state.wallet.unlimitedExpiresMs,
          () => `w${id}: after the final sync memory holds ${JSON.stringify(actor.state.wallet)} but the disk ${JSON.stringify(row)}`,
        );
      }
      this.checkDurable(image, 'at the end');
    }
    await this.restart('the end of the run');
    const image = this.wal.durableImage();
    this.report.durableEvents = image.events.length;
    this.report.digest = digestOf(image);
    return this.report;
  }

  // --- Invariants ----------------------------------------------------------

  /** Every balance a wallet has had on disk: its opening credits, then after each event. */
  private durableBalances(image: DurableImage, wallet: number): number[] {
    const out: number[] = [];
    for (const e of image.events) {
      if (!('account' in e) || e.account !== wallet) continue;
      if (e.type === 'account.created') out.push(e.credits);
      else if (e.type === 'credits.adjusted' || e.type === 'order.placed' || e.type === 'order.status') out.push(e.balance);
    }
    return out;
  }

  private checkDurable(image: DurableImage, when: string): void {
    const { tables } = image;
    const at = (detail: string): string => `${when}: ${detail}`;

    // The ledger's rules (balances, charges, status moves, refunds due, rows
    // against the log): the same replay verify runs, over the durable image.
    const ledger = replayLedger(imageLedgerSource(image));
    this.check(ledger.ok, () => at(ledger.firstBroken ?? 'the ledger does not verify'));
    for (const id of this.walletIds) this.check(tables.wallets.has(tableKeyString(id)), () => at(`wallet ${id} has no row`));

    // Storage beyond the ledger: the status index holds exactly one entry per
    // order, under its status; each Idempotency-Key created at most one order
    // and its record points at it (or, for a remembered refusal, at none).
    const expectedIndex = new Set<string>();
    for (const value of tables.orders.values()) {
      const o = value as OrderRecord;
      const indexKey = tableKeyString(orderIndexKey(o));
      expectedIndex.add(indexKey);
      this.check(tables.orderIndex.get(indexKey) === o.account, () => at(`order ${o.id} is missing from the status index`));
    }
    for (const key of tables.orderIndex.keys()) this.check(expectedIndex.has(key), () => at(`stale status index entry ${key}`));
    const placedByKey = new Map<string, string>();
    const reasons = new Set<string>();
    const refunded = new Map<string, number>();
    for (const e of image.events) {
      if ('reason' in e && typeof e.reason === 'string') reasons.add(e.reason);
      if (e.type === 'order.status') refunded.set(e.order, (refunded.get(e.order) ?? 0) + e.refund);
      if (e.type === 'order.placed' && e.idempotencyKey !== null) {
        const slot = idempotencyTableKey(e.account, e.idempotencyKey);
        this.check(!placedByKey.has(slot), () => at(`key ${slot} created two orders: ${placedByKey.get(slot)} and ${e.order}`));
        placedByKey.set(slot, e.order);
      }
      if (e.type === 'order.rejected') {
        const slot = idempotencyTableKey(e.account, e.idempotencyKey);
        const r = tables.idempotency.get(tableKeyString(slot)) as IdempotencyRecord | undefined;
        this.check(r !== undefined && r.order === null, () => at(`key ${slot} was rejected (${e.code}) but its record is ${JSON.stringify(r)}`));
      }
    }
    for (const [rowKey, value] of tables.idempotency) {
      const r = value as IdempotencyRecord;
      const slot = JSON.parse(rowKey) as string;
      if (r.order !== null) {
        this.check(placedByKey.get(slot) === r.order, () => at(`key ${slot} names order ${r.order}, the log says ${placedByKey.get(slot)}`));
      }
    }
    for (const [slot, id] of placedByKey) {
      const r = tables.idempotency.get(tableKeyString(slot)) as IdempotencyRecord | undefined;
      this.check(r !== undefined && r.order === id, () => at(`order ${id} was placed under key ${slot} but the key record is ${JSON.stringify(r)}`));
    }

    // Every order costs what it delivers: it is charged for every unit it
    // asks for (all the runs of a drip-feed order), and once final the
    // customer has paid, net of refunds, for the units delivered only (none
    // when canceled, all but remains when partial), or nothing under the
    // unlimited plan. Priced here by units, not as decide prices them
    // (quantity, then runs), so a rule that drops the runs somewhere shows.
    for (const value of tables.orders.values()) {
      const o = value as OrderRecord;
      const units = unitsOrdered(o);
      this.check(o.charge === chargeFor(units, o.rate) && o.debit === (o.unlimited ? 0 : o.charge), () => at(`order ${o.id} of ${units} units at ${o.rate} was charged ${o.charge}, debited ${o.debit}`));
      if (!FINAL_STATUSES.has(o.status)) continue;
      const delivered = units - remainsShown(o);
      const paid = o.debit - (refunded.get(o.id) ?? 0);
      const due = o.unlimited ? 0 : chargeFor(delivered, o.rate);
      this.check(paid === due, () => at(`order ${o.id} is ${o.status} with ${delivered} of ${units} units delivered; the customer paid ${paid}, not ${due}`));
    }

    // Nothing acknowledged was lost.
    for (const [id, acked] of this.ackedOrders) {
      const row = tables.orders.get(tableKeyString(id)) as OrderRecord | undefined;
      this.check(row !== undefined, () => at(`acknowledged order ${id} (w${acked.wallet}, charge ${acked.order.charge}) is not durable`));
      this.check(
        row!.charge === acked.order.charge && row!.debit === acked.order.debit && row!.account === acked.wallet,
        () => at(`acknowledged order ${id} was charged ${acked.order.charge} but the disk says ${row!.charge}`),
      );
    }
    for (const reason of this.ackedReasons) this.check(reasons.has(reason), () => at(`acknowledged change "${reason}" is not durable`));
    // A claim's lease may end, or its worker release it, durably: that order may be back in pending.
    const released = new Set<string>();
    for (const e of image.events) if (e.type === 'order.released') released.add(e.order);
    for (const [id, to] of this.ackedStatus) {
      const row = tables.orders.get(tableKeyString(id)) as OrderRecord | undefined;
      const back = row?.status === 'pending' && to === 'processing' && released.has(id);
      this.check(row !== undefined && (back || RANK.get(row.status)! >= RANK.get(to)!), () => at(`order ${id} was acknowledged as ${to} but is ${row?.status} on disk`));
      if (FINAL_STATUSES.has(to)) this.check(row!.status === to, () => at(`order ${id} was acknowledged as final ${to} but is ${row!.status} on disk`));
    }
    // Refills: every row was requested in the log, and every acknowledged
    // refill is durable in at least the status it was acknowledged in.
    const requested = new Set<number>();
    for (const e of image.events) if (e.type === 'refill.requested') requested.add(e.refill);
    for (const value of tables.refills.values()) {
      const refill = value as RefillRecord;
      this.check(requested.has(refill.id), () => at(`refill ${refill.id} has a row but no refill.requested in the log`));
    }
    for (const [id, status] of this.ackedRefills) {
      const row = tables.refills.get(tableKeyString(id)) as RefillRecord | undefined;
      // On disk it is where it was acknowledged, or a move forward from there (the ledger's refill rules).
      const reached = row !== undefined && (row.status === status || refillMoveRefusal(status, row.status) === null);
      this.check(reached, () => at(`refill ${id} was acknowledged as ${status} but is ${row?.status} on disk`));
      if (!isOpenRefill(status)) this.check(row!.status === status, () => at(`refill ${id} was acknowledged as final ${status} but is ${row!.status} on disk`));
    }
    for (const [slot, answer] of this.ackedKeys) {
      const r = tables.idempotency.get(tableKeyString(idempotencyTableKey(answer.wallet, answer.key))) as IdempotencyRecord | undefined;
      this.check(r !== undefined, () => at(`acknowledged key ${slot} has no durable record`));
      this.check(r!.fingerprint === answer.fingerprint && r!.body === answer.body, () => at(`key ${slot}: durable record ${r!.body} differs from the acknowledged ${answer.body}`));
    }
  }

  /**
   * After a restart, a client retries every acknowledged Idempotency-Key:
   * the same payload must get the original answer back, a different payload
   * IDEMPOTENCY, and neither may change anything.
   */
  private async checkReplays(when: string): Promise<void> {
    for (const [slot, answer] of this.ackedKeys) {
      const same = this.orderCommand(answer.sent, answer.key);
      this.check(same.request.ok && same.request.idempotency?.fingerprint === answer.fingerprint, () => `${when}: key ${slot}: the same body has another fingerprint now`);
      const d1 = this.actors.get(answer.wallet)!.send(same);
      this.check(d1 !== null, () => `${when}: replay of ${slot} refused`);
      const o1 = d1!.decision.outcome;
      this.check(
        o1.kind === 'replay' && o1.record.body === answer.body,
        () => `${when}: key ${slot} with the same payload answered ${JSON.stringify(o1)} instead of the original ${answer.body}`,
      );
      const changed: OrderBody = { ...answer.sent, target: `${answer.sent.target}-changed` };
      const d2 = this.actors.get(answer.wallet)!.send(this.orderCommand(changed, answer.key));
      const o2 = d2!.decision.outcome;
      this.check(o2.kind === 'error' && o2.error.code === 'IDEMPOTENCY', () => `${when}: key ${slot} with a different payload answered ${JSON.stringify(o2)}`);
      this.check(d1!.decision.events.length === 0 && d2!.decision.events.length === 0, () => `${when}: a replay of ${slot} wrote events`);
      this.report.replaysChecked++;
    }
    await this.settle();
  }

  /** Drains promise callbacks, then fails the run if a check inside one of them failed. */
  private async settle(): Promise<void> {
    await drain();
    if (this.asyncFailure !== null) throw this.asyncFailure;
  }
}

/** Runs every promise callback that is ready (the only asynchrony in a run). */
function drain(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Runs one seeded simulation; throws a `SimulationFailure` naming the seed when an invariant breaks. */
export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  const full: Required<SimulationOptions> = {
    wallets: 3,
    crashes: true,
    commitFailures: true,
    balanceReads: true,
    actor: 'correct',
    ...options,
  };
  return new Simulation(full).run();
}

/** Runs seeds `from` .. `from + count - 1`; stops at the first failure. */
export async function runSeeds(
  from: number,
  count: number,
  options: Omit<SimulationOptions, 'seed'>,
): Promise<{ reports: SimulationReport[]; failure: SimulationFailure | null }> {
  const reports: SimulationReport[] = [];
  for (let seed = from; seed < from + count; seed++) {
    try {
      reports.push(await runSimulation({ ...options, seed }));
    } catch (error) {
      if (error instanceof SimulationFailure) return { reports, failure: error };
      // Anything else (an invariant assertion inside src, a TypeError) is
      // reported with its seed too, so it reproduces.
      const failure = new SimulationFailure(seed, -1, `threw ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, []);
      return { reports, failure };
    }
  }
  return { reports, failure: null };
}
