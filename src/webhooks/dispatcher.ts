/**
 * The outbox's delivering side. New messages are in the log, in the order
 * they were written (outbox.ts); the dispatcher reads them into a bounded
 * window (read-window.ts) and posts from it with bounded concurrency
 * (pacing.ts; per account, a share of the slots, account-shares.ts; and per
 * endpoint, attempts.ts). A message whose endpoint
 * cannot take it now (failing, backing off after a failure, disabled, or so
 * slow that its messages fill the window) is moved to that endpoint's held
 * rows (held-rows.ts), and so is every later message for that endpoint
 * until its held rows are drained. Delivery results of one event-loop turn
 * are one commit (result-commit.ts). So the common path never writes a
 * per-endpoint key, the order path only appends to the log, and a long
 * backlog costs disk, not heap.
 *
 * - In order per order: a message is sent only when no earlier message of
 *   the same order (the same `subject`) for that endpoint is still waiting
 *   or in flight, from the window or from the held rows; messages of
 *   different orders go out side by side. Held rows keep their log
 *   numbers, and a held row is sent only once the window has read past it,
 *   so the two sources interleave in sequence.
 * - At least once: the cursor never passes a message whose result commit
 *   is not durable (read-window.ts); until then a message counts as in
 *   flight, so it is not sent twice meanwhile, and a move to the held rows
 *   still blocks its order. Messages already moved to the held rows are
 *   recognised after a restart and not read twice.
 * - Retries, backoff and failing: attempts.ts. Bounded held rows: a message
 *   beyond WEBHOOKS_HELD_MAX is dropped (passed by the cursor, counted) and
 *   its endpoint marked failing; what it kept is sent in order on replay.
 * - Nothing here races the order path: actors only ever append to the log;
 *   only the dispatcher writes the cursor, the held rows and the delivery
 *   log.
 */
import type { Clock } from '../platform/index.js';
import type { Store, Wal } from '../wal/index.js';
import { AccountShares } from './account-shares.js';
import { Attempts, type AttemptSettings, type EndpointAttempts, type Outcome, type Poster } from './attempts.js';
import type { WebhookDirectory } from './directory.js';
import { purgeEndpointRows } from './endpoint-purge.js';
import { HeldRows, type HeldState } from './held-rows.js';
import { Pacing, type LoadSample, type PacingSettings } from './pacing.js';
import { ReadWindow, type Windowed } from './read-window.js';
import { endpointsWithRows, type AttemptOutcome, type DeliveryAttempt, type OutboxMessage, type QueuedMessage, type WebhookEndpoint } from './records.js';
import { ResultCommits } from './result-commit.js';

export interface DispatcherOptions extends PacingSettings, AttemptSettings {
  /** Held messages read per endpoint per pass. */
  pageSize: number;
  /** Most log messages read ahead into memory (waiting, in flight, or being moved). */
  windowMax: number;
  /** WEBHOOKS_HELD_MAX: most held messages per endpoint; beyond it new ones are dropped and the endpoint is marked failing. */
  heldMax: number;
  /**
   * Yield to the order path: every 100 ms, the attempts that may start
   * until the next sample follow the order path's spare capacity
   * (delivery-allowance.ts). Off in the tests that count deliveries; the
   * rule itself (`nextAllowance`, and the dispatcher obeying it through
   * `applyLoadSample`) is tested with samples handed to it.
   */
  yieldWhenBusy: boolean;
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

/** What the dispatcher keeps per endpoint. */
interface EndpointState {
  held: HeldState;
  attempts: EndpointAttempts;
}

export class Dispatcher {
  private readonly states = new Map<number, EndpointState>();
  /** Endpoints that may have held messages to send. */
  private readonly work = new Set<number>();
  private readonly window: ReadWindow;
  private readonly heldRows: HeldRows;
  private readonly pacing: Pacing;
  private readonly shares: AccountShares;
  private readonly attempts: Attempts;
  private readonly commits: ResultCommits;
  private dropped = 0;
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
    poster: Poster,
    private readonly options: DispatcherOptions,
  ) {
    const track = (work: Promise<unknown>): void => this.track(work);
    this.window = new ReadWindow(store, options.windowMax);
    this.heldRows = new HeldRows(store, options.heldMax, options.pageSize);
    this.pacing = new Pacing(options);
    this.shares = new AccountShares(options.concurrency);
    this.attempts = new Attempts(store, wal, clock, directory, poster, options, track);
    this.commits = new ResultCommits(wal, () => this.window.cursorPut(), track, () => this.pass());
    for (const endpoint of this.heldRows.holdingEndpoints()) {
      this.work.add(endpoint);
      this.state(endpoint);
    }
    // A deleted endpoint's log rows that a stop cut its purge short of: purged now. One key read per endpoint with a log, once per start.
    for (const endpoint of endpointsWithRows(store, 'webhookLog')) if (directory.get(endpoint) === undefined) this.work.add(endpoint);
  }

  /** Starts the pass timer (wall time; the retry schedule itself is on the injected clock). */
  start(pollMs: number): void {
    // The timer also looks at the log again: new messages are announced by
    // `written`, and this bounds how long a missed announcement could delay them.
    this.timer = setInterval(() => {
      this.window.lookAgain();
      this.pass();
      if (!this.commits.building && this.window.lagging()) this.commits.current();
    }, pollMs);
    this.timer.unref();
    this.pacing.start(this.options.yieldWhenBusy, () => this.wal.stats(), () => this.pass());
    this.pass();
  }

  /** The yield rule, applied to one load sample (every 100 ms when `yieldWhenBusy`): sets the attempts that may start until the next. */
  applyLoadSample(sample: LoadSample): void {
    this.pacing.apply(sample);
  }

  /** Waits for attempts in flight and result commits; no new attempt starts. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.pacing.stop();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /**
   * An actor wrote messages into the entry it is building: look at the log
   * once that entry is durable (it is appended in the same turn, so
   * `flushed()` after this turn covers it; before that the events may not
   * be visible, and in overlapping-sync mode not yet on disk).
   */
  written(messages: number): void {
    this.window.written(messages);
    // While the window is full (a saturated order path writes far more
    // messages than it lets out) a look could read nothing: the window's
    // next settle passes again, and reads, once it has room.
    if (this.window.full()) {
      this.window.lookAgain();
      return;
    }
    if (this.nudged) return;
    this.nudged = true;
    setImmediate(() => {
      this.nudged = false;
      this.wal.flushed().then(
        () => {
          this.window.lookAgain();
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
    if (state !== undefined) this.attempts.wake(state.attempts);
    this.pass();
  }

  stats(): DispatcherStats {
    return {
      deliveries: this.attempts.counted(),
      inFlight: this.pacing.inFlight,
      dropped: this.dropped,
      endpointStates: this.states.size,
      allowedPerSecond: this.pacing.allowedPerSecond(),
    };
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
    const unsent = this.window.backlog();
    let oldest = unsent.oldestAtMs;
    for (const [endpoint, state] of this.states) {
      if (this.directory.get(endpoint) === undefined) continue;
      const at = this.heldRows.oldestAtMs(state.held, endpoint);
      if (at !== undefined && (oldest === null || at < oldest)) oldest = at;
    }
    return { held: unsent.count + this.heldRows.total(), oldestAtMs: oldest };
  }

  /** Undelivered messages of one endpoint that the dispatcher knows of (held rows and window), oldest first (the operator's view). */
  held(endpoint: number, limit: number): OutboxMessage[] {
    const out: { seq: number; message: OutboxMessage }[] = this.heldRows.list(endpoint, limit);
    for (const w of this.window.unsentOf(endpoint)) out.push({ seq: w.seq, message: w.message });
    return out
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
      .map((x) => x.message);
  }

  /** How many undelivered messages of an endpoint the dispatcher knows of (held rows and window); no rows are counted. */
  heldCount(endpoint: number): number {
    let windowed = 0;
    for (const _ of this.window.unsentOf(endpoint)) windowed++;
    return (this.states.get(endpoint)?.held.held ?? 0) + windowed;
  }

  /** The endpoint's delivery log, newest first. */
  log(endpoint: number, limit: number): DeliveryAttempt[] {
    return this.attempts.log(endpoint, limit);
  }

  /** Resolves when nothing is in flight and nothing waits to be sent now (tests). */
  async idle(): Promise<void> {
    for (;;) {
      while (this.running.size > 0) await Promise.allSettled([...this.running]);
      await this.wal.flushed();
      this.window.lookAgain();
      this.pass();
      if (this.running.size === 0) return;
    }
  }

  /** One pass: read the log into the window, start what the limits allow from it, then from the held rows. */
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
        // A pass that read its share of the log reads on in the next turn.
        if (this.window.fill((seq, message) => this.admits(seq, message))) setImmediate(() => this.pass());
        this.sendFromWindow();
        for (const id of [...this.work]) {
          if (!this.pacing.canStart()) break;
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
      state = { attempts: this.attempts.load(id), held: this.heldRows.load(id) };
      this.states.set(id, state);
    }
    return state;
  }

  /** Whether a message read from the log at `seq` joins the window: not when its endpoint is deleted, nor when it was moved to the held rows before a restart. */
  private admits(seq: number, message: QueuedMessage): boolean {
    // Its endpoint was deleted: there is nothing to send, and no state may be made for it again after its purge dropped it.
    if (this.directory.get(message.endpoint) === undefined) return false;
    return !this.heldRows.has(this.state(message.endpoint).held, message.endpoint, seq);
  }

  /** Starts, moves or drops the window's waiting messages, oldest first. */
  private sendFromWindow(): void {
    // Nothing can start: the walk waits for the next pass (it is the hot
    // part of a pass, and under load the budget is spent most of the time).
    if (!this.pacing.canStart()) return;
    const now = this.clock.wallMs();
    /** `${endpoint} ${subject}` of every message seen so far in this walk and not yet settled: later ones of the same order wait. */
    const blocked = new Set<string>();
    let stuck = 0;
    for (const w of this.window.values()) {
      if (!this.pacing.canStart()) return;
      const order = `${w.message.endpoint} ${w.message.subject}`;
      if (w.state !== 'waiting') {
        blocked.add(order);
        continue;
      }
      const endpoint = this.directory.get(w.message.endpoint);
      if (endpoint === undefined) {
        this.settleRow(w);
        continue;
      }
      const state = this.state(endpoint.id);
      // Held rows keep their order among themselves and against the window (see `pump`), so a move never needs to wait.
      if (state.held.holding || !endpoint.enabled || endpoint.failingSinceMs !== null || this.attempts.backingOff(state.attempts, now)) {
        this.moveToHeld(w, state);
        continue;
      }
      if (blocked.has(order) || !this.hasRoom(endpoint, state)) {
        blocked.add(order);
        stuck++;
        continue;
      }
      blocked.add(order);
      w.state = 'sending';
      this.attempt(endpoint, state, w.seq, w.message, w);
    }
    if (this.window.full() && stuck > 0 && this.pacing.canStart()) this.unblockWindow();
  }

  /**
   * A full window that cannot move while attempts could start is held up by
   * endpoints at their own limit (slow receivers): their messages go to the
   * held rows, so the other endpoints' messages behind them can be read.
   */
  private unblockWindow(): void {
    for (const w of this.window.values()) {
      const endpoint = this.directory.get(w.message.endpoint);
      // A deleted endpoint's messages get no held rows: the next pass settles them.
      if (w.state !== 'waiting' || endpoint === undefined) continue;
      const state = this.state(endpoint.id);
      if (!this.hasRoom(endpoint, state)) this.moveToHeld(w, state);
    }
  }

  /** Moves a window message to its endpoint's held rows (in this turn's result commit). Beyond `heldMax` the message is dropped instead and the endpoint marked failing. */
  private moveToHeld(w: Windowed, state: EndpointState): void {
    const id = w.message.endpoint;
    if (!this.heldRows.move(state.held, w.seq, w.message, this.commits.current().entry)) {
      this.dropped++;
      this.settleRow(w);
      this.attempts.markFailing(id, `it holds ${state.held.held} undelivered messages, the most WEBHOOKS_HELD_MAX keeps; newer changes are dropped until it is replayed`);
      return;
    }
    this.work.add(id);
    this.settleRow(w, () => this.heldRows.moved(state.held));
  }

  /** Settles a window message in this turn's result commit, whose cursor then passes it; it leaves the window once the commit is durable. */
  private settleRow(w: Windowed, then?: () => void): void {
    w.state = 'settling';
    this.commits.current().afterDurable(() => {
      this.window.remove(w);
      then?.();
    });
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
    if (this.attempts.backingOff(state.attempts, this.clock.wallMs()) || !this.hasRoom(endpoint, state)) return;
    const blocked = new Set(state.attempts.inFlight.values());
    // Messages of this endpoint still in the window (being moved here, or in flight) come first.
    for (const w of this.window.ofEndpoint(id)) blocked.add(w.message.subject);
    let seen = 0;
    for (const { seq, message } of this.heldRows.page(id)) {
      seen++;
      // Not before the window has read past it: an earlier message of its order may not be read yet.
      if (!this.window.hasReadPast(seq)) break;
      const waits = blocked.has(message.subject) || state.attempts.inFlight.has(seq);
      blocked.add(message.subject);
      if (waits) continue;
      if (!this.hasRoom(endpoint, state) || !this.pacing.canStart()) return;
      this.attempt(endpoint, state, seq, message, null);
    }
    if (seen === 0 && state.attempts.inFlight.size === 0 && state.held.moving === 0) {
      // Drained: new messages go straight from the window again.
      state.held.holding = false;
      this.work.delete(id);
    }
  }

  /** Whether the endpoint may start another attempt: it is under its own limit (attempts.ts), and its account under its share (account-shares.ts). */
  private hasRoom(endpoint: WebhookEndpoint, state: EndpointState): boolean {
    return this.attempts.hasRoom(state.attempts) && this.shares.hasRoom(endpoint.account);
  }

  /** Posts one message; `w` is its window slot when it came from the window, null when from the held rows. */
  private attempt(endpoint: WebhookEndpoint, state: EndpointState, seq: number, message: OutboxMessage, w: Windowed | null): void {
    this.pacing.begin();
    this.shares.begin(endpoint.account);
    this.track(this.attempts.send(endpoint, state.attempts, seq, message).then((outcome) => this.settle(outcome, state, w)));
  }

  /** An attempt's result: its log row, and the message delivered, or moved to (or kept among) the held rows. */
  private settle(outcome: Outcome, state: EndpointState, w: Windowed | null): void {
    this.pacing.end();
    this.shares.end(outcome.account);
    this.attempts.count(outcome.result.outcome);
    const landed = (): void => void state.attempts.inFlight.delete(outcome.seq);
    if (this.directory.get(outcome.endpoint) === undefined) {
      // Deleted while the attempt was in flight: no log row, no held row and no state are written for it
      // (its purge removes its rows and drops its state); a window message only gives back its slot.
      if (w === null) landed();
      else this.settleRow(w, landed);
      this.pass();
      return;
    }
    const commit = this.commits.current();
    this.attempts.record(state.attempts, outcome, commit.entry);
    if (outcome.result.outcome === 'delivered') {
      this.attempts.delivered(state.attempts, outcome.message);
      if (w !== null) {
        this.settleRow(w, landed);
        return;
      }
      this.heldRows.remove(outcome.endpoint, outcome.seq, commit.entry);
      commit.afterDurable(() => {
        landed();
        this.heldRows.removed(state.held);
      });
      return;
    }
    const failing = this.attempts.failed(state.attempts, outcome);
    // A window message that failed waits among the held rows; it blocks its order until it is there.
    if (w === null) landed();
    else {
      this.moveToHeld(w, state);
      commit.afterDurable(landed);
    }
    if (failing !== null) this.attempts.markFailing(outcome.endpoint, failing);
    else this.pass();
  }

  /**
   * Forgets a deleted endpoint: its held messages and its delivery log are
   * dropped (endpoint-purge.ts), then its state. Result commits built before
   * the deletion may still write its rows (a move to its held rows, a log
   * row), so its rows are read once those commits are durable; none built
   * after it writes any (each write checks the directory first), and an
   * attempt still in flight settles without its state.
   */
  private purge(id: number): void {
    if (this.purging.has(id)) return;
    this.purging.add(id);
    const afterEarlierResults = (): void =>
      this.track(
        this.wal
          .flushed()
          .then(() => purgeEndpointRows(this.store, this.wal, id))
          .then(() => {
            this.purging.delete(id);
            this.states.delete(id);
          })
          .catch(() => {}),
      );
    if (this.commits.building) this.commits.current().afterDurable(afterEarlierResults);
    else afterEarlierResults();
  }

  /**
   * Keeps `promise` among the work `stop` waits for. A rejection is a fault
   * in the dispatcher's own work (an attempt's settling, a purge), never a
   * receiver's answer, which `send` turns into an outcome: it goes to
   * `onError`, which stops the process on a broken invariant.
   */
  private track(promise: Promise<unknown>): void {
    this.running.add(promise);
    promise.then(
      () => void this.running.delete(promise),
      (error: unknown) => {
        this.running.delete(promise);
        this.options.onError(error, 'a webhook delivery could not be settled');
      },
    );
  }
}
