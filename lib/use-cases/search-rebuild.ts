/**
 * Rebuild an owner's search index from its stores (docs/search-index.md, "Rebuilding an
 * index"): every item id the stores hold is read again through the catalog and written as
 * one segment, the old segments dropped. What a change mark that was lost or expired left out
 * is found again, and nothing the stores no longer hold stays in a segment. The API's
 * `POST /v1/users/{u}/search-index/rebuild` (administrators) and `npm run reindex` call it.
 * Safe to repeat; writes racing it are marked after its read, so the next view overlays them.
 */
import { MemoryApiError } from './memory-api-error.js';
import type { OwnerItems } from '../ports.js';
import type { SearchIndexReader } from './search-index.js';

export interface SearchRebuildDeps {
  search: Pick<SearchIndexReader, 'compact'>;
  owners: OwnerItems;
}

export interface SearchRebuild {
  /** The item ids the stores hold (a dead one, e.g. an expired entry, is read and left out). */
  items: number;
  /** The index's version after the rebuild. */
  version: number;
}

export async function rebuildSearchIndex(deps: SearchRebuildDeps, userId: string): Promise<{ rebuilt: SearchRebuild }> {
  const ids = await deps.owners.itemIds(userId);
  const result = await deps.search.compact(userId, 1, { rebuild: ids });
  if (result.lost) throw new MemoryApiError('conflict', `the search index of ${userId} moved during the rebuild (another compaction): ask again`);
  return { rebuilt: { items: ids.length, version: result.version } };
}
