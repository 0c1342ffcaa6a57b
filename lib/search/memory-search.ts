/**
 * Unified search of req R-DOC-3: one search over every kind of memory item, filtered, then
 * ranked by up to five rankings fused by reciprocal rank over the owner's search index
 * (segments, oldest first: a newer segment's version of an item hides an older one's).
 * The formulas, the rankings and why each is there: docs/memory-api.md, *Search*. BM25+ is
 * lexical-scores.ts; the rankings are turn-rankings.ts, time-ranking.ts and vector-ranking.ts;
 * their fusion is rank-fusion.ts.
 */
import { counts } from '../knowledge/knowledge-search.js';
import { isLive, type MemoryItem } from '../items/memory-item.js';
import type { QueryVector } from './embedding-vectors.js';
import type { IndexedItem } from './indexed-item.js';
import { type Matches, scoreCandidates, termScores, topCandidates, wordWeights } from './lexical-scores.js';
import { queryTimeWindow } from './query-time.js';
import { bestFirst, explainer, fuse, type IndexHit, type NamedRanking } from './rank-fusion.js';
import type { SearchExplain } from './search-explain.js';
import { matchesFilters, type SearchFilters } from './search-filters.js';
import { queryTermGroups, vectorTerms } from './search-terms.js';
import { indexOf, itemKey, type SearchSegments } from './search-segments.js';
import { timeRanking } from './time-ranking.js';
import { answerRanking, summaryRanking, windowRanking } from './turn-rankings.js';
import { vectorRanking } from './vector-ranking.js';

export const DEFAULT_MIN_SIMILARITY = 0.05;
/** BM25 candidates looked at per result asked for (at least 50). */
const CANDIDATES_PER_RESULT = 5;
/**
 * The distinct query words the lexical rankings score (the first ones; a word written again
 * counts as before). Their score tables hold a cell per matched item and word: a query of
 * 4,000 characters has a few hundred words, which over 100,000 items would take gigabytes.
 */
export const MAX_QUERY_WORDS = 64;

export interface SearchRequest {
  query: string;
  limit: number;
  filters?: SearchFilters | undefined;
  minSimilarity?: number | undefined;
  /** Each hit says why it ranked (search-explain.ts); computed only when asked. */
  explain?: boolean | undefined;
  /** The session the search is made in: its ephemeral entries are eligible, no other's (search-filters.ts inSession). */
  sessionId?: string | undefined;
}

export interface SearchHit {
  item: MemoryItem;
  score: number;
  relevance: number;
  similarity: number;
  explain?: SearchExplain;
}

/**
 * memory.search over an index: the `limit` best live items passing the filters, redundant
 * ones left out — and `spare` more after them, for a caller that may drop some. Ordered by
 * the fusion of up to five lexical rankings (fuse): by score, the answers to its questions
 * (answerRanking), by window (windowRanking), summaries by the turns they cover
 * (summaryRanking) and, when the query names a time, by time (timeRanking). Given
 * the query's embedding (`vector`, on a stage that embeds), one more, the items by the cosine
 * of their stored vectors (vectorRanking); without it the ranking is the lexical one alone.
 */
export function rankIndex(
  index: SearchSegments,
  request: SearchRequest,
  now: Date,
  spare = 0,
  vector?: QueryVector,
): IndexHit[] {
  const filters = request.filters ?? {};
  const eligible = (item: IndexedItem) =>
    (item.expiresAt === null || item.expiresAt > now.getTime()) &&
    matchesFilters(item, filters, now, request.sessionId);
  const byVector = vector ? vectorRanking(index, vector, eligible) : [];
  const lexical = lexicalRankings(index, request, now, eligible);
  const rankings: NamedRanking[] = byVector.length > 0 ? [...lexical, { name: 'vector', hits: byVector }] : lexical;
  if (rankings.length === 0) return [];
  return fuse(rankings, request.explain ? explainer(index, now) : undefined)
    .filter(novel())
    .slice(0, request.limit + spare);
}

/**
 * The lexical rankings (by score, the answers, by window, summaries by the turns they cover, by
 * time), those with nothing to rank left out; none when no item clears the floor — the
 * question is about something memory does not hold.
 */
function lexicalRankings(
  index: SearchSegments,
  request: SearchRequest,
  now: Date,
  eligible: (item: IndexedItem) => boolean,
): NamedRanking[] {
  const groups = firstWords(queryTermGroups(request.query), MAX_QUERY_WORDS);
  if (groups.length === 0 || index.size === 0) return [];
  const qTerms = vectorTerms(request.query);
  const query = qTerms.length > 0 ? index.weigh(counts(qTerms), qTerms.length) : null;
  const { table, words, rowItems } = termScores(index, groups, eligible);
  const matches: Matches = { items: table, rowItems, words, weights: wordWeights(index, words), query };
  const candidates = topCandidates(matches, table, null, Math.max(50, request.limit * CANDIDATES_PER_RESULT));
  const scored = scoreCandidates(index, candidates, query, now);
  const floor = request.minSimilarity ?? DEFAULT_MIN_SIMILARITY;
  const byScore = scored.filter((h) => h.similarity >= floor).sort(bestFirst);
  if (byScore.length === 0) return [];
  const byWindow = windowRanking(index, matches, eligible, now).filter((h) => h.similarity >= floor);
  const bySummary = summaryRanking(index, matches, eligible, now).filter((h) => h.similarity >= floor);
  const window = queryTimeWindow(request.query, now);
  const byTime = window ? timeRanking(index, matches, window, now).filter((h) => h.similarity >= floor) : [];
  const byAnswer = answerRanking(index, byScore, eligible);
  const named: NamedRanking[] = [
    { name: 'score', hits: byScore },
    { name: 'answer', hits: byAnswer },
    { name: 'window', hits: byWindow },
    { name: 'summary', hits: bySummary },
    { name: 'time', hits: byTime },
  ];
  return named.filter((r) => r.hits.some((h) => h !== undefined));
}

/** The groups of the query's first `max` distinct words (queryTermGroups), repeats of them kept. */
function firstWords(groups: string[][], max: number): string[][] {
  const kept = new Set<string>();
  return groups.filter((g) => {
    const word = g[0] as string;
    if (!kept.has(word) && kept.size >= max) return false;
    kept.add(word);
    return true;
  });
}

/** memory.search over items held in memory: an index of the live ones, ranked. */
export function searchMemory(items: readonly MemoryItem[], request: SearchRequest, now: Date): SearchHit[] {
  const live = items.filter((i) => isLive(i, now));
  const byKey = new Map(live.map((i) => [itemKey(i), i]));
  return rankIndex(indexOf(live), request, now).flatMap((h) => {
    const item = byKey.get(itemKey(h.item));
    return item ? [{ ...h, item }] : [];
  });
}

/** Keeps a hit only if it stands for a turn no better hit stands for (items without source turns always pass). */
function novel(): (hit: { item: Pick<IndexedItem, 'userId' | 'sourceTurns'> }) => boolean {
  const covered = new Set<string>();
  return ({ item }) => {
    if (item.sourceTurns.length === 0) return true;
    const turns = item.sourceTurns.map((t) => `${item.userId}#${t}`);
    if (turns.every((t) => covered.has(t))) return false;
    for (const t of turns) covered.add(t);
    return true;
  };
}
