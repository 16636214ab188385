/**
 * The held rows: messages an endpoint could not take when the window
 * reached them (it was failing, backing off after a failure, disabled, or
 * so slow that its messages filled the window), kept per endpoint in
 * `webhookOutbox`, keyed `[endpoint, seq]` with the log number of the event
 * that held or implied the message, and read a page at a time. So the
 * common path never writes a per-endpoint key, and a long backlog costs
 * disk, not heap.
 *
 * Once an endpoint holds rows, every later message of it joins them until
 * they are drained (`holding`), so its messages stay in log order. An
 * endpoint keeps at most `heldMax` rows (WEBHOOKS_HELD_MAX), so that a dead
 * receiver of a busy reseller cannot fill the disk the order path commits
 * to: what it kept is a gap-free prefix of its messages. The count is kept
 * in memory (counted once per endpoint when the process starts), so
 * listings never count rows.
 *
 * Moves and removals go into the dispatcher's result commits: `move` and
 * `remove` add them to an entry, and `moved` and `removed` follow once that
 * entry is durable.
 */
import type { Store, WalEntry } from '../wal/index.js';
import { endpointKey, endpointsWithRows, type OutboxMessage, type QueuedMessage } from './records.js';

/** One endpoint's held rows, as the dispatcher keeps them in memory. */
export interface HeldState {
  /** True while the endpoint has held rows (or rows being moved there): its new messages join them. */
  holding: boolean;
  /** Its messages being moved to the held rows (commits not yet durable). */
  moving: number;
  /** Its rows in `webhookOutbox` (counting moves written and not yet durable, and removals not yet durable). */
  held: number;
  /**
   * `atMs` of its first held row, for the backlog gauge: null when it holds
   * none, undefined when not known (read at the next look, then kept until
   * a held row goes).
   */
  oldestAtMs: number | null | undefined;
}

/** A held message and the log number it keeps. */
export interface HeldMessage {
  seq: number;
  message: OutboxMessage;
}

export class HeldRows {
  constructor(
    private readonly store: Store,
    /** WEBHOOKS_HELD_MAX: most held messages per endpoint. */
    private readonly heldMax: number,
    /** Held messages read per endpoint per pass. */
    private readonly pageSize: number,
  ) {}

  /** The endpoints that hold rows (when the process starts: each is then sent from its rows first). */
  holdingEndpoints(): Generator<number> {
    return endpointsWithRows(this.store, 'webhookOutbox');
  }

  /** An endpoint's state as the store has it (one count, once per endpoint and process). */
  load(endpoint: number): HeldState {
    const held = this.store.tables.webhookOutbox.getCount({ start: [endpoint], end: [endpoint + 1] });
    return { holding: held > 0, moving: 0, held, oldestAtMs: held === 0 ? null : undefined };
  }

  /** Whether the message at `seq` was moved to the endpoint's held rows already (before a restart, above the cursor then). */
  has(state: HeldState, endpoint: number, seq: number): boolean {
    return state.holding && this.store.tables.webhookOutbox.doesExist(endpointKey(endpoint, seq));
  }

  /**
   * Adds the move of a window message to its endpoint's held rows to `entry`;
   * the endpoint holds from now on. False, and nothing added, when it holds
   * `heldMax` already: the message is then dropped.
   */
  move(state: HeldState, seq: number, queued: QueuedMessage, entry: WalEntry): boolean {
    if (state.held >= this.heldMax) return false;
    // The first move into an empty set of held rows sets the oldest; a later one can be older (an attempt
    // that failed late, after newer messages of the endpoint failed and moved), so the oldest is kept.
    if (state.held === 0) state.oldestAtMs = queued.atMs;
    else if (typeof state.oldestAtMs === 'number' && queued.atMs < state.oldestAtMs) state.oldestAtMs = queued.atMs;
    state.held++;
    state.holding = true;
    state.moving++;
    const { endpoint, ...message } = queued;
    entry.puts.push({ table: 'webhookOutbox', key: endpointKey(endpoint, seq), value: message satisfies OutboxMessage });
    return true;
  }

  /** The move's commit is durable. */
  moved(state: HeldState): void {
    state.moving--;
  }

  /** Adds the removal of a delivered held row to `entry`. */
  remove(endpoint: number, seq: number, entry: WalEntry): void {
    (entry.removes ??= []).push({ table: 'webhookOutbox', key: endpointKey(endpoint, seq) });
  }

  /** The removal's commit is durable. */
  removed(state: HeldState): void {
    state.held--;
    // It may have been the first held row: read again when next asked.
    state.oldestAtMs = state.held === 0 ? null : undefined;
  }

  /** The first page of an endpoint's held rows, oldest first, read as iterated. */
  page(endpoint: number): Generator<HeldMessage> {
    return this.rows(endpoint, this.pageSize);
  }

  /** Up to `limit` of an endpoint's held rows, oldest first. */
  list(endpoint: number, limit: number): HeldMessage[] {
    return [...this.rows(endpoint, limit)];
  }

  private *rows(endpoint: number, limit: number): Generator<HeldMessage> {
    for (const { key, value } of this.store.tables.webhookOutbox.getRange({ start: [endpoint], end: [endpoint + 1], limit })) {
      yield { seq: (key as [number, number])[1], message: value as OutboxMessage };
    }
  }

  /** `atMs` of the endpoint's first held row, read when not known; undefined when none is durable yet (a miss is not kept). */
  oldestAtMs(state: HeldState, endpoint: number): number | undefined {
    if (state.held === 0) return undefined;
    state.oldestAtMs ??= this.firstAtMs(endpoint);
    return state.oldestAtMs ?? undefined;
  }

  private firstAtMs(endpoint: number): number | undefined {
    for (const { value } of this.store.tables.webhookOutbox.getRange({ start: [endpoint], end: [endpoint + 1], limit: 1 })) return (value as OutboxMessage).atMs;
    return undefined;
  }

  /** Rows in the table, all endpoints together (LMDB's count, no walk). */
  total(): number {
    return (this.store.tables.webhookOutbox.getStats() as { entryCount: number }).entryCount;
  }
}
