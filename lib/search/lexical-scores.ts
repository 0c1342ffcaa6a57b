/**
 * BM25+ over a search index's segments (computed here, not by MiniSearch, because the segments
 * are not MiniSearch indexes): each matching item's score per query word, the words' weights,
 * the best candidates of a table of scores, and each candidate's relevance, similarity and
 * score, blended with quality and recency.
 */
import { cosine } from '../knowledge/knowledge-search.js';
import type { IndexedItem } from './indexed-item.js';
import { bestFirst, type ScoredHit } from './rank-fusion.js';
import { blendOf, round } from './search-blend.js';
import { FIELDS, type SearchSegment } from './search-segment.js';
import type { SearchSegments } from './search-segments.js';
import { topPositions, WordScores } from './word-scores.js';

/** MiniSearch's BM25+ parameters (its defaults). */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/**
 * Every item matching a query word and passing `eligible`, with its score per word (each of
 * the word's terms scored, summed under its own word: queryTermGroups), a row each in
 * first-matched order; and the query's distinct words, in order, that the rows' words index.
 */
export function termScores(
  index: SearchSegments,
  groups: ReadonlyArray<readonly string[]>,
  eligible: (item: IndexedItem) => boolean,
): { table: WordScores; words: string[]; rowItems: IndexedItem[] } {
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
          table.addScore(
            row,
            word,
            idf * (BM25.d + (tf * (BM25.k + 1)) / (tf + BM25.k * (1 - BM25.b + (BM25.b * (lengths[doc] ?? 0)) / avg))),
          );
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
export interface Matches {
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
export function wordWeights(index: SearchSegments, words: readonly string[]): Float64Array {
  const n = index.size;
  return Float64Array.from(words, (w) => {
    const df = Math.max(1, index.frequency('text', w));
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
}

/** A ranked item, its BM25+ (per query word), and the items whose words it is scored by (itself, or a turn's window). */
export interface Candidate {
  segment: number;
  doc: number;
  score: number;
  perTerm: ReadonlyMap<string, number>;
  members?: ReadonlyArray<{ segment: number; doc: number }> | undefined;
}

/** Each candidate's relevance, similarity and score (the blend of relevance, quality and recency); the best BM25 comes first. */
export function scoreCandidates(
  index: SearchSegments,
  candidates: readonly Candidate[],
  query: ReadonlyMap<string, number> | null,
  now: Date,
): ScoredHit[] {
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
    return {
      segment,
      doc,
      item,
      relevance: round(relevance),
      similarity: round(similarity),
      score: round(relevance * blend),
      bm25: score,
      perTerm,
      members,
    };
  });
}

/**
 * A ranking of items each scored by a group of matched items' words (itself, a turn's window,
 * a summary's covered turns): the `limit` best by BM25+ of the group's per-word scores, then
 * scored (similarity over the members' words), best first.
 */
export function bestGroups(
  index: SearchSegments,
  matches: Matches,
  table: WordScores,
  rows: readonly number[] | null,
  limit: number,
  now: Date,
): ScoredHit[] {
  return scoreCandidates(index, topCandidates(matches, table, rows, limit), matches.query, now).sort(bestFirst);
}

/**
 * The `limit` rows of a table (or of these of its rows) with the highest BM25+, highest first
 * (ties in row order), as candidates; a group's members are rows of the matches' table.
 */
export function topCandidates(
  matches: Matches,
  table: WordScores,
  rows: readonly number[] | null,
  limit: number,
): Candidate[] {
  const rowAt = (i: number) => (rows ? (rows[i] ?? 0) : i);
  const bm25 = new Float64Array(rows ? rows.length : table.size);
  for (let i = 0; i < bm25.length; i++) bm25[i] = table.bm25(rowAt(i), matches.weights);
  return topPositions(bm25, limit).map((i) => {
    const row = rowAt(i);
    const members = table
      .membersOf(row)
      ?.map((m) => ({ segment: matches.items.segmentOf(m), doc: matches.items.docOf(m) }));
    return {
      segment: table.segmentOf(row),
      doc: table.docOf(row),
      score: bm25[i] ?? 0,
      perTerm: table.perTerm(row, matches.words),
      members,
    };
  });
}
