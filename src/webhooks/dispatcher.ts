/**
 * The outbox's delivering side. New messages are in the log, in the order
 * they were written: `webhook.queued` events, or implied by an order.placed
 * event that names its endpoints (outbox.ts); the dispatcher reads
 * the log from its cursor into a bounded window of messages and posts from
 * it with bounded concurrency (in total and per endpoint). A message
 * whose endpoint cannot take it now (failing, backing off after a failure,
 * disabled, or so slow that its messages fill the window) is moved, in a
 * commit of its own, to that endpoint's held rows (`webhookOutbox`, keyed
 * `[endpoint, seq]`), and so is every later message for that endpoint until
 * its held rows are drained; held rows are read a page at a time. So the
 * common path never writes a per-endpoint key, the order path only appends
 * to the log, and a long backlog costs disk, not heap.
 *
 * - In order per order: a message is sent only when no earlier message of
 *   the same order (the same `subject`) for that endpoint is still waiting
 *   or in flight, from the queue or from the held rows; messages of
 *   different orders go out side by side. Held rows keep their log
 *   numbers, and a held row is sent only once the window has read past it,
 *   so the two sources interleave in sequence.
 * - At least once: the cursor (`meta`, WEBHOOK_CURSOR_KEY) is the lowest
 *   log number whose message may still need sending; the log below it needs
 *   nothing. It moves only in the commits of delivery results (after a 2xx,
 *   a move to the held rows, a drop), to the first window message still
 *   waiting or in flight, so it never passes a message not yet settled. A
 *   crash sends again, with the same webhook-id, the messages above the
 *   cursor that were delivered but not yet passed by it (at most a window,
 *   from the seconds before the crash); messages already moved to the held
 *   rows are recognised and not read twice. Until its result commit is
 *   durable a message counts as in flight, so it is not sent twice
 *   meanwhile. A move to the held rows is one commit; until it is durable
 *   the message still blocks its order.
 * - Retries: after a failure the endpoint waits `retryDelayMs` (exponential
 *   from 1 s with jitter, capped at an hour) on the injected clock; attempts
 *   that fail together are one step, and a success resets it. A message
 *   that has failed for the retry window (24 h, from its first failure)
 *   marks the endpoint failing: it is skipped, and its messages are kept,
 *   until the operator replays it.
 * - Bounded: an endpoint keeps at most `heldMax` held messages
 *   (WEBHOOKS_HELD_MAX), so that a dead receiver of a busy reseller cannot
 *   fill the disk the order path commits to. A message that would go beyond
 *   it is dropped (passed by the cursor, counted) and the endpoint is
 *   marked failing; what it kept stays a gap-free prefix of its messages,
 *   sent in order on replay. The count is kept in memory (counted once per
 *   endpoint when the process starts), so listings never count rows.
 * - Nothing here races the order path: actors only ever append to the log;
 *   only this class writes the cursor and the held rows.
 */
import { performance as nodePerformance } from 'node:perf_hooks';
import type { Clock } from '../platform/index.js';
import type { LogEvent } from '../ledger/index.js';
import type { Store, TablePut, Wal, WalEntry, WalStats } from '../wal/index.js';
import { retryDelayMs } from './backoff.js';
import { initialAllowance, nextAllowance } from './delivery-allowance.js';
import type { WebhookDirectory } from './directory.js';
import { messageBody, messageHeaders } from './message.js';
import { messageCount, messagesIn } from './outbox.js';
import { endpointKey, endpointsWithRows, type AttemptOutcome, type DeliveryAttempt, type OutboxMessage, type QueuedMessage, type WebhookEndpoint } from './records.js';
import { SECRET_KEY_FILE } from './secret-box.js';
import type { AttemptResult } from './sender.js';

export interface DispatcherOptions {
  /** WEBHOOKS_CONCURRENCY: most attempts in flight in total. */
  concurrency: number;
  /** Most attempts in flight per endpoint. */
  perEndpointMax: number;
  /** WEBHOOKS_RETRY_HOURS in ms: how long a message is retried, from its first failure, before its endpoint is marked failing. */
  retryMs: number;
  /** WEBHOOKS_LOG_KEEP: attempts kept in each endpoint's delivery log. */
  logKeep: number;
  /** Held messages read per endpoint per pass. */
  pageSize: number;
  /** Most log messages read ahead into memory (waiting, in flight, or being moved). */
  windowMax: number;
  /** WEBHOOKS_HELD_MAX: most held messages per endpoint; beyond it new ones are dropped and the endpoint is marked failing. */
  heldMax: number;
  /** Jitter source, in [0, 1) (tests inject it). */
  random: () => number;
  onError: (error: unknown, what: string) => void;
  /**
   * Yield to the order path: every 100 ms, the attempts that may start
   * until the next sample follow the order path's spare capacity
   * (delivery-allowance.ts). Off in the tests that count deliveries; the
   * rule itself (`nextAllowance`, and the dispatcher obeying it through
   * `applyLoadSample`) is tested with samples handed to it.
   */
  yieldWhenBusy: boolean;
  /**
   * WEBHOOKS_BUSY_PERCENT / 100: while the order path has no spare
   * capacity, attempts per sample at least, as a share of the entries
   * committed in the sample before. Each delivery costs the shared cores
   * two or three orders' worth of work (docs/DECISIONS.md, "What webhooks
   * cost the order path"), so this floor is what a saturated order path
   * gives up to its notifications.
   */
  busyShare: number;
  /**
   * WEBHOOKS_BUSY_MIN_PER_SECOND: while the order path has no spare
   * capacity, attempts a second at least, whatever the share, so that a
   * saturated server still notifies (0: none until it has room, which is
   * what costs the order path least; see docs/DECISIONS.md).
   */
  busyMinPerSecond: number;
}

const LOAD_SAMPLE_MS = 100;

/** One load sample: the event loop's utilisation over the interval, and the WAL's counters at its end. */
export interface LoadSample {
  utilisation: number;
  wal: Pick<WalStats, 'entries' | 'pendingEntries'>;
}

export interface Poster {
  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult>;
}

interface EndpointState {
  /**
   * Backoff steps taken since the last success: attempts that fail together
   * (up to `perEndpointMax` in flight when a receiver goes down) are one
   * step, so the first retry still comes within the first step's delay.
   */
  failures: number;
  /** Wall ms (injected clock) before which the endpoint is not tried again. */
  nextAttemptAtMs: number;
  /** Sequence → subject of messages in flight (or delivered and awaiting their removal), from either source. */
  inFlight: Map<number, string>;
  /** Log number → this endpoint's messages in the window, whatever their state. */
  windowed: Map<number, Windowed>;
  /** True while the endpoint has held rows (or rows being moved there): its new messages join them. */
  holding: boolean;
  /** Its window messages being moved to the held rows (commits not yet durable). */
  moving: number;
  /** Its rows in `webhookOutbox` (counting moves written and not yet durable, and removals not yet durable). */
  held: number;
  /**
   * `atMs` of its first held row, for the backlog gauge: null when it holds
   * none, undefined when not known (read at the next look, then kept until
   * a held row goes).
   */
  oldestHeldAtMs: number | null | undefined;
  /**
   * Per message id not yet delivered: attempts made so far (for the log),
   * and the wall ms of its first failure in this process since the endpoint
   * was last woken (null after a wake: a replay gives it the whole retry
   * window again). Forgotten once delivered.
   */
  attempts: Map<string, { count: number; failingSinceMs: number | null }>;
  nextLogSeq: number;
}

/** A message read from the log into the window. */
interface Windowed {
  /** Its key in the window (a placement's event implies one message per endpoint, all at the event's log number). */
  slot: number;
  /** The log number of the event that holds or implies it. */
  seq: number;
  message: QueuedMessage;
  state: 'waiting' | 'sending' | 'settling';
}

export interface DispatcherStats {
  deliveries: Record<AttemptOutcome, number>;
  inFlight: number;
  /** Messages dropped since start because their endpoint held `heldMax` already. */
  dropped: number;
  /** Endpoints the dispatcher keeps state for: live ones it has met, and deleted ones until their purge is done. */
  endpointStates: number;
  /** Attempts the order path leaves room for, a second (the last sample's allowance × 10; ALLOWANCE_MAX × 10 means no limit). */
  allowedPerSecond: number;
}

/** Rows removed per commit when a deleted endpoint's rows are dropped. */
const PURGE_PAGE = 1_000;
/** The tables with rows per endpoint (keyed `[endpoint, seq]`), which a deleted endpoint's purge empties: its held messages, then its delivery log. */
const ENDPOINT_TABLES = ['webhookOutbox', 'webhookLog'] as const;
/** Log events read per look at the log. */
const LOG_PAGE = 256;
/** Most log events one pass reads (most may be other events): the rest waits for the next pass, so a pass stays short. */
const LOG_EVENTS_PER_PASS = 8_192;
/** The cursor is written on its own (not only with delivery results) once it lags this many log numbers behind. */
const CURSOR_LAG_MAX = 4_096;
/** Key (`meta`) of the cursor: every log number below it needs no delivery. */
export const WEBHOOK_CURSOR_KEY = 'webhookCursor';
/** The log's first number (store.ts numbers events from 1). */
const FIRST_LOG_SEQ = 1;

export class Dispatcher {
  private readonly states = new Map<number, EndpointState>();
  /** Endpoints that may have held messages to send. */
  private readonly work = new Set<number>();
  /** Messages read from the log and not yet settled, in log order (a Map keeps insertion order), by slot. */
  private readonly window = new Map<number, Windowed>();
  private nextSlot = 0;
  /** Every log event below this number has been read: its message is in the window, held, or settled. */
  private cursor: number;
  /** The cursor as durable (or in a result commit on its way), which only grows. */
  private persisted: number;
  /** Messages written to the log (counted when the actor built them) and not yet read into the window. */
  private unread: number;
  /** The last look at the log reached its end (events written later have higher numbers than any held row). */
  private caughtUp = false;
  private active = 0;
  /** The allowance rule's state (delivery-allowance.ts). */
  private allowance = initialAllowance();
  /** Attempts that may still start in this load sample (no limit before the first, or without `yieldWhenBusy`). */
  private budget = Infinity;
  /** Attempts started in this load sample. */
  private started = 0;
  private loadTimer: NodeJS.Timeout | null = null;
  private readonly counts: Record<AttemptOutcome, number> = { delivered: 0, failed: 0, timeout: 0, forbidden: 0 };
  private dropped = 0;
  /** Endpoints whose failing mark is being written (one event each, however many failures or drops meanwhile). */
  private readonly marking = new Set<number>();
  /** The next commit of delivery results (removals, moves and log rows), built during one event-loop turn. */
  private pending: { entry: WalEntry; after: (() => void)[] } | null = null;
  private nudged = false;
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
    this.persisted = readCursor(store);
    this.cursor = this.persisted;
    this.unread = countMessages(store, this.cursor);
    for (const endpoint of endpointsWithRows(this.store, 'webhookOutbox')) {
      this.work.add(endpoint);
      this.state(endpoint).holding = true;
    }
    // A deleted endpoint's log rows that a stop cut its purge short of: purged now. One key read per endpoint with a log, once per start.
    for (const endpoint of endpointsWithRows(this.store, 'webhookLog')) if (directory.get(endpoint) === undefined) this.work.add(endpoint);
  }

  /** Starts the pass timer (wall time; the retry schedule itself is on the injected clock). */
  start(pollMs: number): void {
    // The timer also looks at the queue again: new rows are announced by
    // `written`, and this bounds how long a missed announcement could delay them.
    this.timer = setInterval(() => {
      this.caughtUp = false;
      this.pass();
      if (this.pending === null && this.lowWater() - this.persisted >= CURSOR_LAG_MAX) this.pendingCommit();
    }, pollMs);
    this.timer.unref();
    // Attempts before the start (none in a server; a test's set-up) are not the first sample's.
    this.started = 0;
    if (this.options.yieldWhenBusy) {
      let last = nodePerformance.eventLoopUtilization();
      this.loadTimer = setInterval(() => {
        const now = nodePerformance.eventLoopUtilization();
        this.applyLoadSample({ utilisation: nodePerformance.eventLoopUtilization(now, last).utilization, wal: this.wal.stats() });
        last = now;
        this.pass();
      }, LOAD_SAMPLE_MS);
      this.loadTimer.unref();
    }
    this.pass();
  }

  /**
   * The yield rule, applied to one load sample (every 100 ms when
   * `yieldWhenBusy`): sets the attempts that may start until the next.
   */
  applyLoadSample(sample: LoadSample): void {
    this.allowance = nextAllowance(
      this.allowance,
      { utilisation: sample.utilisation, entries: sample.wal.entries, pendingEntries: sample.wal.pendingEntries, started: this.started },
      this.options,
    );
    this.budget = this.allowance.allowance;
    this.started = 0;
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
   * An actor wrote messages into the entry it is building: look at the log
   * once that entry is durable (it is appended in the same turn, so
   * `flushed()` after this turn covers it; before that the events may not
   * be visible, and in overlapping-sync mode not yet on disk).
   */
  written(messages: number): void {
    this.unread += messages;
    // While the window is full (a saturated order path writes far more
    // messages than it lets out) a look could read nothing: the window's
    // next settle passes again, and reads, once it has room.
    if (this.window.size >= this.options.windowMax) {
      this.caughtUp = false;
      return;
    }
    if (this.nudged) return;
    this.nudged = true;
    setImmediate(() => {
      this.nudged = false;
      this.wal.flushed().then(
        () => {
          this.caughtUp = false;
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
      for (const tried of state.attempts.values()) tried.failingSinceMs = null;
    }
    this.pass();
  }

  stats(): DispatcherStats {
    return { deliveries: { ...this.counts }, inFlight: this.active, dropped: this.dropped, endpointStates: this.states.size, allowedPerSecond: this.allowance.allowance * (1000 / LOAD_SAMPLE_MS) };
  }

  /**
   * Messages not yet delivered (in the log past the cursor, or held) and the
   * age of the oldest, for metrics and the operator. The count costs no
   * walk. The oldest is each holding endpoint's first held row, kept in its
   * state: a scrape reads only the first rows it does not know, those of
   * endpoints whose held rows were delivered from since it was last read,
   * so with many endpoints holding (a receiver down for everyone) a scrape
   * stays a walk of memory, not a read per endpoint. A deleted endpoint's
   * rows, which its purge is removing, count in the number but not in the
   * age: they will never be delivered.
   */
  backlog(): { held: number; oldestAtMs: number | null } {
    let queued = this.unread;
    let oldest: number | null = null;
    for (const w of this.window.values()) {
      if (w.state === 'settling') continue;
      queued++;
      if (oldest === null) oldest = w.message.atMs;
    }
    const held = (this.store.tables.webhookOutbox.getStats() as { entryCount: number }).entryCount;
    for (const [endpoint, state] of this.states) {
      if (state.held === 0 || this.directory.get(endpoint) === undefined) continue;
      // Read once when not known; a miss (its moves not yet durable) is not kept.
      state.oldestHeldAtMs ??= this.firstHeldAtMs(endpoint) ?? undefined;
      const at = state.oldestHeldAtMs;
      if (typeof at === 'number' && (oldest === null || at < oldest)) oldest = at;
    }
    return { held: queued + held, oldestAtMs: oldest };
  }

  /** `atMs` of the endpoint's first held row, null when it has none durable yet. */
  private firstHeldAtMs(endpoint: number): number | null {
    for (const { value } of this.store.tables.webhookOutbox.getRange({ start: [endpoint], end: [endpoint + 1], limit: 1 })) return (value as OutboxMessage).atMs;
    return null;
  }

  /** Undelivered messages of one endpoint that the dispatcher knows of (held rows and window), oldest first (the operator's view). */
  held(endpoint: number, limit: number): OutboxMessage[] {
    const out: { seq: number; message: OutboxMessage }[] = [];
    for (const { key, value } of this.store.tables.webhookOutbox.getRange({ start: [endpoint], end: [endpoint + 1], limit })) out.push({ seq: (key as [number, number])[1], message: value as OutboxMessage });
    for (const w of this.undelivered(endpoint)) out.push({ seq: w.seq, message: w.message });
    return out
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
      .map((x) => x.message);
  }

  /** How many undelivered messages of an endpoint the dispatcher knows of (held rows and window); no rows are counted. */
  heldCount(endpoint: number): number {
    let windowed = 0;
    for (const _ of this.undelivered(endpoint)) windowed++;
    return (this.states.get(endpoint)?.held ?? 0) + windowed;
  }

  /** The endpoint's messages in the window that are not on their way out (its own `windowed` index, not a walk of the whole window). */
  private *undelivered(endpoint: number): Generator<Windowed> {
    for (const w of this.states.get(endpoint)?.windowed.values() ?? []) if (w.state !== 'settling') yield w;
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
      this.caughtUp = false;
      this.pass();
      if (this.running.size === 0) return;
    }
  }

  /** One pass: read the queue into the window, start what the limits allow from it, then from the held rows. */
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
        this.fillWindow();
        this.sendFromWindow();
        for (const id of [...this.work]) {
          if (!this.canStart()) break;
          this.pump(id);
        }
      } while (this.passAgain);
    } catch (error) {
      this.options.onError(error, 'webhook dispatch pass failed');
    } finally {
      this.passing = false;
    }
  }

  private canStart(): boolean {
    return this.active < this.options.concurrency && this.budget > 0;
  }

  private state(id: number): EndpointState {
    let state = this.states.get(id);
    if (state === undefined) {
      let nextLogSeq = 1;
      for (const key of this.store.tables.webhookLog.getKeys({ start: [id + 1], end: [id], reverse: true, limit: 1 })) nextLogSeq = (key as [number, number])[1] + 1;
      // Counted once per endpoint and process (at start-up for every endpoint that holds rows); kept up to date from here on.
      const held = this.store.tables.webhookOutbox.getCount({ start: [id], end: [id + 1] });
      state = { failures: 0, nextAttemptAtMs: 0, inFlight: new Map(), windowed: new Map(), holding: false, moving: 0, held, oldestHeldAtMs: held === 0 ? null : undefined, attempts: new Map(), nextLogSeq };
      this.states.set(id, state);
    }
    return state;
  }

  /** Reads the log past the cursor until the window is full, the log ends, or the pass has read its share. */
  private fillWindow(): void {
    if (!this.caughtUp && this.unread === 0) {
      // Every message written so far has been read (each is counted before
      // its commit is encoded, and numbered then): the events up to the
      // log's next number hold none, so the look is skipped.
      this.cursor = Math.max(this.cursor, this.store.nextSeq);
      this.caughtUp = true;
    }
    let events = 0;
    while (!this.caughtUp && this.window.size < this.options.windowMax) {
      if (events >= LOG_EVENTS_PER_PASS) {
        setImmediate(() => this.pass());
        return;
      }
      let read = 0;
      for (const { key, value } of this.store.log.getRange({ start: this.cursor, limit: LOG_PAGE })) {
        const seq = key as number;
        read++;
        this.cursor = seq + 1;
        // A placement's messages all come in together, so the window may pass windowMax by a few.
        for (const message of messagesIn(value as LogEvent)) this.admit(seq, message);
        if (this.window.size >= this.options.windowMax) break;
      }
      events += read;
      if (read < LOG_PAGE && this.window.size < this.options.windowMax) this.caughtUp = true;
    }
  }

  /** A message just read from the log at `seq` joins the window (unless it was moved to the held rows before a restart). */
  private admit(seq: number, message: QueuedMessage): void {
    this.unread = Math.max(0, this.unread - 1);
    // Its endpoint was deleted: there is nothing to send, and no state may be made for it again after its purge dropped it.
    if (this.directory.get(message.endpoint) === undefined) return;
    const state = this.state(message.endpoint);
    // Moved to the held rows before a restart, above the cursor then: not read twice.
    if (state.holding && this.store.tables.webhookOutbox.doesExist(endpointKey(message.endpoint, seq))) return;
    const slot = this.nextSlot++;
    const w: Windowed = { slot, seq, message, state: 'waiting' };
    this.window.set(slot, w);
    state.windowed.set(seq, w);
  }

  /** Where the cursor may be: the first window message not yet settled, else past everything read. */
  private lowWater(): number {
    for (const w of this.window.values()) if (w.state !== 'settling') return w.seq;
    return this.cursor;
  }

  /** Starts, moves or drops the window's waiting messages, oldest first. */
  private sendFromWindow(): void {
    // Nothing can start: the walk waits for the next pass (it is the hot
    // part of a pass, and under load the budget is spent most of the time).
    if (!this.canStart()) return;
    const now = this.clock.wallMs();
    /** `${endpoint} ${subject}` of every message seen so far in this walk and not yet settled: later ones of the same order wait. */
    const blocked = new Set<string>();
    let stuck = 0;
    for (const w of this.window.values()) {
      if (!this.canStart()) return;
      const { endpoint: id, subject } = w.message;
      const order = `${id} ${subject}`;
      if (w.state !== 'waiting') {
        blocked.add(order);
        continue;
      }
      const endpoint = this.directory.get(id);
      if (endpoint === undefined) {
        this.settleRow(w);
        continue;
      }
      const state = this.state(id);
      // Held rows keep their order among themselves and against the window (see `pump`), so a move never needs to wait.
      if (state.holding || !endpoint.enabled || endpoint.failingSinceMs !== null || now < state.nextAttemptAtMs) {
        this.moveToHeld(w, state);
        continue;
      }
      if (blocked.has(order) || state.inFlight.size >= this.options.perEndpointMax) {
        blocked.add(order);
        stuck++;
        continue;
      }
      blocked.add(order);
      w.state = 'sending';
      this.attempt(endpoint, state, w.seq, w.message, w);
    }
    // A full window that cannot move while attempts could start is held up
    // by endpoints at their own limit (slow receivers): their messages go to
    // the held rows, so the other endpoints' messages behind them can be read.
    if (this.window.size >= this.options.windowMax && stuck > 0 && this.canStart()) {
      for (const w of this.window.values()) {
        // A deleted endpoint's messages get no held rows: the next pass settles them.
        if (w.state !== 'waiting' || this.directory.get(w.message.endpoint) === undefined) continue;
        const state = this.state(w.message.endpoint);
        if (state.inFlight.size >= this.options.perEndpointMax) this.moveToHeld(w, state);
      }
    }
  }

  /** Moves a window message to its endpoint's held rows (in the next result commit); the endpoint holds from now on. Beyond `heldMax` the message is dropped instead. */
  private moveToHeld(w: Windowed, state: EndpointState): void {
    const id = w.message.endpoint;
    if (state.held >= this.options.heldMax) {
      this.dropped++;
      this.settleRow(w);
      this.markFailingFor(id, `it holds ${state.held} undelivered messages, the most WEBHOOKS_HELD_MAX keeps; newer changes are dropped until it is replayed`);
      return;
    }
    // The first move into an empty set of held rows sets the oldest; a later one can be older (an attempt
    // that failed late, after newer messages of the endpoint failed and moved), so the oldest is kept.
    if (state.held === 0) state.oldestHeldAtMs = w.message.atMs;
    else if (typeof state.oldestHeldAtMs === 'number' && w.message.atMs < state.oldestHeldAtMs) state.oldestHeldAtMs = w.message.atMs;
    state.held++;
    state.holding = true;
    state.moving++;
    this.work.add(id);
    const { endpoint: _endpoint, ...message } = w.message;
    this.settleRow(w, () => {
      state.moving--;
    }).puts.push({ table: 'webhookOutbox', key: endpointKey(id, w.seq), value: message satisfies OutboxMessage });
  }

  /**
   * Settles a window message in the next result commit, whose cursor then
   * passes it; returns that commit's entry for whatever the caller writes
   * with it (a move to the held rows). The message leaves the window once
   * the commit is durable.
   */
  private settleRow(w: Windowed, after?: () => void): WalEntry {
    w.state = 'settling';
    const pending = this.pendingCommit();
    pending.after.push(() => {
      this.window.delete(w.slot);
      this.states.get(w.message.endpoint)?.windowed.delete(w.seq);
      after?.();
    });
    return pending.entry;
  }

  /** Starts what an endpoint's held rows allow. */
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
    // Messages of this endpoint still in the window (being moved here, or in flight) come first.
    for (const w of state.windowed.values()) blocked.add(w.message.subject);
    let seen = 0;
    for (const { key, value } of this.store.tables.webhookOutbox.getRange({ start: [id], end: [id + 1], limit: this.options.pageSize })) {
      seen++;
      const seq = (key as [number, number])[1];
      const message = value as OutboxMessage;
      // Not before the window has read past it: an earlier message of its order may not be read yet.
      if (seq >= this.cursor && !this.caughtUp) break;
      if (blocked.has(message.subject) || state.inFlight.has(seq)) {
        blocked.add(message.subject);
        continue;
      }
      blocked.add(message.subject);
      if (state.inFlight.size >= this.options.perEndpointMax || !this.canStart()) return;
      this.attempt(endpoint, state, seq, message, null);
    }
    if (seen === 0 && state.inFlight.size === 0 && state.moving === 0) {
      // Drained: new messages go straight from the queue again.
      state.holding = false;
      this.work.delete(id);
    }
  }

  /** Posts one message; `w` is its window slot when it came from the queue, null when from the held rows. */
  private attempt(endpoint: WebhookEndpoint, state: EndpointState, seq: number, message: OutboxMessage, w: Windowed | null): void {
    state.inFlight.set(seq, message.subject);
    this.active++;
    this.budget--;
    this.started++;
    const attempt = (state.attempts.get(message.id)?.count ?? 0) + 1;
    const round = state.failures;
    const now = this.clock.wallMs();
    const body = messageBody(message);
    const started = performance.now();
    let posted: Promise<AttemptResult>;
    try {
      const headers = messageHeaders(message, body, this.directory.signingSecrets(endpoint, now), now);
      // In overlapping-sync mode a row can be read once committed, before it is
      // synced: nothing is sent about a change until it is on disk.
      const synced = this.wal.readBarrier();
      posted = synced === null ? this.poster.post(endpoint.url, headers, body) : synced.then(() => this.poster.post(endpoint.url, headers, body));
    } catch (error) {
      // Its secret cannot be opened (a database restored without its sealing key): a failed attempt like any
      // other, logged for the operator and retried with backoff, never a slot or a window message lost for good.
      posted = Promise.resolve({ outcome: 'failed', status: null, error: `the endpoint's secret cannot be opened with this server's sealing key (WEBHOOKS_SECRET_KEY or ${SECRET_KEY_FILE}); rotate its secret (${error instanceof Error ? error.message : String(error)})` });
    }
    const done = posted.then(
      (result) => this.settle(endpoint.id, state, seq, message, w, attempt, round, result, Math.round(performance.now() - started)),
      (error: unknown) => this.settle(endpoint.id, state, seq, message, w, attempt, round, { outcome: 'failed', status: null, error: String(error) }, 0),
    );
    this.track(done);
  }

  /** `round` is the endpoint's backoff step when the attempt started. */
  private settle(id: number, state: EndpointState, seq: number, message: OutboxMessage, w: Windowed | null, attempt: number, round: number, result: AttemptResult, durationMs: number): void {
    this.active--;
    this.counts[result.outcome]++;
    if (this.directory.get(id) === undefined) {
      // Deleted while the attempt was in flight: no log row, no held row and no state are written for it
      // (its purge removes its rows and drops its state); a window message only gives back its slot.
      if (w === null) state.inFlight.delete(seq);
      else this.settleRow(w, () => state.inFlight.delete(seq));
      this.pass();
      return;
    }
    const now = this.clock.wallMs();
    const logged: DeliveryAttempt = { atMs: now, message: message.id, type: message.type, subject: message.subject, attempt, outcome: result.outcome, status: result.status, error: result.error, durationMs };
    const logSeq = state.nextLogSeq++;
    const pending = this.pendingCommit();
    pending.entry.puts.push({ table: 'webhookLog', key: endpointKey(id, logSeq), value: logged });
    if (logSeq > this.options.logKeep) pending.entry.removes!.push({ table: 'webhookLog', key: endpointKey(id, logSeq - this.options.logKeep) });
    if (result.outcome === 'delivered') {
      state.failures = 0;
      state.nextAttemptAtMs = 0;
      state.attempts.delete(message.id);
      if (w === null) {
        pending.entry.removes!.push({ table: 'webhookOutbox', key: endpointKey(id, seq) });
        pending.after.push(() => {
          state.inFlight.delete(seq);
          state.held--;
          // It may have been the first held row: read again when next asked.
          state.oldestHeldAtMs = state.held === 0 ? null : undefined;
        });
      } else {
        this.settleRow(w, () => state.inFlight.delete(seq));
      }
      return;
    }
    // The retry window is the message's own: counted from its first failure (not from its age, which a replay
    // or a day disabled would exhaust at once), and not reset by other messages' successes (one message a
    // receiver always refuses must still mark its endpoint failing, as it holds its order's later changes).
    const failingSinceMs = state.attempts.get(message.id)?.failingSinceMs ?? now;
    state.attempts.set(message.id, { count: attempt, failingSinceMs });
    // One step per round of retries: an attempt started before another's failure was counted is part of that
    // step (a success since then, which reset the count, makes it the first step of a new run of failures).
    if (round >= state.failures) {
      state.failures++;
      state.nextAttemptAtMs = now + retryDelayMs(state.failures, this.options.random());
    }
    // A queue message that failed waits among the held rows; it blocks its order until it is there.
    if (w === null) state.inFlight.delete(seq);
    else {
      this.moveToHeld(w, state);
      pending.after.push(() => state.inFlight.delete(seq));
    }
    if (now - failingSinceMs >= this.options.retryMs) this.markFailing(id, message, failingSinceMs, result);
    else this.pass();
  }

  private markFailing(id: number, message: OutboxMessage, sinceMs: number, result: AttemptResult): void {
    const hours = Math.floor((this.clock.wallMs() - sinceMs) / 3_600_000);
    this.markFailingFor(id, `message ${message.id} has failed for ${hours} hours (last: ${result.error ?? result.outcome})`);
  }

  private markFailingFor(id: number, reason: string): void {
    const endpoint = this.directory.get(id);
    if (endpoint === undefined || endpoint.failingSinceMs !== null || this.marking.has(id)) return;
    this.marking.add(id);
    this.track(
      this.directory
        .markFailing(endpoint, reason)
        .catch((error: unknown) => this.options.onError(error, 'could not mark a webhook endpoint failing'))
        .finally(() => this.marking.delete(id)),
    );
  }

  /** Delivery results of this turn go into one commit: moves of messages, log rows, and the cursor past what they settle. */
  private pendingCommit(): { entry: WalEntry; after: (() => void)[] } {
    if (this.pending !== null) return this.pending;
    const pending = { entry: { events: [], puts: [] as TablePut[], removes: [] as NonNullable<WalEntry['removes']> }, after: [] as (() => void)[] };
    this.pending = pending;
    // Tracked from now, not from the append, so `idle` and `stop` wait for it.
    this.track(
      new Promise<void>((resolve) => {
        setImmediate(() => {
          this.pending = null;
          // Every message settling now is settled by this commit or an
          // earlier one (commits land in order): the cursor may pass it.
          const low = this.lowWater();
          if (low > this.persisted) {
            this.persisted = low;
            pending.entry.puts.push({ table: 'meta', key: WEBHOOK_CURSOR_KEY, value: low });
          }
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

  /**
   * Forgets a deleted endpoint: its held messages and its delivery log are
   * dropped, a page per commit, then its state. Result commits built before
   * the deletion may still write its rows (a move to its held rows, a log
   * row), so its rows are read
   * once those commits are durable; none built after it writes any (each
   * write checks the directory first), and an attempt still in flight
   * settles without its state.
   */
  private purge(id: number): void {
    if (this.purging.has(id)) return;
    this.purging.add(id);
    const step = (): void => {
      const removes: NonNullable<WalEntry['removes']> = [];
      for (const table of ENDPOINT_TABLES) {
        const room = PURGE_PAGE - removes.length;
        if (room === 0) break;
        for (const key of this.store.tables[table].getKeys({ start: [id], end: [id + 1], limit: room })) removes.push({ table, key: key as [number, number] });
      }
      if (removes.length === 0) {
        this.purging.delete(id);
        this.states.delete(id);
        return;
      }
      this.track(this.wal.append({ events: [], puts: [], removes }).then(step, () => {}));
    };
    const afterEarlierResults = (): void => this.track(this.wal.flushed().then(step, () => {}));
    if (this.pending === null) afterEarlierResults();
    else this.pending.after.push(afterEarlierResults);
  }

  private track(promise: Promise<unknown>): void {
    this.running.add(promise);
    const drop = (): void => {
      this.running.delete(promise);
    };
    promise.then(drop, drop);
  }
}

/** The cursor as stored; a store that has none has settled nothing yet, so it starts at the log's first number. */
function readCursor(store: Store): number {
  return (store.tables.meta.get(WEBHOOK_CURSOR_KEY) as number | undefined) ?? FIRST_LOG_SEQ;
}

/** Messages in the log from `from` on (once, when the process starts: the backlog gauge counts from here). */
function countMessages(store: Store, from: number): number {
  let n = 0;
  for (const { value } of store.log.getRange({ start: from })) n += messageCount(value as LogEvent);
  return n;
}
