/**
 * A bounded map with expiry: at most `maxEntries` entries, each readable until its own deadline.
 * Invariant: after any call, `size <= maxEntries`, so memory stays flat however many distinct keys
 * are presented.
 *
 * Approximate LRU in two generations (the "hashlru" scheme): writes go to the young generation;
 * when it holds half the cap, it becomes the old one and the previous old one is dropped whole. A
 * read found in the old generation moves the entry to the young one. So an entry survives as long as
 * it is used at least once per half-cap of other writes, and every operation is O(1). (Evicting one
 * entry at a time from a single `Map` is not: V8 leaves deleted slots at the front of the table and
 * every eviction walks over them.) Expired entries are dropped when read. The clock is injectable.
 */
type Entry<V> = { value: V; until: number };

export class LruCache<K, V> {
  private young = new Map<K, Entry<V>>();
  private old = new Map<K, Entry<V>>();
  private readonly half: number;

  constructor(
    readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(maxEntries >= 2)) throw new Error('an LRU cache needs room for at least two entries');
    this.half = Math.floor(maxEntries / 2);
  }

  get size(): number {
    return this.young.size + this.old.size;
  }

  /** The live value, or undefined when absent or expired (marks the entry recently used). */
  get(key: K): V | undefined {
    let e = this.young.get(key);
    if (!e) {
      e = this.old.get(key);
      if (!e) return undefined;
      this.old.delete(key);
      if (e.until > this.now()) this.insert(key, e);
    }
    if (e.until <= this.now()) {
      this.young.delete(key);
      return undefined;
    }
    return e.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /** Stores `value` for `ttlMs` (default: the cache's); the oldest generation goes when the young one is full. */
  set(key: K, value: V, ttlMs = this.ttlMs): void {
    this.old.delete(key);
    this.insert(key, { value, until: this.now() + ttlMs });
  }

  delete(key: K): void {
    this.young.delete(key);
    this.old.delete(key);
  }

  clear(): void {
    this.young = new Map();
    this.old = new Map();
  }

  /** Live entries (expired ones skipped, not removed). */
  *[Symbol.iterator](): IterableIterator<[K, V]> {
    const now = this.now();
    for (const gen of [this.old, this.young]) for (const [k, e] of gen) if (e.until > now) yield [k, e.value];
  }

  private insert(key: K, e: Entry<V>): void {
    if (!this.young.has(key) && this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, e);
  }
}
