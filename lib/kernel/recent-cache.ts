/**
 * A least-recently-used cache: at most `max` entries and, with `sizeOf`, at most `maxSize` in
 * total; reading an entry makes it the most recent, and a write past either bound drops the
 * least recent first. An entry larger than `maxSize` alone is not kept. What a warm Lambda
 * container keeps between requests (knowledge snapshots, search segments, overlays): a Map in
 * insertion order is the whole of it, in place of the lru-cache package (18.8 KB of the api
 * function's bundle, whose budget is 1,024 KB: test/infra/bundle.test.ts).
 */
export class RecentCache<K, V> {
  private readonly entries = new Map<K, { value: V; size: number }>();
  private total = 0;

  constructor(private readonly bounds: { max: number; maxSize?: number; sizeOf?: (value: V) => number }) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const size = this.bounds.sizeOf ? Math.max(1, this.bounds.sizeOf(value)) : 1;
    const maxSize = this.bounds.maxSize ?? Number.POSITIVE_INFINITY;
    if (size > maxSize) return;
    this.entries.set(key, { value, size });
    this.total += size;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.bounds.max && this.total <= maxSize) break;
      this.entries.delete(oldest);
      this.total -= entry.size;
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.size;
  }
}
