/**
 * Why memory.search ranked a result where it did (`explain: true`, docs/memory-api.md
 * "Explain"): the rankings fused into its score (memory-search.ts rankIndex) that placed it,
 * its place and score in each, the query terms it matched there, the turns a window or a
 * summary was scored by, the question an answer answers, and the quality (the item's trust)
 * and recency its scores were blended with. Built from the hits the ranking itself computed
 * (memory-search.ts passes them here), and only when asked, so a search without it costs what
 * it did.
 */
import * as z from 'zod';

/** The rankings rankIndex fuses, by name (memory-search.ts's header says where each one is defined). */
export const RANKINGS = ['score', 'answer', 'window', 'summary', 'time', 'vector'] as const;
export type RankingName = (typeof RANKINGS)[number];

export const RankingPlaceSchema = z.object({
  ranking: z.enum(RANKINGS),
  /** 1 for the ranking's first item. */
  rank: z.number().int().min(1),
  /** The item's score in this ranking: relevance · (0.7 + 0.2 · quality + 0.1 · recency); the vector ranking's is the cosine. */
  score: z.number(),
  /** ½ · BM25 / the ranking's best BM25 + ½ · similarity (the vector ranking: the cosine). */
  relevance: z.number(),
  /** Cosine of the query's and the scored words' BM25-weighted vectors (the vector ranking: of the embeddings). */
  similarity: z.number(),
  /** BM25+ of the query words matched by the item (a window: by its turns; a summary: by the turns it covers). */
  bm25: z.number().optional(),
  /** The query's terms (stemmed) the BM25 matched. */
  terms: z.array(z.string()).optional(),
  /** The items whose words scored it: a window's matching turns, the matching turns a summary covers. */
  members: z.array(z.string()).optional(),
  /** The answer ranking: the id of the turn whose question this item answers (it holds that turn's place and scores). */
  answers: z.string().optional(),
});
export type RankingPlace = z.infer<typeof RankingPlaceSchema>;

export const SearchExplainSchema = z.object({
  /** Reciprocal rank fusion: Σ 1 / (FUSION_K + rank) over the rankings below; the result's score is it over its largest possible value. */
  fused: z.number(),
  rankings: z.array(RankingPlaceSchema),
  /** The item's quality (its trust, 0..1), weighted 0.2 in each lexical ranking's score. */
  quality: z.number(),
  /** ½^(age / 30 days), weighted 0.1. */
  recency: z.number(),
  /** 0.7 + 0.2 · quality + 0.1 · recency: what each lexical ranking multiplies relevance by. */
  blend: z.number(),
});
export type SearchExplain = z.infer<typeof SearchExplainSchema>;

/** A hit as a ranking computed it (rank-fusion.ts ScoredHit, by shape). */
export interface RankedHit {
  score: number;
  relevance: number;
  similarity: number;
  bm25?: number | undefined;
  perTerm?: ReadonlyMap<string, number> | undefined;
  members?: ReadonlyArray<{ segment: number; doc: number }> | undefined;
  answers?: string | undefined;
}

export interface Place {
  ranking: RankingName;
  /** 0-based place in the ranking. */
  index: number;
  hit: RankedHit;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

/**
 * The explanation of one fused result: its places (in fusion order), `idOf` naming a member
 * by its segment and document, and the blend its lexical scores used.
 */
export function explanation(
  places: readonly Place[],
  fused: number,
  blend: { quality: number; recency: number; factor: number },
  idOf: (at: { segment: number; doc: number }) => string,
): SearchExplain {
  return {
    fused: round(fused),
    rankings: places.map(({ ranking, index, hit }) => ({
      ranking,
      rank: index + 1,
      score: hit.score,
      relevance: hit.relevance,
      similarity: hit.similarity,
      ...(hit.bm25 !== undefined ? { bm25: round(hit.bm25) } : {}),
      ...(hit.perTerm ? { terms: [...hit.perTerm.keys()] } : {}),
      ...(hit.members ? { members: hit.members.map(idOf) } : {}),
      ...(hit.answers !== undefined ? { answers: hit.answers } : {}),
    })),
    quality: blend.quality,
    recency: round(blend.recency),
    blend: round(blend.factor),
  };
}
