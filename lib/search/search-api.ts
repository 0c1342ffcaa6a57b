/** memory.search and memory.retrieve (req R-DOC-4): ranking over the per-owner search indexes, the page's items read from their stores, and one item by id or path. */
import { GLOBAL_USER, isLive, itemIdForPath, type MemoryItem } from '../items/memory-item.js';
import type { QueryVector } from './embedding-vectors.js';
import { rankIndex, type SearchRequest } from './memory-search.js';
import type { IndexHit } from './rank-fusion.js';
import { itemKey, SearchSegments } from './search-segments.js';
import type { IndexedItem } from './indexed-item.js';
import type { SearchExplain } from './search-explain.js';
import { ModelUnavailableError } from '../model/language-model.port.js';
import { isDerivedId } from '../trust/scope-trust.js';
import { type SearchView, SegmentRetiredError } from './search-index-reader.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import { type MemoryApiDeps, notFound } from '../memory-api/deps.js';

export interface SearchResult {
  id: string;
  kind: string;
  text: string;
  score: number;
  sourceTurns: number[];
  attributes: Record<string, string>;
  title: string;
  path: string;
  userId: string;
  scope: string;
  tier: string;
  quality: number;
  contentTypes: string[];
  primaryTopic: string;
  createdAt: string;
  /** Why it ranked here: only when the request asks (`explain: true`). */
  explain?: SearchExplain;
}

const view = (item: MemoryItem, score: number, explain?: SearchExplain): SearchResult => ({
  id: item.id,
  kind: item.kind,
  text: item.text,
  score,
  sourceTurns: item.sourceTurns,
  attributes: item.attributes,
  title: item.title,
  path: item.path,
  userId: item.userId,
  scope: item.scope,
  tier: item.tier,
  quality: item.quality,
  contentTypes: item.contentTypes,
  primaryTopic: item.primaryTopic,
  createdAt: item.createdAt,
  ...(explain ? { explain } : {}),
});

/** Results asked of the ranking beyond `limit`, for items a store no longer holds as the index does. */
export const PAGE_SPARE = 5;

export async function search(
  deps: MemoryApiDeps,
  userId: string,
  req: SearchRequest,
): Promise<{ results: SearchResult[] }> {
  const now = deps.clock.now();
  const owners = userId === GLOBAL_USER || req.filters?.includeGlobal === false ? [userId] : [userId, GLOBAL_USER];
  // The query's vector is asked for while the indexes are read (a stage that embeds).
  const [views, vector] = await Promise.all([
    Promise.all(owners.map((owner) => viewOf(deps, owner))),
    queryVector(deps, req.query),
  ]);
  const hits = rankIndex(new SearchSegments(views.flatMap((v) => v.entries)), req, now, PAGE_SPARE, vector);
  // The page's items first; the spare hits only when a store no longer holds some as indexed.
  const first = await pageItems(deps, owners, views, hits.slice(0, req.limit));
  const live = (h: IndexHit, items: ReadonlyMap<string, MemoryItem>) => {
    const item = items.get(itemKey(h.item));
    return item && isLive(item, now) ? [view(trusted(item, h.item), h.score, h.explain)] : [];
  };
  const results = hits.slice(0, req.limit).flatMap((h) => live(h, first));
  if (results.length < req.limit && hits.length > req.limit) {
    const spare = hits.slice(req.limit);
    const more = await pageItems(deps, owners, views, spare);
    results.push(...spare.flatMap((h) => live(h, more)));
  }
  const page = results.slice(0, req.limit);
  await countResurrections(deps, userId, page);
  return { results: page };
}

/**
 * A derived item of a page (a search's, a tier's) with the trust its index entry holds (req R-SCOPE-2): the
 * page is read without trust records (pageItems), and the index holds every trust an outcome
 * set, since each outcome marks its item (docs/memory-api.md, "Trust"). A `mem:` item's trust
 * is its own quality, as its store holds it now.
 */
export const trusted = (item: MemoryItem, indexed: Pick<IndexedItem, 'quality'>): MemoryItem =>
  isDerivedId(item.id) && item.quality !== indexed.quality ? { ...item, quality: indexed.quality } : item;

/**
 * The query's embedding, once per search, when the stage embeds. A model that is unavailable
 * (throttled, timed out, 5xx) leaves this search lexical rather than failing it; a denied one
 * (no grant, no model access) fails it, so a misconfigured stage shows at once.
 */
async function queryVector(deps: MemoryApiDeps, query: string): Promise<QueryVector | undefined> {
  const model = deps.embeddings;
  if (!model) return undefined;
  try {
    const [values] = await model.embed([query]);
    return values ? { modelId: model.modelId, values } : undefined;
  } catch (error) {
    if (error instanceof ModelUnavailableError) return undefined;
    throw error;
  }
}

/** Req R-SUM-10's quality metrics: each summary an agent is given back counts as resurrected once more. */
export async function countResurrections(
  deps: MemoryApiDeps,
  userId: string,
  items: ReadonlyArray<Pick<SearchResult, 'id' | 'kind'>>,
): Promise<void> {
  const ids = items
    .filter((i) => i.kind === 'summary' && i.id.startsWith('summary:'))
    .map((i) => i.id.slice('summary:'.length));
  if (ids.length > 0 && userId !== GLOBAL_USER) await deps.summaries.countResurrections(userId, ids);
}

/** The api's log line for an owner whose watermark is older than the marks' TTL; the stack alarms on it (StaleSearchIndexAlarm). */
export const STALE_INDEX_WARNING = "search index watermark older than the change marks' TTL";

/**
 * An owner's index view; an owner whose changes piled up (no job compacts it), or whose
 * watermark grew old, is compacted first; one whose watermark is older than the marks' TTL
 * is logged (changes after it may have expired unfolded: docs/search-index.md, "Liveness"). A compaction that fails (another one retired the segments it was merging) leaves the
 * marks for the next: the view it had still serves this request.
 */
export async function viewOf(deps: MemoryApiDeps, owner: string): Promise<SearchView> {
  const v = await deps.search.view(owner);
  if (v.stale) deps.log?.warn(STALE_INDEX_WARNING, { owner, changes: v.changes });
  if (!v.due) return v;
  try {
    await deps.search.compact(owner);
  } catch (error) {
    // A model that could not embed the delta (stage with embeddings) leaves the marks too.
    if (error instanceof SegmentRetiredError || error instanceof ModelUnavailableError) return v;
    throw error;
  }
  return deps.search.view(owner);
}

/** The page's items as their stores hold them now: changed ones from the view, the rest read by id. */
export async function pageItems(
  deps: MemoryApiDeps,
  owners: readonly string[],
  views: readonly SearchView[],
  hits: ReadonlyArray<Pick<IndexHit, 'item'>>,
): Promise<Map<string, MemoryItem>> {
  const out = new Map<string, MemoryItem>();
  await Promise.all(
    owners.map(async (owner, i) => {
      const fresh = views[i]?.fresh ?? new Map<string, MemoryItem | null>();
      const mine = hits.map((h) => h.item).filter((it) => it.userId === owner);
      for (const it of mine) {
        const item = fresh.get(it.id);
        if (item) out.set(itemKey(it), item);
      }
      const rest = mine.filter((it) => !fresh.has(it.id));
      if (rest.length === 0) return;
      const read = await deps.catalog.itemsById(
        owner,
        rest.map((it) => it.id),
        // Derived items carry their source turns' attributes: those turns are read with them.
        // No trust records: the index's entries carry the trust (search, `trusted`).
        {
          sourceTurns: [
            ...new Set(
              rest.filter((it) => it.kind !== 'turn' && it.kind !== 'episode').flatMap((it) => it.sourceTurns),
            ),
          ],
          trust: false,
        },
      );
      for (const [id, item] of read) out.set(itemKey({ userId: owner, id }), item);
    }),
  );
  return out;
}

/** One live item by id: API-written items first (the user's, then GLOBAL's), then the other stores. */
export async function findItem(deps: MemoryApiDeps, userId: string, id: string): Promise<MemoryItem | null> {
  const now = deps.clock.now();
  if (id.startsWith('mem:')) {
    for (const owner of userId === GLOBAL_USER ? [GLOBAL_USER] : [userId, GLOBAL_USER]) {
      const item = await deps.items.get(owner, id);
      if (item && isLive(item, now)) return item;
    }
    return null;
  }
  const item = (await deps.catalog.itemsById(userId, [id])).get(id);
  return item && isLive(item, now) ? item : null;
}

/**
 * One item by id or path, to the owner's readers. An ephemeral entry of any session included:
 * search keeps it to its session (search-filters.ts inSession), but a session is no credential
 * boundary, and the tier listing serves it as well (docs/memory-api.md, "Search").
 */
export async function retrieve(
  deps: MemoryApiDeps,
  userId: string,
  req: { id?: string | undefined; path?: string | undefined },
): Promise<{ item: MemoryItem }> {
  const id = req.id ?? (req.path !== undefined ? itemIdForPath(req.path) : null);
  if (!id)
    throw new MemoryApiError(
      'invalid',
      `path: ${JSON.stringify(req.path)} names no memory item (turns/N, Knowledge/…, Knowledge_staging/…, summaries/ID, memory/mem:…)`,
    );
  const item = await findItem(deps, userId, id);
  if (!item) throw notFound(`memory item ${id}`);
  await countResurrections(deps, userId, [item]);
  if (item.kind === 'turn') {
    // The index holds the turn's words capped; retrieve returns the whole turn.
    const { turns } = await deps.turns.getTurns(userId, item.sourceTurns);
    const t = turns[0];
    if (t) return { item: { ...item, text: `${t.query}\n${t.response}` } };
  }
  return { item };
}
