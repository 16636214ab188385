/**
 * Delivery attempts: sending a message, recording the attempt in its
 * endpoint's delivery log, and what a failure costs the endpoint.
 *
 * - Send: the body and the signed headers (message.ts), posted only once
 *   the change it reports is on disk (`readBarrier`). A message keeps its
 *   webhook-id on every attempt. An endpoint has at most `perEndpointMax`
 *   attempts in flight, and one while its last attempt timed out (`hasRoom`),
 *   so a slow or hanging receiver cannot take every slot.
 * - Record: every attempt is a row of the endpoint's delivery log
 *   (`webhookLog`, keyed `[endpoint, n]`); the oldest beyond `logKeep` goes
 *   in the same commit.
 * - Backoff: after a failure the endpoint waits `retryDelayMs` (backoff.ts)
 *   on the injected clock. Attempts that fail together (up to
 *   `perEndpointMax` in flight when a receiver goes down) are one step, so
 *   the first retry still comes within the first step's delay; a success
 *   resets it.
 * - Failing: a message that has failed for the retry window (`retryMs`,
 *   counted from its own first failure) marks its endpoint failing: it is
 *   skipped, and its messages kept, until the operator replays it. An
 *   attempt refused by the address guard marks it failing at once: retrying
 *   cannot change the answer.
 */
import { assert, MS_PER_HOUR, type Clock } from '../platform/index.js';
import type { Store, WalEntry, Wal } from '../wal/index.js';
import { retryDelayMs } from './backoff.js';
import type { WebhookDirectory } from './directory.js';
import { messageBody, messageHeaders } from './message.js';
import { endpointKey, type AttemptOutcome, type DeliveryAttempt, type OutboxMessage, type WebhookEndpoint } from './records.js';
import { SECRET_KEY_FILE } from './secret-box.js';
import type { AttemptResult } from './sender.js';

export interface Poster {
  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult>;
}

/** One endpoint's attempts, as the dispatcher keeps them in memory. */
export interface EndpointAttempts {
  /** Backoff steps taken since the last success. */
  failures: number;
  /** Wall ms (injected clock) before which the endpoint is not tried again. */
  nextAttemptAtMs: number;
  /** Log number → subject of its messages in flight (or delivered and awaiting their result commit), from either source. */
  inFlight: Map<number, string>;
  /**
   * Per message id not yet delivered: attempts made so far (for the log),
   * and the wall ms of its first failure in this process since the endpoint
   * was last woken (null after a wake: a replay gives it the whole retry
   * window again). Forgotten once delivered.
   */
  tries: Map<string, { count: number; failingSinceMs: number | null }>;
  /** The key of its next delivery log row. */
  nextLogSeq: number;
  /** Its last attempt to end timed out (no answer): one attempt at a time until it answers (`hasRoom`). */
  timedOut: boolean;
}

/** An attempt that has its result. */
export interface Outcome {
  endpoint: number;
  /** The endpoint's account (its share of the slots is given back with the result). */
  account: number;
  /** The log number the message keeps. */
  seq: number;
  message: OutboxMessage;
  /** The attempt's number for this message (1 for the first). */
  attempt: number;
  /** The endpoint's backoff step when the attempt started. */
  round: number;
  result: AttemptResult;
  durationMs: number;
}

export interface AttemptSettings {
  /** Most attempts in flight per endpoint. */
  perEndpointMax: number;
  /** WEBHOOKS_RETRY_HOURS in ms: how long a message is retried, from its first failure, before its endpoint is marked failing. */
  retryMs: number;
  /** WEBHOOKS_LOG_KEEP: attempts kept in each endpoint's delivery log. */
  logKeep: number;
  /** Jitter source, in [0, 1) (tests inject it). */
  random: () => number;
  onError: (error: unknown, what: string) => void;
}

export class Attempts {
  private readonly counts: Record<AttemptOutcome, number> = { delivered: 0, failed: 0, timeout: 0, forbidden: 0 };
  /** Endpoints whose failing mark is being written (one event each, however many failures or drops meanwhile). */
  private readonly marking = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly wal: Wal,
    private readonly clock: Clock,
    private readonly directory: WebhookDirectory,
    private readonly poster: Poster,
    private readonly settings: AttemptSettings,
    /** Tracks work that the dispatcher's `idle` and `stop` wait for. */
    private readonly track: (work: Promise<unknown>) => void,
  ) {}

  /** An endpoint's state, its delivery log's next key read from the store. */
  load(endpoint: number): EndpointAttempts {
    let nextLogSeq = 1;
    for (const key of this.store.tables.webhookLog.getKeys({ start: [endpoint + 1], end: [endpoint], reverse: true, limit: 1 })) nextLogSeq = (key as [number, number])[1] + 1;
    return { failures: 0, nextAttemptAtMs: 0, inFlight: new Map(), tries: new Map(), nextLogSeq, timedOut: false };
  }

  /** Whether the endpoint waits out its backoff at `nowMs` (wall ms, injected clock). */
  backingOff(state: EndpointAttempts, nowMs: number): boolean {
    return nowMs < state.nextAttemptAtMs;
  }

  /**
   * Whether the endpoint may start another attempt: fewer than
   * `perEndpointMax` in flight, or fewer than one while its last attempt
   * timed out. A receiver that hangs thus holds one slot, not
   * `perEndpointMax`, from its first timeout until it answers again (an
   * answer of any status ends it: a receiver that answers at once, even
   * with an error, holds no slot for long, and its other messages go out
   * beside a refused one).
   */
  hasRoom(state: EndpointAttempts): boolean {
    return state.inFlight.size < (state.timedOut ? 1 : this.settings.perEndpointMax);
  }

  /** Posts one message; resolves (never rejects) with its outcome. */
  send(endpoint: WebhookEndpoint, state: EndpointAttempts, seq: number, message: OutboxMessage): Promise<Outcome> {
    state.inFlight.set(seq, message.subject);
    const attempt = (state.tries.get(message.id)?.count ?? 0) + 1;
    const round = state.failures;
    const startedMs = performance.now();
    const outcome = (result: AttemptResult, durationMs: number): Outcome => ({ endpoint: endpoint.id, account: endpoint.account, seq, message, attempt, round, result, durationMs });
    return this.post(endpoint, message).then(
      (result) => outcome(result, Math.round(performance.now() - startedMs)),
      (error: unknown) => outcome({ outcome: 'failed', status: null, error: String(error) }, 0),
    );
  }

  private post(endpoint: WebhookEndpoint, message: OutboxMessage): Promise<AttemptResult> {
    const now = this.clock.wallMs();
    const body = messageBody(message);
    try {
      const headers = messageHeaders(message, body, this.directory.signingSecrets(endpoint, now), now);
      // In overlapping-sync mode a row can be read once committed, before it is
      // synced: nothing is sent about a change until it is on disk.
      const synced = this.wal.readBarrier();
      return synced === null ? this.poster.post(endpoint.url, headers, body) : synced.then(() => this.poster.post(endpoint.url, headers, body));
    } catch (error) {
      // Its secret cannot be opened (a database restored without its sealing key): a failed attempt like any
      // other, logged for the operator and retried with backoff, never a slot or a window message lost for good.
      const why = error instanceof Error ? error.message : String(error);
      return Promise.resolve({ outcome: 'failed', status: null, error: `the endpoint's secret cannot be opened with this server's sealing key (WEBHOOKS_SECRET_KEY or ${SECRET_KEY_FILE}); rotate its secret (${why})` });
    }
  }

  /** Counts an attempt's outcome (every attempt, its endpoint deleted or not). */
  count(outcome: AttemptOutcome): void {
    assert(Object.hasOwn(this.counts, outcome), 'a delivery attempt ends in one of the known outcomes', outcome);
    this.counts[outcome]++;
  }

  /** Attempts by outcome since the process started. */
  counted(): Record<AttemptOutcome, number> {
    return { ...this.counts };
  }

  /** Adds the attempt's row to its endpoint's delivery log in `entry`, and the removal of the row `logKeep` before it. */
  record(state: EndpointAttempts, outcome: Outcome, entry: WalEntry): void {
    const { endpoint, message, result } = outcome;
    const logged: DeliveryAttempt = {
      atMs: this.clock.wallMs(),
      message: message.id,
      type: message.type,
      subject: message.subject,
      attempt: outcome.attempt,
      outcome: result.outcome,
      status: result.status,
      error: result.error,
      durationMs: outcome.durationMs,
    };
    const logSeq = state.nextLogSeq++;
    entry.puts.push({ table: 'webhookLog', key: endpointKey(endpoint, logSeq), value: logged });
    if (logSeq > this.settings.logKeep) (entry.removes ??= []).push({ table: 'webhookLog', key: endpointKey(endpoint, logSeq - this.settings.logKeep) });
  }

  /** The endpoint's delivery log, newest first. */
  log(endpoint: number, limit: number): DeliveryAttempt[] {
    const out: DeliveryAttempt[] = [];
    for (const { value } of this.store.tables.webhookLog.getRange({ start: [endpoint + 1], end: [endpoint], reverse: true, limit })) out.push(value as DeliveryAttempt);
    return out;
  }

  /** A delivery resets the endpoint's backoff and forgets the message's tries. */
  delivered(state: EndpointAttempts, message: OutboxMessage): void {
    state.failures = 0;
    state.nextAttemptAtMs = 0;
    state.timedOut = false;
    state.tries.delete(message.id);
  }

  /**
   * A failure: the message's tries and the endpoint's backoff step. Returns
   * why the endpoint is now failing when the message has failed for the
   * retry window, else null.
   */
  failed(state: EndpointAttempts, outcome: Outcome): string | null {
    const { message, result } = outcome;
    const now = this.clock.wallMs();
    // The retry window is the message's own: counted from its first failure (not from its age, which a replay
    // or a day disabled would exhaust at once), and not reset by other messages' successes (one message a
    // receiver always refuses must still mark its endpoint failing, as it holds its order's later changes).
    const failingSinceMs = state.tries.get(message.id)?.failingSinceMs ?? now;
    state.tries.set(message.id, { count: outcome.attempt, failingSinceMs });
    state.timedOut = result.outcome === 'timeout';
    // One step per round of retries: an attempt started before another's failure was counted is part of that
    // step (a success since then, which reset the count, makes it the first step of a new run of failures).
    if (outcome.round >= state.failures) {
      state.failures++;
      state.nextAttemptAtMs = now + retryDelayMs(state.failures, this.settings.random());
    }
    // A refused address stays refused (the URL, or the operator's WEBHOOKS_ALLOW_PRIVATE, must change first): no
    // retries for the whole window, the endpoint is failing at once and its messages are kept for the replay.
    if (result.outcome === 'forbidden') return `its address is refused: ${result.error ?? 'a loopback, private or link-local address'}`;
    if (now - failingSinceMs < this.settings.retryMs) return null;
    const hours = Math.floor((now - failingSinceMs) / MS_PER_HOUR);
    return `message ${message.id} has failed for ${hours} hours (last: ${result.error ?? result.outcome})`;
  }

  /** The endpoint was enabled or replayed: no backoff, and every message gets the whole retry window again. */
  wake(state: EndpointAttempts): void {
    state.failures = 0;
    state.nextAttemptAtMs = 0;
    for (const tried of state.tries.values()) tried.failingSinceMs = null;
  }

  /** Marks the endpoint failing (once, however many failures or drops ask meanwhile), unless it is deleted or failing already. */
  markFailing(id: number, reason: string): void {
    const endpoint = this.directory.get(id);
    if (endpoint === undefined || endpoint.failingSinceMs !== null || this.marking.has(id)) return;
    this.marking.add(id);
    this.track(
      this.directory
        .markFailing(endpoint, reason)
        .catch((error: unknown) => this.settings.onError(error, 'could not mark a webhook endpoint failing'))
        .finally(() => this.marking.delete(id)),
    );
  }
}
