/**
 * The outbox's delivering side. It reads each endpoint's held messages from
 * LMDB a page at a time, in the order they were written, and posts them with
 * bounded concurrency (in total and per endpoint); nothing but the messages
 * in flight is held in memory, so a long backlog costs disk, not heap, and
 * the order path never waits for it (it only marks an endpoint as having
 * work).
 *
 * - In order per order: a message is sent only when no earlier message of
 *   the same order (the same `subject`) for that endpoint is still held;
 *   messages of different orders go out side by side.
 * - At least once: a message is removed only after a 2xx, in a commit of its
 *   own (batched with the delivery log rows); a crash before that commit
 *   sends it again, with the same webhook-id. Until the removal is durable
 *   the message counts as in flight, so it is not sent twice meanwhile.
 * - Retries: after a failure the endpoint waits `retryDelayMs` (exponential
 *   from 1 s with jitter, capped at an hour) on the injected clock; a success
 *   resets it. A failure of a message older than the retry window (24 h)
 *   marks the endpoint failing: it is skipped, and its messages are kept,
 *   until the operator replays it.
 * - Removing delivered rows cannot race the order path: actors only ever add
 *   rows under new sequence numbers, and only this class removes, and only
 *   the rows it delivered.
 */
import { performance as nodePerformance } from 'node:perf_hooks';
import type { Clock } from '../clock.js';
import type { Store, TablePut, Wal, WalEntry } from '../wal/index.js';
import { retryDelayMs } from './backoff.js';
import type { WebhookDirectory } from './directory.js';
import { messageBody, messageHeaders } from './message.js';
import { outboxKey, type AttemptOutcome, type DeliveryAttempt, type OutboxMessage, type WebhookEndpoint } from './records.js';
import type { AttemptResult } from './sender.js';

export interface DispatcherOptions {
  /** WEBHOOKS_CONCURRENCY: most attempts in flight in total. */
  concurrency: number;
  /** Most attempts in flight per endpoint. */
  perEndpointMax: number;
  /** WEBHOOKS_RETRY_HOURS in ms: how long a message is retried before its endpoint is marked failing. */
  retryMs: number;
  /** WEBHOOKS_LOG_KEEP: attempts kept in each endpoint's delivery log. */
  logKeep: number;
  /** Messages read per endpoint per pass. */
  pageSize: number;
  /** Jitter source, in [0, 1) (tests inject it). */
  random: () => number;
  onError: (error: unknown, what: string) => void;
  /**
   * Yield to the order path: every 100 ms, when the event loop was busy
   * (BUSY_UTILISATION) or commits are queueing (BUSY_PENDING_ENTRIES), start
   * only a small share of the entries just committed (BUSY_SHARE, at least
   * BUSY_ATTEMPTS_PER_TICK) until the next sample (tests that count
   * deliveries turn it off; it depends on real time).
   */
  yieldWhenBusy: boolean;
}

/** Event-loop utilisation (0–1, over the last 100 ms) above which deliveries yield to the order path. */
export const BUSY_UTILISATION = 0.6;
/**
 * Entries waiting for their commit above which the storage path counts as
 * busy too: a server can be bound by its commits (the write thread, the
 * disk) with its event loop half idle, and deliveries add commits.
 */
export const BUSY_PENDING_ENTRIES = 16;
/** While busy, attempts per sample: 5% of the entries committed in the last one, at least 5 (50 a second). */
export const BUSY_SHARE = 0.05;
export const BUSY_ATTEMPTS_PER_TICK = 5;
const LOAD_SAMPLE_MS = 100;

export interface Poster {
  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult>;
}

interface EndpointState {
  failures: number;
  /** Wall ms (injected clock) before which the endpoint is not tried again. */
  nextAttemptAtMs: number;
  /** Sequence → subject of messages in flight (or delivered and awaiting their removal). */
  inFlight: Map<number, string>;
  /** Attempts made so far per message id (for the log), forgotten once delivered. */
  attempts: Map<string, number>;
  nextLogSeq: number;
}

export interface DispatcherStats {
  deliveries: Record<AttemptOutcome, number>;
  inFlight: number;
}

/** Rows removed per commit when a deleted endpoint's messages are dropped. */
const PURGE_PAGE = 1_000;

export class Dispatcher {
  private readonly states = new Map<number, EndpointState>();
  /** Endpoints that may have messages to send. */
  private readonly work = new Set<number>();
  private active = 0;
  /** Attempts that may still start in this load sample (Infinity while the loop is not busy). */
  private budget = Infinity;
  private loadTimer: NodeJS.Timeout | null = null;
  private readonly counts: Record<AttemptOutcome, number> = { delivered: 0, failed: 0, timeout: 0, forbidden: 0 };
  /** The next commit of delivery results (removals and log rows), built during one event-loop turn. */
  private pending: { entry: WalEntry; after: (() => void)[] } | null = null;
  private nudged = false;
  /** Endpoints that got messages in entries not yet known to be durable. */
  private incoming = new Set<number>();
  private passing = false;
  private passAgain = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly purging = new Set<number>();
  /** Settles when every attempt in flight and every pending result commit is done (tests and shutdown). */
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    private readonly directory: WebhookDirectory,
    private readonly poster: Poster,
    private readonly options: DispatcherOptions,
  ) {
    for (const endpoint of this.heldEndpoints()) this.work.add(endpoint);
  }

  /** Starts the pass timer (wall time; the retry schedule itself is on the injected clock). */
  start(pollMs: number): void {
    this.timer = setInterval(() => this.pass(), pollMs);
    this.timer.unref();
    if (this.options.yieldWhenBusy) {
      let last = nodePerformance.eventLoopUtilization();
      let lastEntries = this.wal.stats().entries;
      this.loadTimer = setInterval(() => {
        const now = nodePerformance.eventLoopUtilization();
        const wal = this.wal.stats();
        const busy = nodePerformance.eventLoopUtilization(now, last).utilization > BUSY_UTILISATION || wal.pendingEntries >= BUSY_PENDING_ENTRIES;
        this.budget = busy ? Math.max(BUSY_ATTEMPTS_PER_TICK, Math.floor((wal.entries - lastEntries) * BUSY_SHARE)) : Infinity;
        last = now;
        lastEntries = wal.entries;
        this.pass();
      }, LOAD_SAMPLE_MS);
      this.loadTimer.unref();
    }
    this.pass();
  }

  /** Waits for attempts in flight and result commits; no new attempt starts. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.loadTimer !== null) clearInterval(this.loadTimer);
    this.timer = null;
    this.loadTimer = null;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /**
   * The actor wrote a message for this endpoint into the entry it is
   * building: pass once that entry is durable (the entry is appended in the
   * same turn, so `flushed()` after this turn covers it).
   */
  written(endpoint: number): void {
    this.incoming.add(endpoint);
    if (this.nudged) return;
    this.nudged = true;
    setImmediate(() => {
      this.nudged = false;
      // Endpoints join the work only once their rows are durable (and so
      // visible): a pass before that would find nothing and drop them.
      const batch = this.incoming;
      this.incoming = new Set();
      this.wal.flushed().then(
        () => {
          for (const id of batch) this.work.add(id);
          this.pass();
        },
        () => {},
      );
    });
  }

  /** An endpoint was registered, enabled or replayed: look at its messages now. */
  wake(endpoint: number): void {
    this.work.add(endpoint);
    const state = this.states.get(endpoint);
    if (state !== undefined) {
      state.failures = 0;
      state.nextAttemptAtMs = 0;
    }
    this.pass();
  }

  stats(): DispatcherStats {
    return { deliveries: { ...this.counts }, inFlight: this.active };
  }

  /** Messages held (in the outbox) and the age of the oldest, for metrics and the operator. */
  backlog(): { held: number; oldestAtMs: number | null } {
    const stats = this.store.tables.webhookOutbox.getStats() as { entryCount: number };
    let oldest: number | null = null;
    for (const endpoint of this.heldEndpoints()) {
      for (const { value } of this.store.tables.webhookOutbox.getRange({ start: [endpoint], end: [endpoint + 1], limit: 1 })) {
        const at = (value as OutboxMessage).atMs;
        if (oldest === null || at < oldest) oldest = at;
      }
    }
    return { held: stats.entryCount, oldestAtMs: oldest };
  }

  /** Held messages of one endpoint, oldest first (the operator's view). */
  held(endpoint: number, limit: number): OutboxMessage[] {
    const out: OutboxMessage[] = [];
    for (const { value } of this.store.tables.webhookOutbox.getRange({ start: [endpoint], end: [endpoint + 1], limit })) out.push(value as OutboxMessage);
    return out;
  }

  /** How many messages an endpoint holds. */
  heldCount(endpoint: number): number {
    return this.store.tables.webhookOutbox.getCount({ start: [endpoint], end: [endpoint + 1] });
  }

  /** The endpoint's delivery log, newest first. */
  log(endpoint: number, limit: number): DeliveryAttempt[] {
    const out: DeliveryAttempt[] = [];
    for (const { value } of this.store.tables.webhookLog.getRange({ start: [endpoint + 1], end: [endpoint], reverse: true, limit })) out.push(value as DeliveryAttempt);
    return out;
  }

  /** Resolves when nothing is in flight and nothing waits to be sent now (tests). */
  async idle(): Promise<void> {
    for (;;) {
      while (this.running.size > 0) await Promise.allSettled([...this.running]);
      await this.wal.flushed();
      this.pass();
      if (this.running.size === 0) return;
    }
  }

  /** One pass over the endpoints with work: start what the limits allow. */
  pass(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.passAgain = true;
      return;
    }
    this.passing = true;
    try {
      do {
        this.passAgain = false;
        if (this.active >= this.options.concurrency || this.budget <= 0) return;
        for (const id of [...this.work]) {
          if (this.active >= this.options.concurrency || this.budget <= 0) return;
          this.pump(id);
        }
      } while (this.passAgain);
    } catch (error) {
      this.options.onError(error, 'webhook dispatch pass failed');
    } finally {
      this.passing = false;
    }
  }

  private state(id: number): EndpointState {
    let state = this.states.get(id);
    if (state === undefined) {
      let nextLogSeq = 1;
      for (const key of this.store.tables.webhookLog.getKeys({ start: [id + 1], end: [id], reverse: true, limit: 1 })) nextLogSeq = (key as [number, number])[1] + 1;
      state = { failures: 0, nextAttemptAtMs: 0, inFlight: new Map(), attempts: new Map(), nextLogSeq };
      this.states.set(id, state);
    }
    return state;
  }

  private pump(id: number): void {
    const endpoint = this.directory.get(id);
    if (endpoint === undefined) {
      this.work.delete(id);
      this.purge(id);
      return;
    }
    // A disabled or failing endpoint keeps its messages; enabling or replaying wakes it.
    if (!endpoint.enabled || endpoint.failingSinceMs !== null) {
      this.work.delete(id);
      return;
    }
    const state = this.state(id);
    if (this.clock.wallMs() < state.nextAttemptAtMs) return;
    if (state.inFlight.size >= this.options.perEndpointMax) return;
    const blocked = new Set(state.inFlight.values());
    let seen = 0;
    for (const { key, value } of this.store.tables.webhookOutbox.getRange({ start: [id], end: [id + 1], limit: this.options.pageSize })) {
      seen++;
      const seq = (key as [number, number])[1];
      const message = value as OutboxMessage;
      if (blocked.has(message.subject)) continue;
      blocked.add(message.subject);
      if (state.inFlight.size >= this.options.perEndpointMax || this.active >= this.options.concurrency || this.budget <= 0) return;
      this.attempt(endpoint, state, seq, message);
    }
    if (seen === 0 && state.inFlight.size === 0) this.work.delete(id);
  }

  private attempt(endpoint: WebhookEndpoint, state: EndpointState, seq: number, message: OutboxMessage): void {
    state.inFlight.set(seq, message.subject);
    this.active++;
    this.budget--;
    const attempt = (state.attempts.get(message.id) ?? 0) + 1;
    const now = this.clock.wallMs();
    const body = messageBody(message);
    const headers = messageHeaders(message, body, this.directory.signingSecrets(endpoint, now), now);
    const started = performance.now();
    // In overlapping-sync mode a row can be read once committed, before it is
    // synced: nothing is sent about a change until it is on disk.
    const synced = this.store.syncMode === 'overlapping' ? Promise.resolve(this.store.root.flushed) : null;
    const posted = synced === null ? this.poster.post(endpoint.url, headers, body) : synced.then(() => this.poster.post(endpoint.url, headers, body));
    const done = posted.then(
      (result) => this.settle(endpoint.id, state, seq, message, attempt, result, Math.round(performance.now() - started)),
      (error: unknown) => this.settle(endpoint.id, state, seq, message, attempt, { outcome: 'failed', status: null, error: String(error) }, 0),
    );
    this.track(done);
  }

  private settle(id: number, state: EndpointState, seq: number, message: OutboxMessage, attempt: number, result: AttemptResult, durationMs: number): void {
    this.active--;
    this.counts[result.outcome]++;
    const now = this.clock.wallMs();
    const logged: DeliveryAttempt = { atMs: now, message: message.id, type: message.type, subject: message.subject, attempt, outcome: result.outcome, status: result.status, error: result.error, durationMs };
    const logSeq = state.nextLogSeq++;
    const pending = this.pendingCommit();
    pending.entry.puts.push({ table: 'webhookLog', key: outboxKey(id, logSeq), value: logged });
    if (logSeq > this.options.logKeep) pending.entry.removes!.push({ table: 'webhookLog', key: outboxKey(id, logSeq - this.options.logKeep) });
    if (result.outcome === 'delivered') {
      state.failures = 0;
      state.nextAttemptAtMs = 0;
      state.attempts.delete(message.id);
      pending.entry.removes!.push({ table: 'webhookOutbox', key: outboxKey(id, seq) });
      pending.after.push(() => state.inFlight.delete(seq));
      return;
    }
    state.inFlight.delete(seq);
    state.attempts.set(message.id, attempt);
    state.failures++;
    state.nextAttemptAtMs = now + retryDelayMs(state.failures, this.options.random());
    if (now - message.atMs >= this.options.retryMs) this.markFailing(id, message, result);
    else this.pass();
  }

  private markFailing(id: number, message: OutboxMessage, result: AttemptResult): void {
    const endpoint = this.directory.get(id);
    if (endpoint === undefined || endpoint.failingSinceMs !== null) return;
    const hours = Math.floor((this.clock.wallMs() - message.atMs) / 3_600_000);
    const reason = `message ${message.id} has failed for ${hours} hours (last: ${result.error ?? result.outcome})`;
    this.track(this.directory.markFailing(endpoint, reason).catch((error: unknown) => this.options.onError(error, 'could not mark a webhook endpoint failing')));
  }

  /** Delivery results of this turn go into one commit: removals of delivered messages and log rows. */
  private pendingCommit(): { entry: WalEntry; after: (() => void)[] } {
    if (this.pending !== null) return this.pending;
    const pending = { entry: { events: [], puts: [] as TablePut[], removes: [] as NonNullable<WalEntry['removes']> }, after: [] as (() => void)[] };
    this.pending = pending;
    // Tracked from now, not from the append, so `idle` and `stop` wait for it.
    this.track(
      new Promise<void>((resolve) => {
        setImmediate(() => {
          this.pending = null;
          this.wal.append(pending.entry).then(
            () => {
              for (const f of pending.after) f();
              resolve();
              this.pass();
            },
            // A failed commit stops the process (fail-stop); nothing more to do here.
            () => resolve(),
          );
        });
      }),
    );
    return pending;
  }

  /** Drops the held messages of a deleted endpoint, a page per commit. */
  private purge(id: number): void {
    if (this.purging.has(id)) return;
    this.purging.add(id);
    const step = (): void => {
      const removes: NonNullable<WalEntry['removes']> = [];
      for (const key of this.store.tables.webhookOutbox.getKeys({ start: [id], end: [id + 1], limit: PURGE_PAGE })) removes.push({ table: 'webhookOutbox', key: key as [number, number] });
      if (removes.length === 0) {
        this.purging.delete(id);
        return;
      }
      this.track(this.wal.append({ events: [], puts: [], removes }).then(step, () => {}));
    };
    step();
  }

  /** Endpoint ids that hold messages, found by skipping from one endpoint's rows to the next. */
  private *heldEndpoints(): Generator<number> {
    let start = 0;
    for (;;) {
      let found: number | null = null;
      for (const key of this.store.tables.webhookOutbox.getKeys({ start: [start], limit: 1 })) found = (key as [number, number])[0];
      if (found === null) return;
      yield found;
      start = found + 1;
    }
  }

  private track(promise: Promise<unknown>): void {
    this.running.add(promise);
    const drop = (): void => {
      this.running.delete(promise);
    };
    promise.then(drop, drop);
  }
}
