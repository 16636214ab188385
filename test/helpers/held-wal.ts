/**
 * A WAL that wraps the real LMDB group commit but holds every durability
 * promise until the test releases it: a simulated slow disk, used to fill a
 * mailbox or to observe that no reply leaves before its sync.
 */
import type { Wal, WalEntry, WalStats } from '../../src/wal/index.js';

export class HeldWal implements Wal {
  holding = false;
  private readonly held: (() => void)[] = [];

  constructor(private readonly inner: Wal) {}

  append(entry: WalEntry): Promise<void> {
    const durable = this.inner.append(entry);
    if (!this.holding) return durable;
    return new Promise((resolve, reject) => {
      durable.then(() => this.held.push(resolve), reject);
    });
  }

  get heldCount(): number {
    return this.held.length;
  }

  release(): void {
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
