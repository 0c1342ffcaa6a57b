/**
 * A search index as ranking reads it: its segments, oldest first, where a newer segment's
 * version of an item hides an older one's, and the statistics BM25 and the similarity need
 * over all of them.
 */
import type { MemoryItem } from '../items/memory-item.js';
import type { SegmentEmbeddings } from './embedding-vectors.js';
import { type IndexedItem, indexedItem } from './indexed-item.js';
import { type Field, SearchSegment } from './search-segment.js';

/** The similarity's own BM25 weighting (knowledge-search.ts). */
const VECTOR = { k1: 1.2, b: 0.75 } as const;

/** Ids are unique per owner: a user's `mem:x` and the GLOBAL copy shared from it are two items. */
export const itemKey = (item: Pick<IndexedItem, 'userId' | 'id'>): string => `${item.userId}\u0000${item.id}`;

/**
 * The segments of an index, oldest first, and the items removed after them (tombstones, by itemKey): an
 * item is served from the newest segment holding it, and not at all once removed later.
 */
export interface IndexEntry {
  segment: SearchSegment;
  /** Items (by itemKey) this entry removes from the entries before it. */
  removes?: ReadonlySet<string> | undefined;
}

export class SearchSegments {
  readonly segments: readonly SearchSegment[];
  /** hidden[s][d]: segment s's item d is superseded by a newer segment or removed. */
  private readonly hidden: Uint8Array[];
  readonly size: number;
  private readonly fieldAverage: Record<Field, number>;
  private readonly vectorAverage: number;

  constructor(entries: readonly IndexEntry[]) {
    const segments = entries.map((e) => e.segment);
    this.segments = segments;
    // Newest first: an item is hidden when a newer entry holds or removes its key. The oldest
    // segment (the large base) is only looked up, never added to the claimed keys.
    const claimed = new Set<string>();
    const claimedIds = new Set<string>();
    const claim = (key: string) => {
      claimed.add(key);
      claimedIds.add(key.slice(key.indexOf('\u0000') + 1));
    };
    this.hidden = new Array(segments.length);
    for (let si = segments.length - 1; si >= 0; si--) {
      const s = segments[si] as SearchSegment;
      const hidden = new Uint8Array(s.size);
      if (claimed.size > 0)
        for (let d = 0; d < s.size; d++)
          if (claimedIds.has(s.columns.ids[d] ?? '') && claimed.has(itemKey(s.keyOf(d)))) hidden[d] = 1;
      this.hidden[si] = hidden;
      if (si > 0) for (let d = 0; d < s.size; d++) claim(itemKey(s.keyOf(d)));
      for (const key of entries[si]?.removes ?? []) claim(key);
    }
    this.size = segments.reduce((n, s) => n + s.size, 0);
    const total = (f: (s: SearchSegment) => number) => segments.reduce((n, s) => n + f(s), 0);
    this.fieldAverage = {
      title: total((s) => s.fieldTotals.title) / (this.size || 1),
      text: total((s) => s.fieldTotals.text) / (this.size || 1),
    };
    this.vectorAverage = total((s) => s.vectorTotal) / (this.size || 1);
  }

  /** Every item served (not superseded, not removed), live or not. */
  *visible(): Generator<IndexedItem> {
    for (const [si, s] of this.segments.entries())
      for (let d = 0; d < s.size; d++) if (!this.hidden[si]?.[d]) yield s.item(d);
  }

  /** Where the served version of an owner's item is (newest segment first), or undefined. */
  locate(userId: string, id: string): { segment: number; doc: number } | undefined {
    for (let si = this.segments.length - 1; si >= 0; si--) {
      const doc = this.segments[si]?.docOf(id);
      if (doc === undefined || this.segments[si]?.keyOf(doc).userId !== userId) continue;
      return this.isHidden(si, doc) ? undefined : { segment: si, doc };
    }
    return undefined;
  }

  isHidden(segment: number, doc: number): boolean {
    return this.hidden[segment]?.[doc] === 1;
  }

  fieldAverageOf(field: Field): number {
    return this.fieldAverage[field];
  }

  /** Items holding the term in `field` across all segments (superseded versions counted). */
  frequency(field: Field, term: string): number {
    let n = 0;
    for (const s of this.segments) {
      const id = s.termId(term);
      if (id !== undefined) n += field === 'text' ? s.textFrequency(id) : s.postingsOf(field, id).docs.length;
    }
    return n;
  }

  /** BM25-weighted vector of terms (the similarity's weighting: knowledge-search.ts). */
  weigh(tf: ReadonlyMap<string, number>, length: number): Map<string, number> {
    const n = this.size;
    const avg = n > 0 ? this.vectorAverage : length;
    const v = new Map<string, number>();
    for (const [t, f] of tf) {
      const df = Math.max(1, this.frequency('text', t));
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      v.set(t, (idf * f * (VECTOR.k1 + 1)) / (f + VECTOR.k1 * (1 - VECTOR.b + (VECTOR.b * length) / (avg || 1))));
    }
    return v;
  }
}

/** A one-segment index over these items (tests, benchmarks and small corpora held in memory). */
export function indexOf(items: readonly MemoryItem[]): SearchSegments {
  return new SearchSegments([{ segment: segmentOf(items.filter((i) => !i.deleted)) }]);
}

/** A segment over these items, in this order, with their embedding vectors (in the same order) if given. */
export function segmentOf(items: readonly MemoryItem[], embeddings?: SegmentEmbeddings): SearchSegment {
  return SearchSegment.build(
    items.map((item) => ({ item: indexedItem(item), title: item.title, text: item.text })),
    embeddings,
  );
}
