/**
 * A Map split over many Maps by the key's first character. A single V8 Map
 * holds at most 2^24 (about 16.7 million) entries and throws beyond that;
 * the replay keeps one entry per open order in it, and a long enough backlog
 * passes that count. With order ids (random base64url text) the shards fill
 * evenly. The size is counted as entries come and go, so reading it is free.
 */
const SHARDS = 64;

export class ShardedMap<V> {
  private readonly shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());
  private count = 0;

  private shard(key: string): Map<string, V> {
    // Stryker disable next-line ConditionalExpression: every key in shard 0 behaves the same until that one Map passes 2^24 entries, which no test can fill in time.
    return this.shards[key.length === 0 ? 0 : key.charCodeAt(0) % SHARDS]!;
  }

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    return this.shard(key).has(key);
  }

  get(key: string): V | undefined {
    return this.shard(key).get(key);
  }

  set(key: string, value: V): this {
    const shard = this.shard(key);
    const before = shard.size;
    shard.set(key, value);
    this.count += shard.size - before;
    return this;
  }

  delete(key: string): boolean {
    const deleted = this.shard(key).delete(key);
    if (deleted) this.count--;
    return deleted;
  }

  *values(): Generator<V> {
    for (const s of this.shards) yield* s.values();
  }

  *[Symbol.iterator](): Generator<[string, V]> {
    for (const s of this.shards) yield* s.entries();
  }
}
