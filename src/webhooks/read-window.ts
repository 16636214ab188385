/**
 * The read-ahead window over the log: new webhook messages are events of
 * the log (outbox.ts), and the dispatcher reads them from its cursor into a
 * bounded window, in log order, from which it sends, moves to the held rows
 * or drops them.
 *
 * The cursor (`meta`, WEBHOOK_CURSOR_KEY) is the lowest log number whose
 * message may still need sending: the log below it needs nothing. It is
 * written only in the commits of delivery results (result-commit.ts asks
 * `cursorPut`), at the first window message not yet settled, so it never
 * passes a message whose result is not durable. A crash therefore sends
 * again the messages above the durable cursor (at least once), under the
 * same webhook-id.
 *
 * Reading is bounded three ways: the window holds at most `windowMax`
 * messages (a placement's messages come in together, so it may pass that by
 * a few), one pass reads at most LOG_EVENTS_PER_PASS events, and while every
 * message written has been read (each is counted when its actor builds it,
 * `written`) the log is not read at all: the read position jumps to the
 * log's next number.
 */
import type { LogEvent } from '../ledger/index.js';
import type { Store, TablePut } from '../wal/index.js';
import { CURSOR_LAG_MAX, LOG_EVENTS_PER_PASS, LOG_PAGE_EVENTS } from './limits.js';
import { messageCount, messagesIn } from './outbox.js';
import type { QueuedMessage } from './records.js';

/** Key (`meta`) of the cursor: every log number below it needs no delivery. */
export const WEBHOOK_CURSOR_KEY = 'webhookCursor';
/** The log's first number (store.ts numbers events from 1): where a store that has settled nothing starts. */
const FIRST_LOG_SEQ = 1;

/** A message read from the log into the window. */
export interface Windowed {
  /** Its key in the window (a placement's event implies one message per endpoint, all at the event's log number). */
  slot: number;
  /** The log number of the event that holds or implies it. */
  seq: number;
  message: QueuedMessage;
  /** Waiting to be sent, being sent, or settled in a result commit that is not durable yet. */
  state: 'waiting' | 'sending' | 'settling';
}

export class ReadWindow {
  /** Messages read and not yet settled, by slot, in log order (a Map keeps insertion order). */
  private readonly messages = new Map<number, Windowed>();
  /** The same messages per endpoint, by log number. */
  private readonly byEndpoint = new Map<number, Map<number, Windowed>>();
  private nextSlot = 0;
  /** Every log event below this number has been read: its message is in the window, held, or settled. */
  private cursor: number;
  /** The cursor as durable (or in a result commit on its way), which only grows. */
  private persisted: number;
  /** Messages written to the log (counted when the actor built them) and not yet read. */
  private unread: number;
  /** The last look at the log reached its end (events written later have higher numbers than any held row). */
  private caughtUp = false;

  constructor(
    private readonly store: Store,
    private readonly windowMax: number,
  ) {
    this.persisted = (store.tables.meta.get(WEBHOOK_CURSOR_KEY) as number | undefined) ?? FIRST_LOG_SEQ;
    this.cursor = this.persisted;
    // Once, when the process starts: the backlog gauge counts from here.
    this.unread = 0;
    for (const { value } of store.log.getRange({ start: this.cursor })) this.unread += messageCount(value as LogEvent);
  }

  get size(): number {
    return this.messages.size;
  }

  full(): boolean {
    return this.messages.size >= this.windowMax;
  }

  /** An actor wrote `count` messages into the entry it is building. */
  written(count: number): void {
    this.unread += count;
  }

  /** The next fill looks at the log again (new events may have been written since it reached the end). */
  lookAgain(): void {
    this.caughtUp = false;
  }

  /** Whether every log event up to `seq` has been read (so no earlier message of an order can still come from the log). */
  hasReadPast(seq: number): boolean {
    return seq < this.cursor || this.caughtUp;
  }

  /**
   * Reads the log past the read position until the window is full, the log
   * ends, or the pass has read its share; `accept` says whether a message
   * read joins the window. Returns true when it stopped at its share, so
   * that the caller reads on in another turn.
   */
  fill(accept: (seq: number, message: QueuedMessage) => boolean): boolean {
    if (!this.caughtUp && this.unread === 0) {
      // Every message written so far has been read (each is counted before its commit is encoded, and numbered
      // then): the events up to the log's next number hold none, so the look is skipped.
      this.cursor = Math.max(this.cursor, this.store.nextSeq);
      this.caughtUp = true;
    }
    let events = 0;
    while (!this.caughtUp && !this.full()) {
      if (events >= LOG_EVENTS_PER_PASS) return true;
      let read = 0;
      for (const { key, value } of this.store.log.getRange({ start: this.cursor, limit: LOG_PAGE_EVENTS })) {
        const seq = key as number;
        read++;
        this.cursor = seq + 1;
        for (const message of messagesIn(value as LogEvent)) {
          this.unread = Math.max(0, this.unread - 1);
          if (accept(seq, message)) this.add(seq, message);
        }
        if (this.full()) break;
      }
      events += read;
      if (read < LOG_PAGE_EVENTS && !this.full()) this.caughtUp = true;
    }
    return false;
  }

  private add(seq: number, message: QueuedMessage): void {
    const w: Windowed = { slot: this.nextSlot++, seq, message, state: 'waiting' };
    this.messages.set(w.slot, w);
    let mine = this.byEndpoint.get(message.endpoint);
    if (mine === undefined) this.byEndpoint.set(message.endpoint, (mine = new Map()));
    mine.set(seq, w);
  }

  /** The window's messages, in log order. */
  values(): IterableIterator<Windowed> {
    return this.messages.values();
  }

  /** One endpoint's messages in the window, whatever their state (its own index, not a walk of the window). */
  ofEndpoint(endpoint: number): IterableIterator<Windowed> {
    return (this.byEndpoint.get(endpoint) ?? NONE).values();
  }

  /** One endpoint's messages in the window that are not on their way out. */
  *unsentOf(endpoint: number): Generator<Windowed> {
    for (const w of this.ofEndpoint(endpoint)) if (w.state !== 'settling') yield w;
  }

  /** A message's result commit is durable: it leaves the window. */
  remove(w: Windowed): void {
    this.messages.delete(w.slot);
    const mine = this.byEndpoint.get(w.message.endpoint);
    mine?.delete(w.seq);
    if (mine?.size === 0) this.byEndpoint.delete(w.message.endpoint);
  }

  /** Where the cursor may be: the first window message not yet settled, else past everything read. */
  lowWater(): number {
    for (const w of this.messages.values()) if (w.state !== 'settling') return w.seq;
    return this.cursor;
  }

  /** The cursor's row for a result commit being appended now, when the cursor has moved; null when it has not. */
  cursorPut(): TablePut | null {
    const low = this.lowWater();
    if (low <= this.persisted) return null;
    this.persisted = low;
    return { table: 'meta', key: WEBHOOK_CURSOR_KEY, value: low };
  }

  /** Whether the durable cursor lags CURSOR_LAG_MAX or more behind where it may be (then it is written on its own). */
  lagging(): boolean {
    return this.lowWater() - this.persisted >= CURSOR_LAG_MAX;
  }

  /** Messages written and not yet sent or settled, and the time of the oldest in the window (null when none is). */
  backlog(): { count: number; oldestAtMs: number | null } {
    let count = this.unread;
    let oldestAtMs: number | null = null;
    for (const w of this.messages.values()) {
      if (w.state === 'settling') continue;
      count++;
      oldestAtMs ??= w.message.atMs;
    }
    return { count, oldestAtMs };
  }
}

const NONE: ReadonlyMap<number, Windowed> = new Map();
