/**
 * Each account's share of the delivery slots (WEBHOOKS_CONCURRENCY), so that
 * one account's hanging or failing receivers cannot hold every slot while
 * other accounts' messages wait: an account may have at most
 * `concurrency − reserved` attempts in flight, where `reserved` is
 * OTHER_ACCOUNTS_SLOTS_PERCENT of the slots (at least one), so the other
 * accounts always find that many free (16 slots: an account holds at most
 * 12, and 4 are left to the rest). With one slot there is nothing to share:
 * an account may take it.
 *
 * Why a fixed reserve rather than an equal share per active account: an
 * account's own endpoints share its slots, and one of its receivers that
 * hangs holds up to PER_ENDPOINT_IN_FLIGHT_MAX of them before its first
 * timeout; a share of half or less would let it stop the same account's
 * healthy endpoints too. After its first timeout a hanging endpoint holds
 * one slot (attempts.ts, `hasRoom`), so several accounts with hanging
 * receivers hold one slot per endpoint, not their whole share, once their
 * first attempts have timed out.
 */
import { assert } from '../platform/index.js';
import { OTHER_ACCOUNTS_SLOTS_PERCENT } from './limits.js';

export class AccountShares {
  /** Attempts in flight per account; an account leaves the map when it has none. */
  private readonly inFlight = new Map<number, number>();
  /** The most attempts in flight one account may have. */
  readonly accountMax: number;

  constructor(
    /** WEBHOOKS_CONCURRENCY: the slots shared. */
    concurrency: number,
  ) {
    const reserved = Math.max(1, Math.floor((concurrency * OTHER_ACCOUNTS_SLOTS_PERCENT) / 100));
    this.accountMax = Math.max(1, concurrency - reserved);
  }

  /** Whether `account` may start another attempt now. */
  hasRoom(account: number): boolean {
    return (this.inFlight.get(account) ?? 0) < this.accountMax;
  }

  /** An attempt of `account` starts. */
  begin(account: number): void {
    this.inFlight.set(account, (this.inFlight.get(account) ?? 0) + 1);
  }

  /** An attempt of `account` has its result. */
  end(account: number): void {
    const left = (this.inFlight.get(account) ?? 0) - 1;
    assert(left >= 0, 'an attempt ends only after it began', account);
    if (left > 0) this.inFlight.set(account, left);
    else this.inFlight.delete(account);
  }
}
