/**
 * Rebuild a user's search index from their stores (docs/search-index.md, "Rebuilding an
 * index"): every item id the stores hold — the sort keys of the partition's records (the
 * archive store's read of the whole partition) and the knowledge index's documents — is read
 * again through the catalog and written as one segment, the old segments dropped. What a
 * change mark that was lost or expired left out is found again, and nothing the stores no
 * longer hold stays in a segment. The API's `POST /v1/users/{u}/search-index/rebuild`
 * (administrators) and `npm run reindex` call it. Safe to repeat; writes racing it are marked
 * after its read, so the next view overlays them.
 */
import { type DiaryRecord, diaryVisible } from '../diary/diary.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { UserArchiveStore } from '../archive/user-archive.port.js';
import type { SearchIndexReader } from './search-index-reader.js';

export interface SearchRebuildDeps {
  search: Pick<SearchIndexReader, 'compact'>;
  archives: Pick<UserArchiveStore, 'records'>;
  knowledge: Pick<KnowledgeStore, 'loadKnowledge'>;
}

/**
 * A record's item id, the catalog's mapping read backwards: a kind's sort-key prefix
 * (keys.turnPrefix, eventEpisodePrefix, stagedPrefix, summaryPrefix, memoryPrefix, diaryPrefix)
 * names its ids' (`mem:` ids are whole after MEM#), a turn-keyed key's `{last turn}#` is
 * dropped. Null for records that are not search items, and for an invisible diary entry.
 */
export function itemIdOf(record: Record<string, unknown>): string | null {
  const [, kind, rest = ''] =
    /^(TURN|EPISODE|STAGED|SUMMARY|MEM|DIARY)#(?:\d{10}#)?(.*)$/.exec(String(record.sk)) ?? [];
  if (kind === undefined || (kind === 'DIARY' && !diaryVisible(record.entry as DiaryRecord))) return null;
  return kind === 'TURN' ? `turn:${Number(rest)}` : kind === 'MEM' ? rest : `${kind.toLowerCase()}:${rest}`;
}

/**
 * `items`: the ids the stores hold (a dead one, e.g. an expired entry, is read and left out);
 * `version`: the index's after; `lost`: another compaction moved the index first, nothing was
 * written (ask again).
 */
export async function rebuildSearchIndex(
  deps: SearchRebuildDeps,
  userId: string,
): Promise<{ rebuilt: { items: number; version: number; lost: boolean } }> {
  const [records, docs] = await Promise.all([deps.archives.records(userId), deps.knowledge.loadKnowledge(userId)]);
  const ids = [
    ...records.map(itemIdOf).filter((id): id is string => id !== null),
    ...docs.map((d) => `knowledge:${d.id}`),
  ];
  const { version, lost } = await deps.search.compact(userId, 1, { rebuild: ids });
  return { rebuilt: { items: ids.length, version, lost: !!lost } };
}
