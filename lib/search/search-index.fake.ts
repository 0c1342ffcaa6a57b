/** An in-memory search index store, and the catalog and index over the recording fakes, for tests. */
import { segmentOf } from './search-segments.js';
import type { CompactionResult, SearchIndexReader, SearchView } from './search-index-reader.js';
import { GLOBAL_USER, type MemoryItem, mergeAttributes } from '../items/memory-item.js';
import { episodeItem, knowledgeItem, summaryItem, stagedItem, turnItem } from '../items/source-items.js';
import type {
  MemoryCatalog,
  SearchChange,
  SearchIndexHead,
  SearchIndexStore,
  SearchSegmentRef,
} from './search-index.port.js';
import type { RecordingTurnStore } from '../turns/turn.fake.js';
import type { RecordingSummaryStore } from '../summaries/summary.fake.js';
import type { RecordingKnowledgeStore } from '../knowledge/knowledge.fake.js';
import type { RecordingMemoryItems } from '../items/memory-item.fake.js';
import type { SearchSegment } from './search-segment.js';

/**
 * A search index's marks (item id → `at`), pointer and segments in memory (the search index store; owners are not told apart).
 * Marks are never deleted, as in the table until TTL does it: the pointer's watermark hides those below it.
 */
export class MemorySearchIndexStore implements SearchIndexStore {
  readonly marks = new Map<string, string>();
  private ticks = 0;
  /** Marks an item changed at the marks' clock, which moves a millisecond a mark. */
  mark(id: string): void {
    this.marks.set(id, new Date(Date.UTC(2026, 0, 1) + ++this.ticks).toISOString());
  }
  /** The marks' clock and L for LiveSearchIndex: every mark made before a compaction starts is below its watermark. */
  readonly timing = { now: () => new Date(Date.UTC(2026, 0, 1) + this.ticks + 1), lagMs: 0 };
  readonly segments = new Map<string, SearchSegment>();
  pointer: SearchIndexHead = { version: 0, segments: [] };
  async changes(_userId: string, from?: string): Promise<SearchChange[]> {
    return [...this.marks].filter(([, at]) => from === undefined || at >= from).map(([id, at]) => ({ id, at }));
  }
  async head(): Promise<SearchIndexHead> {
    return this.pointer;
  }
  async segment({ key }: Pick<SearchSegmentRef, 'key'>): Promise<SearchSegment | null> {
    return this.segments.get(key) ?? null;
  }
  async putSegment(_userId: string, version: number, segment: SearchSegment) {
    this.segments.set(`seg-${version}`, segment);
    return { key: `seg-${version}`, parts: 1 };
  }
  async moveHead(_userId: string, from: number, next: SearchIndexHead): Promise<boolean> {
    if (this.pointer.version !== from) return false;
    this.pointer = next;
    return true;
  }
  async expireChanges(): Promise<void> {}
  async deleteSegments(refs: ReadonlyArray<Pick<SearchSegmentRef, 'key'>>): Promise<void> {
    for (const r of refs) this.segments.delete(r.key);
  }
}

/** The read model over the fakes, composed as StoreMemoryCatalog (lib/search/memory-catalog.ts) composes the stores. */
export class FakeCatalog implements MemoryCatalog {
  constructor(
    private readonly stores: {
      turns: RecordingTurnStore;
      knowledge: RecordingKnowledgeStore;
      summaries: RecordingSummaryStore;
      items: RecordingMemoryItems;
      stagedExpiryDays: number;
    },
  ) {}
  /** The in-memory world has nothing to save: every item, then those asked for. */
  async itemsById(userId: string, ids: readonly string[]): Promise<Map<string, MemoryItem>> {
    const wanted = new Set(ids);
    return new Map(
      (await this.items(userId)).filter((i) => i.userId === userId && wanted.has(i.id)).map((i) => [i.id, i]),
    );
  }

  async items(userId: string): Promise<MemoryItem[]> {
    const { turns, knowledge, summaries, items, stagedExpiryDays } = this.stores;
    const index = turns.allTurnIndex(userId);
    const byTurn = new Map(index.map((t) => [t.turnId, t.attributes]));
    const attrs = (sourceTurns: readonly number[]) => mergeAttributes(sourceTurns, (t) => byTurn.get(t));
    const docs = await knowledge.loadKnowledge(userId);
    return [
      ...index.map(turnItem),
      ...(await turns.eventEpisodes(userId)).map(episodeItem),
      ...(await knowledge.listStaged(userId))
        .filter((r) => r.status !== 'promoted')
        .map((r) => stagedItem(userId, r, stagedExpiryDays, attrs(r.sourceTurns))),
      ...docs.map((d) => knowledgeItem(userId, d, attrs(d.sourceTurns))),
      ...(await summaries.list(userId)).map((r) => summaryItem(r, attrs(r.sourceTurns))),
      ...(await items.list(userId)),
      ...(userId === GLOBAL_USER ? [] : await items.list(GLOBAL_USER)),
    ];
  }
}

/**
 * The search index of the in-memory world: an index over every item of the owner, built per
 * view (the world marks no changes to fold). `compact` has nothing to fold.
 */
export class CatalogSearchIndex implements SearchIndexReader {
  constructor(private readonly catalog: FakeCatalog) {}
  async view(userId: string): Promise<SearchView> {
    const items = (await this.catalog.items(userId)).filter((i) => i.userId === userId && !i.deleted);
    return {
      entries: [{ segment: segmentOf(items) }],
      fresh: new Map(items.map((i) => [i.id, i])),
      changes: 0,
      due: false,
      stale: false,
    };
  }
  async compact(_userId: string, _atLeast?: number): Promise<CompactionResult> {
    return { folded: 0, version: 0, merged: false };
  }
}
