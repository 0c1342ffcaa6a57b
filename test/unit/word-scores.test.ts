/**
 * The search's per-word score tables (lib/search/word-scores.ts): scores summed per word, BM25+
 * over the words matched, members in the order added, and the best positions as a stable sort
 * cut at the limit keeps them, ties included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_WORDS, rankIndex } from '../../lib/search/memory-search.js';
import { indexOf } from '../../lib/search/search-segments.js';
import { topPositions, WordScores } from '../../lib/search/word-scores.js';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';

/** A row's scores summed per word, the words matched in the query's order. */
function expectedRow(entries: ReadonlyArray<readonly [number, number]>): Map<number, number> {
  const m = new Map<number, number>();
  for (let word = 0; word < 6; word++) {
    const scores = entries.filter(([w]) => w === word);
    if (scores.length > 0)
      m.set(
        word,
        scores.reduce((sum, [, score]) => sum + score, 0),
      );
  }
  return m;
}

describe('per-word score tables', () => {
  it('sum each word, and weigh BM25+ by the words matched', () => {
    const entry = fc.tuple(fc.integer({ min: 0, max: 5 }), fc.double({ min: 0.01, max: 20, noNaN: true }));
    fc.assert(
      fc.property(fc.array(fc.array(entry, { maxLength: 12 }), { minLength: 1, maxLength: 300 }), (rows) => {
        const words = ['a', 'b', 'c', 'd', 'e', 'f'];
        const weights = Float64Array.from([0.5, 1.5, 2, 3.25, 0.1, 7]);
        const table = new WordScores(words.length, false, 2);
        for (const entries of rows) {
          const row = table.add(1, table.size);
          for (const [word, score] of entries) table.addScore(row, word, score);
        }
        rows.forEach((entries, row) => {
          const m = expectedRow(entries);
          expect([...table.perTerm(row, words)]).toEqual([...m].map(([w, s]) => [words[w], s]));
          let sum = 0;
          let matched = 0;
          for (const [w, s] of m) {
            sum += s;
            matched += weights[w] ?? 0;
          }
          expect(table.bm25(row, weights)).toBe(sum * matched);
          expect(table.docOf(row)).toBe(row);
        });
      }),
    );
  });

  it('add rows of another table as members, summing or keeping the highest score', () => {
    const matches = new WordScores(3);
    const a = matches.add(0, 7);
    matches.addScore(a, 2, 1);
    matches.addScore(a, 0, 4);
    const b = matches.add(0, 9);
    matches.addScore(b, 0, 1);
    matches.addScore(b, 1, 3);
    const sums = new WordScores(3, true, 1);
    const highs = new WordScores(3, true, 1);
    for (const table of [sums, highs]) {
      table.add(0, 1);
      table.add(0, 2);
    }
    sums.merge(1, matches, b);
    sums.merge(1, matches, a);
    highs.merge(1, matches, b, true);
    highs.merge(1, matches, a, true);
    expect([...sums.perTerm(1, ['x', 'y', 'z'])]).toEqual([
      ['x', 5],
      ['y', 3],
      ['z', 1],
    ]);
    expect([...highs.perTerm(1, ['x', 'y', 'z'])]).toEqual([
      ['x', 4],
      ['y', 3],
      ['z', 1],
    ]);
    expect(sums.membersOf(1)).toEqual([b, a]);
    expect(sums.membersOf(0)).toEqual([]);
    expect(matches.membersOf(a)).toBeUndefined();
  });

  it('keep the best positions as a stable sort cut at the limit does, ties in position order', () => {
    const value = fc.oneof(fc.integer({ min: 0, max: 4 }), fc.double({ min: 0, max: 10, noNaN: true }));
    fc.assert(
      fc.property(fc.array(value, { maxLength: 200 }), fc.integer({ min: 0, max: 60 }), (values, limit) => {
        const sorted = values
          .map((v, i) => ({ v, i }))
          .sort((x, y) => y.v - x.v)
          .slice(0, limit)
          .map((x) => x.i);
        expect(topPositions(Float64Array.from(values), limit)).toEqual(sorted);
      }),
    );
  });

  it("score only a query's first distinct words, so a long query cannot size the tables", () => {
    const now = new Date('2026-06-01T00:00:00Z');
    // Made-up words, one per item: 'zq', then i's two base-26 digits as letters, then 'x'.
    const letter = (n: number) => String.fromCharCode(97 + n);
    const word = (i: number) => `zq${letter(Math.floor(i / 26))}${letter(i % 26)}x`;
    const items = Array.from({ length: 120 }, (_, i) => ({
      ...newTierItem('u', 'long_term', { text: `${word(i)} note`, sourceTurns: [i + 1] }, now),
      id: `mem:${i}`,
    }));
    const words = Array.from({ length: 120 }, (_, i) => word(i));
    const ids = (query: string) => rankIndex(indexOf(items), { query, limit: 200 }, now).map((h) => h.item.id);
    const all = ids(words.join(' '));
    expect(all).toEqual(ids(words.slice(0, MAX_QUERY_WORDS).join(' ')));
    expect(all).toContain(`mem:${MAX_QUERY_WORDS - 1}`);
    expect(all).not.toContain(`mem:${MAX_QUERY_WORDS}`);
  });
});
