/**
 * The vector ranking, on a stage that embeds: items by the cosine of their stored embedding
 * vectors with the query's (docs/search-index.md, *Hybrid retrieval*).
 */
import { comparable, nearest, type QueryVector, type SegmentEmbeddings, unit } from './embedding-vectors.js';
import type { IndexedItem } from './indexed-item.js';
import type { ScoredHit } from './rank-fusion.js';
import { round } from './search-blend.js';
import type { SearchSegment } from './search-segment.js';
import type { SearchSegments } from './search-segments.js';

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
export function vectorRanking(
  index: SearchSegments,
  vector: QueryVector,
  eligible: (item: IndexedItem) => boolean,
): ScoredHit[] {
  const q = unit(vector.values);
  const near = index.segments.flatMap((s, si) =>
    comparable(s.embeddings, vector)
      ? nearest(s.embeddings as SegmentEmbeddings, q, MIN_VECTOR_SIMILARITY).map(([doc, cos]) => ({
          segment: si,
          doc,
          cos,
        }))
      : [],
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
