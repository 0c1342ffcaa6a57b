/**
 * The time ranking: when the query names a time (query-time.ts), the matching items written then.
 */
import { bestGroups, type Matches } from './lexical-scores.js';
import type { TimeWindow } from './query-time.js';
import type { ScoredHit } from './rank-fusion.js';
import type { SearchSegment } from './search-segment.js';
import type { SearchSegments } from './search-segments.js';

/** How many items the time ranking scores. */
const TIME_CANDIDATES = 50;

/**
 * The matching items written in the window the query names (query-time.ts), by BM25+: so
 * "what did she start on 3 June, 2023?" prefers what was said that day.
 */
export function timeRanking(index: SearchSegments, matches: Matches, window: TimeWindow, now: Date): ScoredHit[] {
  const within: number[] = [];
  for (let m = 0; m < matches.items.size; m++) {
    const at =
      (index.segments[matches.items.segmentOf(m)] as SearchSegment).columns.createdAt[matches.items.docOf(m)] ?? 0;
    if (at >= window.from && at < window.to) within.push(m);
  }
  return bestGroups(index, matches, matches.items, within, TIME_CANDIDATES, now);
}
