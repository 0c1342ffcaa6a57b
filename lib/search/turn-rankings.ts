/**
 * The rankings that read a conversation's turns together: the answers to the questions a
 * reply asked (answerRanking), each turn with its neighbours (windowRanking), and summaries
 * by the turns they cover (summaryRanking). Measured on LoCoMo (BENCHMARKS.md).
 */
import type { IndexedItem } from './indexed-item.js';
import { bestGroups, type Matches } from './lexical-scores.js';
import type { Ranking, ScoredHit } from './rank-fusion.js';
import type { SearchSegment } from './search-segment.js';
import type { SearchSegments } from './search-segments.js';
import { WordScores } from './word-scores.js';

/** An item the answer, window and summary rankings treat as a turn of a conversation: one source turn, in a session. */
const isTurn = (item: IndexedItem): boolean =>
  item.kind === 'turn' && item.sessionId !== null && item.sourceTurns.length === 1;

/** The served turn `offset` turns from `item` in the same session, if eligible. */
function neighbour(
  index: SearchSegments,
  item: IndexedItem,
  offset: number,
  eligible: (item: IndexedItem) => boolean,
): { segment: number; doc: number; item: IndexedItem } | undefined {
  const at = index.locate(item.userId, `turn:${(item.sourceTurns[0] ?? 0) + offset}`);
  const next = at && (index.segments[at.segment] as SearchSegment).item(at.doc);
  return at && next && isTurn(next) && next.sessionId === item.sessionId && eligible(next)
    ? { ...at, item: next }
    : undefined;
}

/**
 * The summaries ranked by the turns they cover: per query word, the best score of a covered
 * turn matching it, then BM25+'s sum times the words matched; the similarity over those turns'
 * words. So a question whose answer is spread over a conversation ("what activities has she
 * done with her family?") finds the summaries of the sessions its turns are in, each of which
 * stands for all of that session's turns (the multi-hop lever; BENCHMARKS.md).
 */
export function summaryRanking(
  index: SearchSegments,
  matches: Matches,
  eligible: (item: IndexedItem) => boolean,
  now: Date,
): ScoredHit[] {
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
function summariesCovering(
  index: SearchSegments,
  turn: IndexedItem,
  eligible: (item: IndexedItem) => boolean,
): Array<{ segment: number; doc: number }> {
  return index.segments.flatMap((s, segment) =>
    s.summariesCovering(turn.sourceTurns[0] ?? 0).flatMap((doc) => {
      if (index.isHidden(segment, doc)) return [];
      const summary = s.item(doc);
      return summary.userId === turn.userId && eligible(summary) ? [{ segment, doc }] : [];
    }),
  );
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
export function windowRanking(
  index: SearchSegments,
  matches: Matches,
  eligible: (item: IndexedItem) => boolean,
  now: Date,
): ScoredHit[] {
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
    for (const c of [neighbour(index, item, -1, eligible), neighbour(index, item, 1, eligible)])
      if (c) count(m, c.segment, c.doc);
  }
  return bestGroups(index, matches, windows, null, WINDOW_CANDIDATES, now);
}

/**
 * The answers: for each turn of the score ranking whose reply asks a question (IndexedItem.asks),
 * the session's next turn, at the place its question holds in the score ranking (the other
 * places empty). In a conversation the user's next message answers what the agent asked,
 * whatever its own words ("Contemporary, it's so expressive" after "What's your favourite
 * style?"), so an answer ranks where the question does. On LoCoMo it measured better than the context
 * ranking it replaced (every turn scored with the turn before it).
 */
export function answerRanking(
  index: SearchSegments,
  byScore: readonly ScoredHit[],
  eligible: (item: IndexedItem) => boolean,
): Ranking {
  return byScore.map((hit) => {
    const next = hit.item.asks && isTurn(hit.item) ? neighbour(index, hit.item, 1, eligible) : undefined;
    return (
      next && { ...next, relevance: hit.relevance, similarity: hit.similarity, score: hit.score, answers: hit.item.id }
    );
  });
}
