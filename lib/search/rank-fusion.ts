/**
 * The rankings memory.search fuses, their hits, and their fusion by reciprocal rank into the
 * hits it returns (with each one's explanation, when asked: search-explain.ts).
 */
import type { IndexedItem } from './indexed-item.js';
import { blendOf, round } from './search-blend.js';
import { explanation, type Place, type RankingName, type SearchExplain } from './search-explain.js';
import type { SearchSegment } from './search-segment.js';
import { itemKey, type SearchSegments } from './search-segments.js';

/** A hit of rankIndex: an indexed item, before the item is read from its store. */
export interface IndexHit {
  item: IndexedItem;
  score: number;
  relevance: number;
  similarity: number;
  explain?: SearchExplain;
}

export const bestFirst = (a: IndexHit, b: IndexHit): number => b.score - a.score || a.item.id.localeCompare(b.item.id);

/**
 * A hit as a ranking scored it: where it is, and (lexical rankings) its BM25+ and per-word
 * scores, the items whose words scored it, the question turn it answers (answerRanking).
 */
export type ScoredHit = IndexHit & {
  segment: number;
  doc: number;
  bm25?: number;
  perTerm?: ReadonlyMap<string, number>;
  members?: ReadonlyArray<{ segment: number; doc: number }> | undefined;
  answers?: string;
};
/** Hits best first; a place may be empty (the answer ranking keeps its questions' places). */
export type Ranking = ReadonlyArray<ScoredHit | undefined>;
export interface NamedRanking {
  name: RankingName;
  hits: Ranking;
}
/** Builds a fused hit's explanation from its places in the rankings and its fused value. */
type Explainer = (places: readonly Place[], fused: number, hit: ScoredHit) => SearchExplain;

/** The explanations of an index's hits: the blend the lexical scores used, and members named by id. */
export function explainer(index: SearchSegments, now: Date): Explainer {
  const idOf = (at: { segment: number; doc: number }) =>
    (index.segments[at.segment] as SearchSegment).columns.ids[at.doc] ?? '';
  return (places, fused, hit) => explanation(places, fused, blendOf(hit.item, now), idOf);
}

/** Reciprocal rank fusion's constant (Cormack et al. use 60; 10 lets each ranking's first few lead). */
export const FUSION_K = 10;
/**
 * The rankings as one, by reciprocal rank fusion: an item's 1/(k + rank) summed over the
 * rankings that hold it (ties: the higher score, then the id). The sum, over its largest
 * (first in every ranking), is the hit's score: results are best first by score, as the API promises.
 */
export function fuse(rankings: readonly NamedRanking[], explain?: Explainer): IndexHit[] {
  const fusedMax = rankings.length / (FUSION_K + 1);
  const fused = new Map<string, { hit: ScoredHit; rank: number; places?: Place[] }>();
  for (const { name, hits } of rankings) {
    hits.forEach((hit, r) => {
      if (!hit) return;
      const key = itemKey(hit.item);
      const entry = fused.get(key) ?? { hit, rank: 0 };
      entry.rank += 1 / (FUSION_K + r + 1);
      if (explain) entry.places = [...(entry.places ?? []), { ranking: name, index: r, hit }];
      fused.set(key, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.rank - a.rank || b.hit.score - a.hit.score || a.hit.item.id.localeCompare(b.hit.item.id))
    .map(({ hit, rank, places }) => ({
      item: hit.item,
      relevance: hit.relevance,
      similarity: hit.similarity,
      score: round(rank / fusedMax),
      ...(explain && places ? { explain: explain(places, rank, hit) } : {}),
    }));
}
