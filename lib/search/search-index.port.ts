/** Ports of the search: the memory catalog it reads, the search index's store and the turn log. */
import type { SearchSegment } from './search-segment.js';
import type { MemoryItem } from '../items/memory-item.js';
import type { SummaryStore } from '../summaries/summary.port.js';
import type { TurnStore } from '../turns/turn.port.js';
import type { DiaryStore } from '../diary/diary.port.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';
import type { ItemTrustStore } from '../trust/item-trust.port.js';

/** Every memory item of a user (and GLOBAL's) in the one metadata model: the search corpus. */
export interface MemoryCatalog {
  /**
   * These items of one owner as they are now, by id; an id that names nothing is absent. Reads
   * only what they need. `sourceTurns`, when the caller knows them (the search index does), are
   * the turns whose attributes the items carry: read with the items, not after them.
   */
  itemsById(userId: string, ids: readonly string[], hint?: CatalogHint): Promise<Map<string, MemoryItem>>;
}

export interface CatalogHint {
  sourceTurns?: readonly number[];
  /**
   * Fold derived items' trust records into their quality (ItemTrustStore). @default true.
   * False: the items' own quality, no trust read (a search's page, whose index holds the trust
   * already; an outcome, which reads the record itself).
   */
  trust?: boolean;
}

/** What the memory catalog (lib/search/memory-catalog.ts) reads: each kind of item by id, from its store. */
export interface MemoryCatalogSources {
  turns: Pick<TurnStore, 'turnIndex' | 'eventEpisodes'>;
  knowledge: Pick<KnowledgeStore, 'stagedRecords' | 'loadKnowledge'>;
  summaries: Pick<SummaryStore, 'byIds'>;
  items: Pick<MemoryItemStore, 'getMany'>;
  diary: Pick<DiaryStore, 'byIds'>;
  /** Derived items' trust (req R-SCOPE-2); without it their quality is their store's alone. */
  trust?: Pick<ItemTrustStore, 'get'>;
}

/** A searchable item changed after the search index's segments were written: `at` tells one change from the next. */
export interface SearchChange {
  id: string;
  at: string;
  /**
   * The marks that carry this change and have no TTL yet (their sort keys), for
   * expireChanges; `at` on a mark of the per-item format, stamped only if still at that value.
   */
  marks?: ReadonlyArray<{ sk: string; at?: string }>;
}

/** One segment of a search index and the items it removes from the segments before it. */
export interface SearchSegmentRef {
  key: string;
  /** Objects the segment's bytes are split into (`{key}.0` …), read at once. */
  parts: number;
  items: number;
  /** Ids (of this owner) removed from older segments: deleted, expired or gone. */
  removes: string[];
}

/** The current segments of an owner's search index, oldest first; version 0 when it has none. */
export interface SearchIndexHead {
  version: number;
  segments: SearchSegmentRef[];
  /**
   * Every change mark whose `at` is below this is folded into these segments: readers read
   * only the marks from it on. Absent on a pointer written before 2026-11-27 (every mark read).
   */
  watermark?: string;
  /**
   * The `at` of each item's newest mark these segments hold, for those at or above the
   * watermark (marks of the last L before the compaction that wrote this pointer): readers and
   * the next compaction skip an item whose newest mark is here, rather than read and fold it again.
   */
  folded?: string[];
  /**
   * The turn watermark: every turn at or below it that was written without a change mark is
   * in these segments; readers Query the turns above it. Absent on a pointer written before
   * (or by a writer that knew none): readers and compactions start from the user's TURNLOG.
   */
  turnWatermark?: number;
}

/**
 * The turn index read as the search index's change log for turns: the signal
 * function writes a turn above the highest one its state has counted without a change mark
 * (docs/search-index.md, "Turns without marks").
 */
export interface TurnLog {
  /** The highest turn id the user's signal state has counted (strongly consistent); null without a readable state. */
  counted(userId: string): Promise<number | null>;
  /** The lowest turn id the signal function may have written without a mark (TURNLOG; strongly consistent); null when it never has. */
  unmarkedFrom(userId: string): Promise<number | null>;
  /** The user's turns above `after`, as the search index holds them (one strongly consistent Query), by turn id. */
  turnsAfter(userId: string, after: number): Promise<MemoryItem[]>;
}

/** Where a user's search index lives: segments, the pointer to them, and the changes since. */
export interface SearchIndexStore {
  /** Every change marked with an `at` from `from` on (all when absent; a consistent read). */
  changes(userId: string, from?: string): Promise<SearchChange[]>;
  head(userId: string): Promise<SearchIndexHead>;
  /** A segment (immutable, so a warm container keeps it); null when it was retired meanwhile. */
  segment(ref: Pick<SearchSegmentRef, 'key' | 'parts'>): Promise<SearchSegment | null>;
  putSegment(userId: string, version: number, segment: SearchSegment): Promise<Pick<SearchSegmentRef, 'key' | 'parts'>>;
  /** Point at `next` if the pointer still names version `from`; true when it does now. */
  moveHead(userId: string, from: number, next: SearchIndexHead): Promise<boolean>;
  /** Let the marks of changes folded into a segment expire: those without a TTL get one. */
  expireChanges(userId: string, changes: readonly SearchChange[]): Promise<void>;
  deleteSegments(refs: ReadonlyArray<Pick<SearchSegmentRef, 'key' | 'parts'>>): Promise<void>;
}
