/**
 * What memory.search, a forget and the reflector need of a search index (SearchIndexReader):
 * the view of one owner's items, and compaction. LiveSearchIndex (search-index.ts) is it.
 */
import type { MemoryItem } from '../items/memory-item.js';
import type { IndexEntry } from './search-segments.js';

/** A compaction found a segment it was to merge retired by another one: its marks wait for the next. */
export class SegmentRetiredError extends Error {
  override readonly name = 'SegmentRetiredError';
}

export interface SearchView {
  entries: IndexEntry[];
  /** The changed items as read for this view, by id (null: gone or not live). */
  fresh: ReadonlyMap<string, MemoryItem | null>;
  changes: number;
  /** Compact before serving: too many changes, or a watermark nearing the marks' TTL. */
  due: boolean;
  /**
   * The watermark is older than the marks' TTL: marks written after it may have expired before
   * any compaction folded them (docs/search-index.md, "Liveness"). Logged by the API. Never for
   * a pointer without one (written before marks had a TTL: none of its marks can expire).
   */
  stale: boolean;
}

/** What memory.search needs of an index: the view of one owner's items. */
export interface SearchIndexReader {
  view(userId: string): Promise<SearchView>;
  /**
   * Fold the owner's changes into a segment, when there are at least `atLeast` of them; `full`
   * rewrites every segment into one whatever the count (a forget: no old segment may keep a
   * removed item's words). `signal`: the invocation's deadline for the delta's embedding calls
   * (lib/kernel/deadline.ts).
   */
  compact(
    userId: string,
    atLeast?: number,
    options?: { full?: boolean; rebuild?: readonly string[]; signal?: AbortSignal | undefined },
  ): Promise<CompactionResult>;
}

export interface CompactionResult {
  folded: number;
  version: number;
  merged: boolean;
  /** Another compaction moved the pointer first: nothing written. */
  lost?: boolean;
}
