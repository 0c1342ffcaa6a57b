/**
 * The segments a compaction writes (lib/search/search-index.ts): a delta of the items it folds,
 * with their vectors when the stage embeds, and the size-tiered merges of the deltas (and the
 * base) that keep an owner's segments few.
 */
import type { MemoryItem } from '../items/memory-item.js';
import type { EmbeddingModel } from '../model/language-model.port.js';
import { quantise } from './embedding-vectors.js';
import { mergeSegments, type SearchSegment } from './search-segment.js';
import { type IndexEntry, itemKey, SearchSegments, segmentOf } from './search-segments.js';
import type { SearchIndexHead, SearchIndexStore, SearchSegmentRef } from './search-index.port.js';
import { SegmentRetiredError } from './search-index-reader.js';

/** Deltas kept before a merge. */
export const MAX_SEGMENTS = 8;
/** Removals carried by the pointer before a merge (the pointer is one DynamoDB item, ≤ 400 KB). */
export const MAX_REMOVES = 2_000;

/** A delta over these items, with their vectors when the stage embeds (the text, not the title: titles like `turn 12` say nothing). */
export async function deltaOf(
  model: EmbeddingModel | undefined,
  items: MemoryItem[],
  signal: AbortSignal | undefined,
): Promise<SearchSegment> {
  if (!model || items.length === 0) return segmentOf(items);
  const vectors = await model.embed(
    items.map((i) => i.text),
    { signal },
  );
  return segmentOf(items, quantise(model.modelId, model.dimensions, vectors));
}

/**
 * These segments and the delta as one: superseded, removed and expired items dropped. The
 * ids it returns as removed still hide older segments left out of the merge (the base, in
 * a merge of the deltas): those the merged segments removed, and those it dropped as expired.
 */
export async function mergedSegment(
  store: SearchIndexStore,
  userId: string,
  refs: readonly SearchSegmentRef[],
  delta: IndexEntry,
  now: Date,
): Promise<{ segment: SearchSegment; removes: string[] }> {
  const segments = await Promise.all(refs.map((ref) => store.segment(ref)));
  if (segments.some((s) => s === null))
    throw new SegmentRetiredError(
      `a segment of ${userId}'s search index was retired by another compaction during a merge`,
    );
  const entries = [
    ...refs.map((ref, i) => ({ segment: segments[i] as SearchSegment, removes: keysOf(userId, ref.removes) })),
    delta,
  ];
  const index = new SearchSegments(entries);
  const removes = new Set([
    ...refs.flatMap((r) => r.removes),
    ...[...(delta.removes ?? [])].map((k) => k.slice(k.indexOf('\u0000') + 1)),
  ]);
  const segment = mergeSegments(
    entries.map(({ segment }, si) => ({
      segment,
      keep: (doc: number) => {
        if (index.isHidden(si, doc)) return false;
        const expiresAt = segment.item(doc).expiresAt;
        if (expiresAt === null || expiresAt > now.getTime()) return true;
        removes.add(segment.item(doc).id);
        return false;
      },
    })),
  );
  return { segment, removes: [...removes] };
}

/**
 * Size-tiered: the deltas are merged into one when there are too many, the base with them
 * only once they hold a tenth of its items (or the pointer carries too many removals), so a
 * large base is rewritten rarely.
 */
export function mergePlan(head: SearchIndexHead, deltaItems: number, removed: number): 'none' | 'deltas' | 'all' {
  const removes = head.segments.reduce((n, s) => n + s.removes.length, removed);
  if (removes > MAX_REMOVES) return 'all';
  if (head.segments.length + 1 <= MAX_SEGMENTS) return 'none';
  const [base, ...deltas] = head.segments;
  const deltaTotal = deltas.reduce((n, s) => n + s.items, deltaItems);
  return deltaTotal * 10 >= (base?.items ?? 0) ? 'all' : 'deltas';
}

export const keysOf = (userId: string, ids: readonly string[]): Set<string> =>
  new Set(ids.map((id) => itemKey({ userId, id })));
