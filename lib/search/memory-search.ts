/**
 * Unified search of req R-DOC-3: one search over every kind of memory item, filtered, then
 * ranked by up to five rankings fused by reciprocal rank over the owner's search index
 * (segments, oldest first: a newer segment's version of an item hides an older one's).
 * The formulas, the rankings and why each is there: docs/memory-api.md, *Search*. BM25 is
 * computed here (word-scores.ts), not by MiniSearch, because the segments are not MiniSearch indexes.
 */
import * as z from 'zod';
import { cosine, counts } from '../knowledge/knowledge-search.js';
import { type Field, FIELDS, SearchSegment } from './search-segment.js';
import { type IndexedItem, indexedItem } from './indexed-item.js';
import { queryTermGroups, vectorTerms } from './search-terms.js';
import { isLive, KindSchema, type MemoryItem, ScopeSchema, TierSchema } from '../items/memory-item.js';
import { queryTimeWindow, type TimeWindow } from './query-time.js';
import { comparable, nearest, type QueryVector, type SegmentEmbeddings, unit } from './embedding-vectors.js';
import { explanation, type Place, type RankingName, type SearchExplain } from './search-explain.js';
import { topPositions, WordScores } from './word-scores.js';

export const SEARCH_WEIGHTS = { relevance: 0.7, quality: 0.2, recency: 0.1 } as const;
export const RECENCY_HALF_LIFE_DAYS = 30;
export const DEFAULT_MIN_SIMILARITY = 0.05;
/** BM25 candidates looked at per result asked for (at least 50). */
const CANDIDATES_PER_RESULT = 5;
/**
 * The distinct query words the lexical rankings score (the first ones; a word written again
 * counts as before). Their score tables hold a cell per matched item and word: a query of
 * 4,000 characters has a few hundred words, which over 100,000 items would take gigabytes.
 */
export const MAX_QUERY_WORDS = 64;
/** MiniSearch's BM25+ parameters (its defaults). */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;
/** The similarity's own BM25 weighting (knowledge-search.ts). */
const VECTOR = { k1: 1.2, b: 0.75 } as const;

export const SearchFiltersSchema = z
  .object({
    /** Items whose primaryTopic is this topic or below it (`pet` matches `pet.hamster`). */
    topic: z.string().min(1).max(200).optional(),
    contentTypes: z.array(z.string().min(1).max(64)).min(1).max(20).optional(),
    scope: z.array(ScopeSchema).min(1).optional(),
    tier: z.array(TierSchema).min(1).optional(),
    /** Only these kinds. Without it every kind but `staged` (unvetted output of one batch) and `diary` (the agent's own entries, found also by content type `diary`). */
    kind: z.array(KindSchema).min(1).optional(),
    minQuality: z.number().min(0).max(1).optional(),
    /** Only items created within this many days of now. */
    maxAgeDays: z.number().positive().max(36_500).optional(),
    /** Include items of the GLOBAL scope shared with every user. @default true */
    includeGlobal: z.boolean().optional(),
  })
  .strict();
export type SearchFilters = z.infer<typeof SearchFiltersSchema>;

export interface SearchRequest {
  query: string;
  limit: number;
  filters?: SearchFilters | undefined;
  minSimilarity?: number | undefined;
  /** Each hit says why it ranked (search-explain.ts); computed only when asked. */
  explain?: boolean | undefined;
}

export interface IndexHit {
  item: IndexedItem;
  score: number;
  relevance: number;
  similarity: number;
  explain?: SearchExplain;
}

export interface SearchHit {
  item: MemoryItem;
  score: number;
  relevance: number;
  similarity: number;
  explain?: SearchExplain;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

/** Ids are unique per owner: a user's `mem:x` and the GLOBAL copy shared from it are two items. */
export const itemKey = (item: Pick<IndexedItem, 'userId' | 'id'>): string => `${item.userId}\u0000${item.id}`;

type Filterable = Pick<MemoryItem, 'primaryTopic' | 'contentTypes' | 'scope' | 'tier' | 'kind' | 'quality' | 'createdAt'>;

export function matchesFilters(item: Filterable | (Omit<Filterable, 'createdAt'> & { createdAt: number }), f: SearchFilters, now: Date): boolean {
  if (f.topic && !(item.primaryTopic === f.topic || item.primaryTopic.startsWith(`${f.topic}.`))) return false;
  if (f.contentTypes && !item.contentTypes.some((c) => f.contentTypes?.includes(c))) return false;
  if (f.scope && !f.scope.includes(item.scope)) return false;
  if (f.tier && !f.tier.includes(item.tier)) return false;
  // Staged items are unvetted, single-batch output (req R-STG-2: staging is "NOT searched"):
  // a search returns them only when it asks for them by kind (the review console has its own route).
  // Diary entries are about the agent's own conduct, not the user: found when asked for, by kind
  // or by content type `diary`, so they never crowd the user's facts out of an ordinary search.
  if (f.kind ? !f.kind.includes(item.kind) : item.kind === 'staged' || (item.kind === 'diary' && !f.contentTypes?.includes('diary'))) return false;
  if (f.minQuality !== undefined && item.quality < f.minQuality) return false;
  if (f.maxAgeDays !== undefined && now.getTime() - epochMs(item.createdAt) > f.maxAgeDays * 86_400_000) return false;
  return true;
}

const epochMs = (t: string | number): number => (typeof t === 'number' ? t : Date.parse(t));

export function recency(createdAt: string | number, now: Date): number {
  const ageDays = Math.max(0, (now.getTime() - epochMs(createdAt)) / 86_400_000);
  return Number.isFinite(ageDays) ? 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS) : 0;
}

/** What a lexical ranking multiplies an item's relevance by: its quality (trust) and recency, weighted. */
export function blendOf(item: Pick<IndexedItem, 'quality' | 'createdAt'>, now: Date): { quality: number; recency: number; factor: number } {
  const r = recency(item.createdAt, now);
  return { quality: item.quality, recency: r, factor: SEARCH_WEIGHTS.relevance + SEARCH_WEIGHTS.quality * item.quality + SEARCH_WEIGHTS.recency * r };
}

/**
 * The segments of an index, oldest first, and the items removed after them (tombstones, by itemKey): an
 * item is served from the newest segment holding it, and not at all once removed later.
 */
export interface IndexEntry {
  segment: SearchSegment;
  /** Items (by itemKey) this entry removes from the entries before it. */
  removes?: ReadonlySet<string> | undefined;
}

export class SegmentedIndex {
  readonly segments: readonly SearchSegment[];
  /** hidden[s][d]: segment s's item d is superseded by a newer segment or removed. */
  private readonly hidden: Uint8Array[];
  readonly size: number;
  private readonly fieldAverage: Record<Field, number>;
  private readonly vectorAverage: number;

  constructor(entries: readonly IndexEntry[]) {
    const segments = entries.map((e) => e.segment);
    this.segments = segments;
    // Newest first: an item is hidden when a newer entry holds or removes its key. The oldest
    // segment (the large base) is only looked up, never added to the claimed keys.
    const claimed = new Set<string>();
    const claimedIds = new Set<string>();
    const claim = (key: string) => {
      claimed.add(key);
      claimedIds.add(key.slice(key.indexOf('\u0000') + 1));
    };
    this.hidden = new Array(segments.length);
    for (let si = segments.length - 1; si >= 0; si--) {
      const s = segments[si] as SearchSegment;
      const hidden = new Uint8Array(s.size);
      if (claimed.size > 0) for (let d = 0; d < s.size; d++) if (claimedIds.has(s.columns.ids[d] ?? '') && claimed.has(itemKey(s.keyOf(d)))) hidden[d] = 1;
      this.hidden[si] = hidden;
      if (si > 0) for (let d = 0; d < s.size; d++) claim(itemKey(s.keyOf(d)));
      for (const key of entries[si]?.removes ?? []) claim(key);
    }
    this.size = segments.reduce((n, s) => n + s.size, 0);
    const total = (f: (s: SearchSegment) => number) => segments.reduce((n, s) => n + f(s), 0);
    this.fieldAverage = { title: total((s) => s.fieldTotals.title) / (this.size || 1), text: total((s) => s.fieldTotals.text) / (this.size || 1) };
    this.vectorAverage = total((s) => s.vectorTotal) / (this.size || 1);
  }

  /** Every item served (not superseded, not removed), live or not. */
  *visible(): Generator<IndexedItem> {
    for (const [si, s] of this.segments.entries()) for (let d = 0; d < s.size; d++) if (!this.hidden[si]?.[d]) yield s.item(d);
  }

  /** Where the served version of an owner's item is (newest segment first), or undefined. */
  locate(userId: string, id: string): { segment: number; doc: number } | undefined {
    for (let si = this.segments.length - 1; si >= 0; si--) {
      const doc = this.segments[si]?.docOf(id);
      if (doc === undefined || this.segments[si]?.keyOf(doc).userId !== userId) continue;
      return this.isHidden(si, doc) ? undefined : { segment: si, doc };
    }
    return undefined;
  }

  isHidden(segment: number, doc: number): boolean {
    return this.hidden[segment]?.[doc] === 1;
  }

  fieldAverageOf(field: Field): number {
    return this.fieldAverage[field];
  }

  /** Items holding the term in `field` across all segments (superseded versions counted). */
  frequency(field: Field, term: string): number {
    let n = 0;
    for (const s of this.segments) {
      const id = s.termId(term);
      if (id !== undefined) n += field === 'text' ? s.textFrequency(id) : s.postingsOf(field, id).docs.length;
    }
    return n;
  }

  /** BM25-weighted vector of terms (the similarity's weighting: knowledge-search.ts). */
  weigh(tf: ReadonlyMap<string, number>, length: number): Map<string, number> {
    const n = this.size;
    const avg = n > 0 ? this.vectorAverage : length;
    const v = new Map<string, number>();
    for (const [t, f] of tf) {
      const df = Math.max(1, this.frequency('text', t));
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      v.set(t, (idf * f * (VECTOR.k1 + 1)) / (f + VECTOR.k1 * (1 - VECTOR.b + (VECTOR.b * length) / (avg || 1))));
    }
    return v;
  }
}

/**
 * Every item matching a query word and passing `eligible`, with its score per word (each of
 * the word's terms scored, summed under its own word: queryTermGroups), a row each in
 * first-matched order; and the query's distinct words, in order, that the rows' words index.
 */
function termScores(index: SegmentedIndex, groups: ReadonlyArray<readonly string[]>, eligible: (item: IndexedItem) => boolean): { table: WordScores; words: string[]; rowItems: IndexedItem[] } {
  const words = [...new Set(groups.map((g) => g[0] as string))];
  const wordIndex = new Map(words.map((w, i) => [w, i]));
  const table = new WordScores(words.length, false, 1024);
  const rowItems: IndexedItem[] = [];
  // Per segment, each item's row: -1 not met yet, -2 not served or not eligible.
  const rows = index.segments.map((s) => new Int32Array(s.size).fill(-1));
  const n = index.size;
  for (const [word, term] of groups.flatMap((g) => g.map((t) => [wordIndex.get(g[0] as string) ?? 0, t] as const))) {
    for (const field of FIELDS) {
      const df = index.frequency(field, term);
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const avg = index.fieldAverageOf(field);
      index.segments.forEach((s, si) => {
        const id = s.termId(term);
        if (id === undefined) return;
        const { docs, tfs } = s.postingsOf(field, id);
        const lengths = s.fieldLengths[field];
        const rowOf = rows[si] as Int32Array;
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i] ?? 0;
          let row = rowOf[doc] ?? -2;
          if (row === -1) {
            const item = index.isHidden(si, doc) ? undefined : s.item(doc);
            row = item && eligible(item) ? table.add(si, doc) : -2;
            if (item && row >= 0) rowItems.push(item);
            rowOf[doc] = row;
          }
          if (row < 0) continue;
          const tf = tfs[i] ?? 0;
          table.addScore(row, word, idf * (BM25.d + (tf * (BM25.k + 1)) / (tf + BM25.k * (1 - BM25.b + (BM25.b * (lengths[doc] ?? 0)) / avg))));
        }
      });
    }
  }
  return { table, words, rowItems };
}

/**
 * The items matching the query (a row each), the query's distinct words the rows index, each
 * word's weight when it is matched (wordWeights), and the query's similarity vector (null: no
 * terms), weighed once for every ranking's scoring.
 */
interface Matches {
  items: WordScores;
  /** The item of each row of `items`. */
  rowItems: readonly IndexedItem[];
  words: readonly string[];
  weights: Float64Array;
  query: ReadonlyMap<string, number> | null;
}

/**
 * Each query word's inverse document frequency over the items' texts (BM25's, of the word's
 * own term): what matching it is worth in BM25+'s coordination factor (WordScores.bm25).
 * MiniSearch multiplies the sum of per-word scores by the number of words matched; here each
 * word counts by its inverse document frequency, so a word most items hold (in a conversation,
 * the names its people call each other by) adds its own small score but does not multiply the
 * rest as a rare word does. Measured on LoCoMo (BENCHMARKS.md).
 */
function wordWeights(index: SegmentedIndex, words: readonly string[]): Float64Array {
  const n = index.size;
  return Float64Array.from(words, (w) => {
    const df = Math.max(1, index.frequency('text', w));
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
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
export function rankIndex(index: SegmentedIndex, request: SearchRequest, now: Date, spare = 0, vector?: QueryVector): IndexHit[] {
  const filters = request.filters ?? {};
  const eligible = (item: IndexedItem) => (item.expiresAt === null || item.expiresAt > now.getTime()) && matchesFilters(item, filters, now);
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
function lexicalRankings(index: SegmentedIndex, request: SearchRequest, now: Date, eligible: (item: IndexedItem) => boolean): NamedRanking[] {
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

/**
 * The cosine an item's vector must reach to count in the vector ranking: the vector path's
 * own floor, so a question nothing in memory is about still gets no results. Not calibrated:
 * no embedding model runs on the machines this was built on (docs/search-index.md).
 */
export const MIN_VECTOR_SIMILARITY = 0.3;
/** How deep the vector ranking goes (the score ranking's candidates are as many). */
const VECTOR_CANDIDATES = 50;

/**
 * The served, eligible items with a vector of the query's model, by cosine with the query's
 * vector (at least MIN_VECTOR_SIMILARITY), best first. Items without one (the overlay's, not yet
 * compacted; those folded before the stage embedded) are not in it: they rank lexically only.
 */
function vectorRanking(index: SegmentedIndex, vector: QueryVector, eligible: (item: IndexedItem) => boolean): ScoredHit[] {
  const q = unit(vector.values);
  const near = index.segments.flatMap((s, si) =>
    comparable(s.embeddings, vector) ? nearest(s.embeddings as SegmentEmbeddings, q, MIN_VECTOR_SIMILARITY).map(([doc, cos]) => ({ segment: si, doc, cos })) : [],
  );
  near.sort((a, b) => b.cos - a.cos || a.segment - b.segment || a.doc - b.doc);
  const out: ScoredHit[] = [];
  for (const { segment, doc, cos } of near) {
    if (out.length >= VECTOR_CANDIDATES) break;
    const item = (index.segments[segment] as SearchSegment).item(doc);
    if (index.isHidden(segment, doc) || !eligible(item)) continue;
    out.push({ segment, doc, item, relevance: round(cos), similarity: round(cos), score: round(cos) });
  }
  return out;
}

/** A ranked item, its BM25+ (per query word), and the items whose words it is scored by (itself, or a turn's window). */
interface Candidate {
  segment: number;
  doc: number;
  score: number;
  perTerm: ReadonlyMap<string, number>;
  members?: ReadonlyArray<{ segment: number; doc: number }> | undefined;
}

/** Each candidate's relevance, similarity and score (the blend of relevance, quality and recency); the best BM25 comes first. */
function scoreCandidates(index: SegmentedIndex, candidates: readonly Candidate[], query: ReadonlyMap<string, number> | null, now: Date): ScoredHit[] {
  const best = candidates[0]?.score ?? 0;
  return candidates.map(({ segment, doc, score, perTerm, members }) => {
    const item = (index.segments[segment] as SearchSegment).item(doc);
    const tf = new Map<string, number>();
    let length = 0;
    for (const m of members ?? [{ segment, doc }]) {
      const s = index.segments[m.segment] as SearchSegment;
      const v = s.vectorOf(m.doc);
      length += v.length;
      v.terms.forEach((t, i) => {
        const term = s.terms[t] ?? '';
        tf.set(term, (tf.get(term) ?? 0) + (v.tfs[i] ?? 0));
      });
    }
    const similarity = query && length > 0 ? cosine(query, index.weigh(tf, length)) : 0;
    const relevance = 0.5 * (best > 0 ? score / best : 0) + 0.5 * similarity;
    const blend = blendOf(item, now).factor;
    return { segment, doc, item, relevance: round(relevance), similarity: round(similarity), score: round(relevance * blend), bm25: score, perTerm, members };
  });
}

const bestFirst = (a: IndexHit, b: IndexHit): number => b.score - a.score || a.item.id.localeCompare(b.item.id);

/**
 * A hit as a ranking scored it: where it is, and (lexical rankings) its BM25+ and per-word
 * scores, the items whose words scored it, the question turn it answers (answerRanking).
 */
type ScoredHit = IndexHit & {
  segment: number;
  doc: number;
  bm25?: number;
  perTerm?: ReadonlyMap<string, number>;
  members?: ReadonlyArray<{ segment: number; doc: number }> | undefined;
  answers?: string;
};
/** Hits best first; a place may be empty (the answer ranking keeps its questions' places). */
type Ranking = ReadonlyArray<ScoredHit | undefined>;
interface NamedRanking {
  name: RankingName;
  hits: Ranking;
}
/** Builds a fused hit's explanation from its places in the rankings and its fused value. */
type Explainer = (places: readonly Place[], fused: number, hit: ScoredHit) => SearchExplain;

/** The explanations of an index's hits: the blend the lexical scores used, and members named by id. */
function explainer(index: SegmentedIndex, now: Date): Explainer {
  const idOf = (at: { segment: number; doc: number }) => (index.segments[at.segment] as SearchSegment).columns.ids[at.doc] ?? '';
  return (places, fused, hit) => explanation(places, fused, blendOf(hit.item, now), idOf);
}

/** Reciprocal rank fusion's constant (Cormack et al. use 60; 10 lets each ranking's first few lead). */
export const FUSION_K = 10;
/**
 * The rankings as one, by reciprocal rank fusion: an item's 1/(k + rank) summed over the
 * rankings that hold it (ties: the higher score, then the id). The sum, over its largest
 * (first in every ranking), is the hit's score: results are best first by score, as the API promises.
 */
function fuse(rankings: readonly NamedRanking[], explain?: Explainer): IndexHit[] {
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

/** An item the answer, window and summary rankings treat as a turn of a conversation: one source turn, in a session. */
const isTurn = (item: IndexedItem): boolean => item.kind === 'turn' && item.sessionId !== null && item.sourceTurns.length === 1;

/** The served turn `offset` turns from `item` in the same session, if eligible. */
function neighbour(index: SegmentedIndex, item: IndexedItem, offset: number, eligible: (item: IndexedItem) => boolean): { segment: number; doc: number; item: IndexedItem } | undefined {
  const at = index.locate(item.userId, `turn:${(item.sourceTurns[0] ?? 0) + offset}`);
  const next = at && (index.segments[at.segment] as SearchSegment).item(at.doc);
  return at && next && isTurn(next) && next.sessionId === item.sessionId && eligible(next) ? { ...at, item: next } : undefined;
}

/**
 * The summaries ranked by the turns they cover: per query word, the best score of a covered
 * turn matching it, then BM25+'s sum times the words matched; the similarity over those turns'
 * words. So a question whose answer is spread over a conversation ("what activities has she
 * done with her family?") finds the summaries of the sessions its turns are in, each of which
 * stands for all of that session's turns (the multi-hop lever; BENCHMARKS.md).
 */
function summaryRanking(index: SegmentedIndex, matches: Matches, eligible: (item: IndexedItem) => boolean, now: Date): ScoredHit[] {
  const summaries = new WordScores(matches.items.width, true);
  const rowOf = new Map<number, number>();
  for (let m = 0; m < matches.items.size; m++) {
    const item = matches.rowItems[m] as IndexedItem;
    if (!isTurn(item)) continue;
    for (const at of summariesCovering(index, item, eligible)) {
      const key = at.segment * 2 ** 26 + at.doc;
      let row = rowOf.get(key);
      if (row === undefined) {
        row = summaries.add(at.segment, at.doc);
        rowOf.set(key, row);
      }
      summaries.merge(row, matches.items, m, true);
    }
  }
  return bestGroups(index, matches, summaries, null, SUMMARY_CANDIDATES, now);
}

/** How many summaries the summary ranking scores. */
const SUMMARY_CANDIDATES = 50;

/** The served, eligible summaries of the turn's owner that cover it, in every segment. */
function summariesCovering(index: SegmentedIndex, turn: IndexedItem, eligible: (item: IndexedItem) => boolean): Array<{ segment: number; doc: number }> {
  return index.segments.flatMap((s, segment) =>
    s.summariesCovering(turn.sourceTurns[0] ?? 0).flatMap((doc) => {
      if (index.isHidden(segment, doc)) return [];
      const summary = s.item(doc);
      return summary.userId === turn.userId && eligible(summary) ? [{ segment, doc }] : [];
    }),
  );
}

/** How many items the time ranking scores. */
const TIME_CANDIDATES = 50;

/**
 * The matching items written in the window the query names (query-time.ts), by BM25+: so
 * "what did she start on 3 June, 2023?" prefers what was said that day.
 */
function timeRanking(index: SegmentedIndex, matches: Matches, window: TimeWindow, now: Date): ScoredHit[] {
  const within: number[] = [];
  for (let m = 0; m < matches.items.size; m++) {
    const at = (index.segments[matches.items.segmentOf(m)] as SearchSegment).columns.createdAt[matches.items.docOf(m)] ?? 0;
    if (at >= window.from && at < window.to) within.push(m);
  }
  return bestGroups(index, matches, matches.items, within, TIME_CANDIDATES, now);
}

/** How many windows the window ranking scores (the score ranking's candidates are as many). */
const WINDOW_CANDIDATES = 50;

/**
 * The items ranked as if each turn were written together with the turns either side of it in
 * its session (its window): per query word, the scores of the window's turns summed, then
 * BM25+'s sum times the words matched; the similarity over the window's words. So a question
 * whose words are spread over an exchange ("what did she answer when asked about her style?")
 * finds each turn of it, and an answer with none of the question's words is found by the
 * question next to it. Other items are their own window. Measured on LoCoMo (BENCHMARKS.md).
 */
function windowRanking(index: SegmentedIndex, matches: Matches, eligible: (item: IndexedItem) => boolean, now: Date): ScoredHit[] {
  const { items } = matches;
  const windows = new WordScores(items.width, true, Math.max(256, items.size));
  // Per segment, the row of the window centred on each item (-1: none yet).
  const rows = index.segments.map((s) => new Int32Array(s.size).fill(-1));
  const count = (m: number, segment: number, doc: number) => {
    const rowOf = rows[segment] as Int32Array;
    let row = rowOf[doc] ?? -1;
    if (row < 0) {
      row = windows.add(segment, doc);
      rowOf[doc] = row;
    }
    windows.merge(row, items, m);
  };
  for (let m = 0; m < items.size; m++) {
    const item = matches.rowItems[m] as IndexedItem;
    count(m, items.segmentOf(m), items.docOf(m));
    if (!isTurn(item)) continue;
    // A matching turn counts in its own window and in its neighbours' (it is their next or previous turn).
    for (const c of [neighbour(index, item, -1, eligible), neighbour(index, item, 1, eligible)]) if (c) count(m, c.segment, c.doc);
  }
  return bestGroups(index, matches, windows, null, WINDOW_CANDIDATES, now);
}

/**
 * A ranking of items each scored by a group of matched items' words (itself, a turn's window,
 * a summary's covered turns): the `limit` best by BM25+ of the group's per-word scores, then
 * scored (similarity over the members' words), best first.
 */
function bestGroups(index: SegmentedIndex, matches: Matches, table: WordScores, rows: readonly number[] | null, limit: number, now: Date): ScoredHit[] {
  return scoreCandidates(index, topCandidates(matches, table, rows, limit), matches.query, now).sort(bestFirst);
}

/**
 * The `limit` rows of a table (or of these of its rows) with the highest BM25+, highest first
 * (ties in row order), as candidates; a group's members are rows of the matches' table.
 */
function topCandidates(matches: Matches, table: WordScores, rows: readonly number[] | null, limit: number): Candidate[] {
  const rowAt = (i: number) => (rows ? (rows[i] ?? 0) : i);
  const bm25 = new Float64Array(rows ? rows.length : table.size);
  for (let i = 0; i < bm25.length; i++) bm25[i] = table.bm25(rowAt(i), matches.weights);
  return topPositions(bm25, limit).map((i) => {
    const row = rowAt(i);
    const members = table.membersOf(row)?.map((m) => ({ segment: matches.items.segmentOf(m), doc: matches.items.docOf(m) }));
    return { segment: table.segmentOf(row), doc: table.docOf(row), score: bm25[i] ?? 0, perTerm: table.perTerm(row, matches.words), members };
  });
}

/**
 * The answers: for each turn of the score ranking whose reply asks a question (IndexedItem.asks),
 * the session's next turn, at the place its question holds in the score ranking (the other
 * places empty). In a conversation the user's next message answers what the agent asked,
 * whatever its own words ("Contemporary, it's so expressive" after "What's your favourite
 * style?"), so an answer ranks where the question does. On LoCoMo it measured better than the context
 * ranking it replaced (every turn scored with the turn before it).
 */
function answerRanking(index: SegmentedIndex, byScore: readonly ScoredHit[], eligible: (item: IndexedItem) => boolean): Ranking {
  return byScore.map((hit) => {
    const next = hit.item.asks && isTurn(hit.item) ? neighbour(index, hit.item, 1, eligible) : undefined;
    return next && { ...next, relevance: hit.relevance, similarity: hit.similarity, score: hit.score, answers: hit.item.id };
  });
}

/** A one-segment index over these items (tests, benchmarks and small corpora held in memory). */
export function indexOf(items: readonly MemoryItem[]): SegmentedIndex {
  return new SegmentedIndex([{ segment: segmentOf(items.filter((i) => !i.deleted)) }]);
}

/** A segment over these items, in this order, with their embedding vectors (in the same order) if given. */
export function segmentOf(items: readonly MemoryItem[], embeddings?: SegmentEmbeddings): SearchSegment {
  return SearchSegment.build(
    items.map((item) => ({ item: indexedItem(item), title: item.title, text: item.text })),
    embeddings,
  );
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
