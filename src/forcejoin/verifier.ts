/**
 * Decides whether an account may order under force-join, asking Telegram
 * as rarely as possible and never letting Telegram's health decide for it.
 *
 * - Exempt or operator-verified accounts pass without a Telegram call.
 * - Answers are cached per account: 'joined' for long (members rarely
 *   leave, and a stale yes costs one order), 'not-joined' briefly (a
 *   customer who has just joined should not wait long). Unavailability is
 *   never cached: the next call asks again.
 * - Concurrent checks of one Telegram user share one request
 *   (single-flight), so a burst of orders costs one call.
 * - Everything is bounded: the cache (oldest entry evicted) and the number
 *   of requests in flight. Past that limit the answer is 'unavailable' at
 *   once instead of a queue that grows while Telegram is slow.
 * - Fail closed: no answer from Telegram means no order, with a message
 *   that says why and gives the join link.
 * - A 429 from Telegram is obeyed: no request is made until its
 *   retry_after has passed (at most RETRY_AFTER_MAX_S); checks meanwhile
 *   are answered 'unavailable' at once (cached answers still count), so
 *   a rate-limited bot does not keep asking for every order.
 *
 * There is no lock: each account waits only for its own request, so one
 * slow answer never delays another account.
 */
import { MS_PER_SECOND, type Clock } from '../platform/index.js';
import { CACHE_MAX_DEFAULT, CONCURRENT_MAX_DEFAULT, OVERLOAD_REPORT_EVERY_MS, RETRY_AFTER_DEFAULT_S, RETRY_AFTER_MAX_S } from './limits.js';
import type { ForceJoinConfig } from './config.js';
import { getChatMember, TelegramUnavailable, type Membership } from './telegram-client.js';

export type ForceJoinStatus =
  | { kind: 'joined' }
  | { kind: 'not-joined'; message: string; joinLink: string }
  | { kind: 'unavailable'; message: string; joinLink: string };

/** The account fields force-join reads. */
export interface ForceJoinAccount {
  id: number;
  /** Linked by the operator; null when not linked yet. */
  telegramUserId: number | null;
  /** The operator vouched for membership: no Telegram check. */
  verified: boolean;
  /** The operator excused the account from force-join. */
  exempt: boolean;
}

export interface ForceJoinVerifierOptions {
  /** Most cached answers (one per account); the oldest is dropped first. Default 100,000. */
  cacheMax?: number;
  /** Most Telegram requests in flight at once; beyond it, 'unavailable' at once. Default 64. */
  concurrentMax?: number;
  /**
   * Told about each failed Telegram request (once per request, not per
   * waiting caller) and each call refused for overload, so the operator can
   * log it. The error's message never contains the bot token. Exceptions
   * thrown here are ignored: they must not turn a refusal into a crash.
   */
  onUnavailable?: (error: TelegramUnavailable, telegramUserId: number) => void;
}

interface CacheEntry {
  /** The answer is about this Telegram user: a relinked account does not reuse it even if nobody invalidated it. */
  telegramUserId: number;
  membership: Membership;
  expiresAtMs: number;
}

interface Flight {
  /** The invalidation generation the request started in; see `invalidate`. */
  generation: number;
  promise: Promise<Membership | TelegramUnavailable>;
}

const JOINED: ForceJoinStatus = Object.freeze({ kind: 'joined' });

export class ForceJoinVerifier {
  private readonly cache = new Map<number, CacheEntry>();
  /** Keyed by Telegram user id: two accounts linked to one user also share the request. */
  private readonly flights = new Map<number, Flight>();
  private active = 0;
  /**
   * Bumped by every invalidate. A request started before an invalidation
   * may carry an answer from before the operator's change, so it is not
   * joined by new callers and its answer is not cached. Invalidations are
   * rare operator actions, so the occasional unrelated uncached answer
   * costs nothing worth a per-account table.
   */
  private generation = 0;
  /** Monotonic ms before which Telegram asked the bot not to call (a 429's retry_after). */
  private heldUntilMs = 0;
  /** Monotonic time of the last reported refusal at the concurrency limit. */
  private overloadReportedMs = -Infinity;
  private readonly cacheMax: number;
  private readonly concurrentMax: number;
  private readonly onUnavailable: ((error: TelegramUnavailable, telegramUserId: number) => void) | undefined;

  constructor(
    private readonly config: ForceJoinConfig,
    private readonly clock: Clock,
    private readonly fetchImpl: typeof fetch = globalThis.fetch,
    options: ForceJoinVerifierOptions = {},
  ) {
    this.cacheMax = Math.max(1, options.cacheMax ?? CACHE_MAX_DEFAULT);
    this.concurrentMax = Math.max(1, options.concurrentMax ?? CONCURRENT_MAX_DEFAULT);
    this.onUnavailable = options.onUnavailable;
  }

  async status(account: ForceJoinAccount): Promise<ForceJoinStatus> {
    if (account.exempt || account.verified) return JOINED;
    const userId = account.telegramUserId;
    if (userId === null || !Number.isSafeInteger(userId) || userId <= 0) return this.notLinked();

    const cached = this.cache.get(account.id);
    if (cached !== undefined) {
      if (cached.telegramUserId === userId && this.clock.monotonicMs() < cached.expiresAtMs) {
        return this.answer(cached.membership);
      }
      this.cache.delete(account.id);
    }

    const generation = this.generation;
    const outcome = await this.ask(userId);
    if (outcome instanceof TelegramUnavailable) return this.unavailable();
    if (generation === this.generation) this.remember(account.id, userId, outcome);
    return this.answer(outcome);
  }

  /** Forgets the account's cached answer; call it when the operator relinks or re-marks the account. */
  invalidate(accountId: number): void {
    this.cache.delete(accountId);
    this.generation += 1;
  }

  /** For metrics and tests. */
  stats(): { cached: number; inFlight: number } {
    return { cached: this.cache.size, inFlight: this.active };
  }

  private ask(userId: number): Promise<Membership | TelegramUnavailable> {
    const existing = this.flights.get(userId);
    if (existing !== undefined && existing.generation === this.generation) return existing.promise;
    const heldMs = this.heldUntilMs - this.clock.monotonicMs();
    if (heldMs > 0) {
      // Not reported: the 429 that set the hold was, and a report per order would flood the log.
      return Promise.resolve(new TelegramUnavailable(`Telegram asked the bot to wait ${Math.ceil(heldMs / MS_PER_SECOND)} s more (HTTP 429); refused without asking.`, 'rate-limited'));
    }
    if (this.active >= this.concurrentMax) {
      const refused = new TelegramUnavailable(
        `${this.active} Telegram membership checks are already in flight (the limit); refused without asking.`,
        'overloaded',
      );
      // Every order is refused while the limit holds; one report a second
      // says so without a log line per order.
      const now = this.clock.monotonicMs();
      if (now - this.overloadReportedMs >= OVERLOAD_REPORT_EVERY_MS) {
        this.overloadReportedMs = now;
        this.report(refused, userId);
      }
      return Promise.resolve(refused);
    }
    this.active += 1;
    const flight: Flight = { generation: this.generation, promise: this.fetchMembership(userId) };
    this.flights.set(userId, flight);
    void flight.promise.then(() => {
      this.active -= 1;
      if (this.flights.get(userId) === flight) this.flights.delete(userId);
    });
    return flight.promise;
  }

  /** Never rejects: an outage is a value here, so waiters cannot miss it and nothing is left unhandled. */
  private async fetchMembership(userId: number): Promise<Membership | TelegramUnavailable> {
    try {
      return await getChatMember(this.config, userId, undefined, this.fetchImpl);
    } catch (error) {
      const unavailable =
        error instanceof TelegramUnavailable
          ? error
          : new TelegramUnavailable('Unexpected error while checking Telegram membership.', 'internal');
      if (unavailable.reason === 'rate-limited') {
        const waitS = Math.min(RETRY_AFTER_MAX_S, Math.max(0, unavailable.retryAfterS ?? RETRY_AFTER_DEFAULT_S));
        this.heldUntilMs = Math.max(this.heldUntilMs, this.clock.monotonicMs() + waitS * MS_PER_SECOND);
      }
      this.report(unavailable, userId);
      return unavailable;
    }
  }

  private report(error: TelegramUnavailable, userId: number): void {
    try {
      this.onUnavailable?.(error, userId);
    } catch {
      // Reporting is best effort; the caller still gets 'unavailable'.
    }
  }

  private remember(accountId: number, telegramUserId: number, membership: Membership): void {
    const ttl = membership === 'joined' ? this.config.joinedCacheMs : this.config.notJoinedCacheMs;
    if (ttl <= 0) return;
    // Delete first so that a refreshed entry moves to the young end of the insertion order.
    this.cache.delete(accountId);
    if (this.cache.size >= this.cacheMax) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(accountId, { telegramUserId, membership, expiresAtMs: this.clock.monotonicMs() + ttl });
  }

  private answer(membership: Membership): ForceJoinStatus {
    if (membership === 'joined') return JOINED;
    const link = this.config.joinLink;
    const wait = Math.ceil(this.config.notJoinedCacheMs / MS_PER_SECOND);
    const retry = wait > 0 ? `if you have just joined, try again in ${wait} seconds` : 'if you have just joined, try again';
    // The link ends the sentence so that no punctuation sticks to it when a client turns it into a hyperlink.
    return { kind: 'not-joined', message: `Join our Telegram channel to place orders (${retry}): ${link}`, joinLink: link };
  }

  private notLinked(): ForceJoinStatus {
    const link = this.config.joinLink;
    return {
      kind: 'not-joined',
      message: `Your account is not linked to a Telegram account. Ask the operator to link your Telegram account, and join our Telegram channel: ${link}`,
      joinLink: link,
    };
  }

  private unavailable(): ForceJoinStatus {
    const link = this.config.joinLink;
    return {
      kind: 'unavailable',
      message: `Could not verify your Telegram channel membership right now; try again shortly. Join: ${link}`,
      joinLink: link,
    };
  }
}
