/**
 * A Map split over many Maps by the key's first character. A single V8 Map
 * holds at most 2^24 (about 16.7 million) entries and throws beyond that;
 * verify keeps one entry per order, and a busy service passes that count.
 * With order ids (random base64url text) the shards fill evenly.
 */
const SHARDS = 64;

export class ShardedMap<V> {
  private readonly shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());

  private shard(key: string): Map<string, V> {
    return this.shards[key.length === 0 ? 0 : key.charCodeAt(0) % SHARDS]!;
  }

  get size(): number {
    let n = 0;
    for (const s of this.shards) n += s.size;
    return n;
  }

  has(key: string): boolean {
    return this.shard(key).has(key);
  }

  get(key: string): V | undefined {
    return this.shard(key).get(key);
  }

  set(key: string, value: V): this {
    this.shard(key).set(key, value);
    return this;
  }

  *values(): Generator<V> {
    for (const s of this.shards) yield* s.values();
  }

  *[Symbol.iterator](): Generator<[string, V]> {
    for (const s of this.shards) yield* s.entries();
  }
}
