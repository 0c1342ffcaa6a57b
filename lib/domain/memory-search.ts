/**
 * Unified search of seed 002 §5: one search over every kind of memory item, natural
 * language or keywords, filters for topic, content type, scope, tier, quality and
 * freshness, ranked by relevance blended with quality and recency.
 *
 * relevance = ½ · BM25 / best BM25 of the query + ½ · cosine(query, item) (see
 * knowledge-search.ts), both over Porter-stemmed words — the first orders, the second is
 * absolute, so an item that shares one common word with the question stays low even when
 * it is the best there is. Stemming was measured on LoCoMo (BENCHMARKS.md): evidence
 * recall@10 75.8 % → 81.2 %; the weights ½/½ vs 0.8/0.2 or 0.3/0.7 moved it by under a point.
 * score = relevance · (0.7 + 0.2 · quality + 0.1 · recency), recency = ½^(age / 30 days).
 * Items under the confidence floor (cosine < minSimilarity) are not returned: a query with
 * nothing relevant in memory gets no results rather than the least bad ones.
 * Redundancy: an item all of whose source turns are already covered by better results
 * (a turn after the summary that holds it, a second item from the same turn) is left out,
 * so `limit` results stand for as many different turns as they can.
 */
import { z } from 'zod';
import { DocumentIndex } from './knowledge-search.js';
import { isLive, KindSchema, type MemoryItem, ScopeSchema, TierSchema } from './memory-item.js';

export const SEARCH_WEIGHTS = { relevance: 0.7, quality: 0.2, recency: 0.1 } as const;
export const RECENCY_HALF_LIFE_DAYS = 30;
export const DEFAULT_MIN_SIMILARITY = 0.05;
/** BM25 candidates looked at per result asked for (at least 50). */
const CANDIDATES_PER_RESULT = 5;

export const SearchFiltersSchema = z
  .object({
    /** Items whose primaryTopic is this topic or below it (`pet` matches `pet.hamster`). */
    topic: z.string().min(1).max(200).optional(),
    contentTypes: z.array(z.string().min(1).max(64)).min(1).max(20).optional(),
    scope: z.array(ScopeSchema).min(1).optional(),
    tier: z.array(TierSchema).min(1).optional(),
    kind: z.array(KindSchema).min(1).optional(),
    minQuality: z.number().min(0).max(1).optional(),
    /** Only items created within this many days of now. */
    maxAgeDays: z.number().positive().max(36_500).optional(),
    /** Include items of the GLOBAL scope shared with every user. @default true */
    includeGlobal: z.boolean().optional(),
  })
  .strict();
export type SearchFilters = z.infer<typeof SearchFiltersSchema>;

export interface SearchHit {
  item: MemoryItem;
  score: number;
  relevance: number;
  similarity: number;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

export function matchesFilters(item: MemoryItem, f: SearchFilters, now: Date): boolean {
  if (f.topic && !(item.primaryTopic === f.topic || item.primaryTopic.startsWith(`${f.topic}.`))) return false;
  if (f.contentTypes && !item.contentTypes.some((c) => f.contentTypes?.includes(c))) return false;
  if (f.scope && !f.scope.includes(item.scope)) return false;
  if (f.tier && !f.tier.includes(item.tier)) return false;
  if (f.kind && !f.kind.includes(item.kind)) return false;
  if (f.minQuality !== undefined && item.quality < f.minQuality) return false;
  if (f.maxAgeDays !== undefined && now.getTime() - Date.parse(item.createdAt) > f.maxAgeDays * 86_400_000) return false;
  return true;
}

export function recency(createdAt: string, now: Date): number {
  const ageDays = Math.max(0, (now.getTime() - Date.parse(createdAt)) / 86_400_000);
  return Number.isFinite(ageDays) ? 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS) : 0;
}

export function searchMemory(
  items: readonly MemoryItem[],
  request: { query: string; limit: number; filters?: SearchFilters | undefined; minSimilarity?: number | undefined },
  now: Date,
): SearchHit[] {
  const filters = request.filters ?? {};
  const pool = items.filter((i) => isLive(i, now) && matchesFilters(i, filters, now));
  if (pool.length === 0) return [];
  const index = new DocumentIndex(
    pool.map((item) => ({ id: `${item.userId}\u0000${item.id}`, title: item.title, text: item.text, item })),
    { stem: true },
  );
  const ranked = index.rank(request.query, Math.max(50, request.limit * CANDIDATES_PER_RESULT));
  const best = ranked[0]?.bm25 ?? 0;
  const floor = request.minSimilarity ?? DEFAULT_MIN_SIMILARITY;
  return ranked
    .map(({ doc, bm25, similarity }) => {
      const relevance = 0.5 * (best > 0 ? bm25 / best : 0) + 0.5 * similarity;
      const blend = SEARCH_WEIGHTS.relevance + SEARCH_WEIGHTS.quality * doc.item.quality + SEARCH_WEIGHTS.recency * recency(doc.item.createdAt, now);
      return { item: doc.item, relevance: round(relevance), similarity: round(similarity), score: round(relevance * blend) };
    })
    .filter((h) => h.similarity >= floor)
    .sort((a, b) => b.score - a.score || a.item.id.localeCompare(b.item.id))
    .filter(novel())
    .slice(0, request.limit);
}

/** Keeps a hit only if it stands for a turn no better hit stands for (items without source turns always pass). */
function novel(): (hit: SearchHit) => boolean {
  const covered = new Set<string>();
  return ({ item }) => {
    if (item.sourceTurns.length === 0) return true;
    const turns = item.sourceTurns.map((t) => `${item.userId}#${t}`);
    if (turns.every((t) => covered.has(t))) return false;
    for (const t of turns) covered.add(t);
    return true;
  };
}
