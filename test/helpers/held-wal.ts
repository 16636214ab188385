/**
 * A WAL that wraps the real LMDB group commit but holds every durability
 * promise until the test releases it: a simulated slow disk, used to fill a
 * mailbox or to observe that no reply leaves before its sync.
 */
import type { Settled, Wal, WalEntry, WalStats } from '../../src/wal/index.js';

export class HeldWal implements Wal {
  holding = false;
  /**
   * Stronger than `holding`: entries are not even handed to the inner WAL
   * until the release (a commit that has not landed: nothing of it can be
   * read), and then go in the order they were appended.
   */
  deferring = false;
  private readonly held: (() => void)[] = [];
  private readonly deferred: { entry: WalEntry; resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(private readonly inner: Wal) {}

  append(entry: WalEntry): Promise<void> {
    if (this.deferring) return new Promise((resolve, reject) => this.deferred.push({ entry, resolve, reject }));
    const durable = this.inner.append(entry);
    if (!this.holding) return durable;
    // An entry whose sync lands after the release is not held: nothing would release it.
    return new Promise((resolve, reject) => {
      durable.then(() => (this.holding ? this.held.push(resolve) : resolve()), reject);
    });
  }

  /** The listener hears of the settlement the caller sees: the held one, or the inner WAL's failure. */
  appendSettled(entry: WalEntry, settled: Settled): Promise<void> {
    const durable = this.append(entry);
    durable.then(() => settled(null), settled);
    return durable;
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Entries appended while deferring, not yet handed on. */
  get deferredCount(): number {
    return this.deferred.length;
  }

  release(): void {
    this.deferring = false;
    for (const { entry, resolve, reject } of this.deferred.splice(0)) this.inner.append(entry).then(resolve, reject);
    this.holding = false;
    for (const resolve of this.held.splice(0)) resolve();
    for (const resolve of this.barriers.splice(0)) resolve();
  }

  private readonly barriers: (() => void)[] = [];

  flushed(): Promise<void> {
    return this.inner.flushed();
  }

  /** What is held is visible in LMDB and not durable yet, as under overlapping sync: a read waits for the release. */
  readBarrier(): Promise<void> | null {
    if (this.held.length === 0) return this.inner.readBarrier();
    return new Promise((resolve) => this.barriers.push(resolve));
  }
  overloaded(): boolean {
    return this.inner.overloaded();
  }
  stats(): WalStats {
    return this.inner.stats();
  }
  close(): Promise<void> {
    this.release();
    return this.inner.close();
  }
}
