/**
 * memory.search's `explain` (search-explain.ts): each result says which of the fused rankings
 * placed it and where, the terms it matched, the turns a window or summary was scored by, the
 * question an answer answers, and the quality and recency blended in — read off the ranking's own
 * computation, and absent (the results otherwise identical) when not asked for.
 */
import { describe, expect, it } from 'vitest';
import { quantise, unit } from '../../lib/search/embedding-vectors.js';
import type { MemoryItem } from '../../lib/items/memory-item.js';
import { rankIndex, type SearchHit, searchMemory } from '../../lib/search/memory-search.js';
import { FUSION_K } from '../../lib/search/rank-fusion.js';
import { indexOf, SearchSegments, segmentOf } from '../../lib/search/search-segments.js';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import type { SearchExplain } from '../../lib/search/search-explain.js';

const now = new Date('2026-03-01T12:00:00Z');
const item = (over: Partial<MemoryItem> & Pick<MemoryItem, 'id' | 'text'>): MemoryItem => ({
  ...newTierItem('u1', 'long_term', { text: over.text }, now),
  ...over,
});
const turn = (n: number, session: string, text: string, createdAt = '2026-02-20T10:00:00.000Z') =>
  item({ id: `turn:${n}`, kind: 'turn', text, sessionId: session, sourceTurns: [n], createdAt });
const summary = (id: string, turns: number[], text: string) =>
  item({ id: `summary:${id}`, kind: 'summary', text, sourceTurns: turns });

const pool = [
  turn(1, 's1', 'I went dancing on Friday\nLovely! What is your favourite style of dance?'),
  turn(2, 's1', 'Contemporary, it is so expressive and graceful'),
  turn(3, 's1', 'we went camping by the river with the kids'),
  turn(4, 's1', 'then a long hike up the ridge'),
  ...Array.from({ length: 10 }, (_, i) => turn(10 + i, `o${i}`, `the weather was grey and the traffic slow, day ${i}`)),
  summary('a', [1, 2, 3, 4], 'A weekend away: three days outdoors and an evening class.'),
  item({
    id: 'mem:q',
    text: 'Her favourite dance style is contemporary',
    quality: 0.9,
    createdAt: '2025-12-01T12:00:00.000Z',
  }),
];
const search = (query: string, explain?: boolean) =>
  searchMemory(pool, { query, limit: 10, ...(explain === undefined ? {} : { explain }) }, now);
const explainOf = (hits: SearchHit[], id: string): SearchExplain => {
  const e = hits.find((h) => h.item.id === id)?.explain;
  if (!e) throw new Error(`${id} has no explanation in ${hits.map((h) => h.item.id).join(', ')}`);
  return e;
};
const place = (e: SearchExplain, ranking: string) => e.rankings.find((r) => r.ranking === ranking);

describe('search explain', () => {
  it('changes nothing but adding `explain` to each result, and only when asked', () => {
    for (const query of ['favourite style of dance', 'camping hike with the kids', 'grey traffic']) {
      const plain = search(query);
      expect(plain.length).toBeGreaterThan(0);
      expect(plain.some((h) => 'explain' in h)).toBe(false);
      expect(search(query, false)).toEqual(plain);
      const explained = search(query, true);
      expect(explained.map(({ explain: _e, ...h }) => h)).toEqual(plain);
      expect(explained.every((h) => h.explain !== undefined)).toBe(true);
    }
  });

  it('gives each ranking that placed a result its rank, and the fused value the score is made of', () => {
    const hits = search('favourite style of dance', true);
    for (const h of hits) {
      const e = h.explain as SearchExplain;
      expect(e.rankings.length).toBeGreaterThan(0);
      // The fused value is the reciprocal rank fusion of exactly these places.
      expect(e.fused).toBeCloseTo(
        e.rankings.reduce((s, r) => s + 1 / (FUSION_K + r.rank), 0),
        4,
      );
      expect(new Set(e.rankings.map((r) => r.ranking)).size).toBe(e.rankings.length);
    }
    // Scores are the fused values over one shared maximum: their ratios are the fused values'.
    const [a, b] = hits as [SearchHit, SearchHit];
    expect(a.score / b.score).toBeCloseTo((a.explain as SearchExplain).fused / (b.explain as SearchExplain).fused, 2);
    // The first result of the score ranking is its rank 1, with the query terms it matched (stemmed).
    const first = hits.find((h) => place(h.explain as SearchExplain, 'score')?.rank === 1);
    const byScore = place(first?.explain as SearchExplain, 'score');
    expect(byScore?.terms?.length).toBeGreaterThan(0);
    expect(byScore?.terms).toEqual(expect.arrayContaining(['danc']));
    expect(byScore?.bm25).toBeGreaterThan(0);
  });

  it('names the question an answer answers, at that question’s place in the score ranking', () => {
    const hits = search('favourite style of dance', true);
    const answer = place(explainOf(hits, 'turn:2'), 'answer');
    expect(answer).toMatchObject({ answers: 'turn:1' });
    const question = place(explainOf(hits, 'turn:1'), 'score');
    expect(answer?.rank).toBe(question?.rank);
    expect(answer?.score).toBe(question?.score);
    // Turn 2 holds none of the question's words: no ranking matched a term of its own.
    expect(place(explainOf(hits, 'turn:2'), 'score')).toBeUndefined();
  });

  it('shows a summary’s coverage: the matching turns it was scored by', () => {
    const e = explainOf(search('camping hike with the kids', true), 'summary:a');
    const bySummary = place(e, 'summary');
    expect(bySummary?.members?.sort()).toEqual(['turn:3', 'turn:4']);
    expect(bySummary?.terms).toEqual(expect.arrayContaining(['camp', 'hike', 'kid']));
    // A window names the turns whose words it summed.
    const window = place(explainOf(search('camping hike with the kids', true), 'turn:3'), 'window');
    expect(window?.members).toEqual(expect.arrayContaining(['turn:3', 'turn:4']));
  });

  it('gives the quality (trust) and recency each lexical score was blended with', () => {
    const e = explainOf(search('favourite dance style contemporary', true), 'mem:q');
    expect(e.quality).toBe(0.9);
    // Written 90 days before now: three half-lives.
    expect(e.recency).toBeCloseTo(0.125, 3);
    expect(e.blend).toBeCloseTo(0.7 + 0.2 * 0.9 + 0.1 * 0.125, 4);
    const byScore = place(e, 'score');
    expect(byScore?.score).toBeCloseTo((byScore?.relevance ?? 0) * e.blend, 3);
  });

  it('places a result in the vector ranking by its cosine', () => {
    const dims = 4;
    const items = [
      item({ id: 'mem:dog', text: 'We adopted a puppy from the shelter' }),
      item({ id: 'mem:car', text: 'The car needs new tyres' }),
    ];
    const vec = (axis: number) =>
      unit(Float32Array.from({ length: dims }, (_, i) => (i === axis ? 1 : i === dims - 1 ? 0.1 : 0)));
    const index = new SearchSegments([{ segment: segmentOf(items, quantise('m', dims, [vec(0), vec(1)])) }]);
    const hits = rankIndex(index, { query: 'my canine companion', limit: 5, explain: true }, now, 0, {
      modelId: 'm',
      values: vec(0),
    });
    expect(hits.map((h) => h.item.id)).toEqual(['mem:dog']);
    const byVector = place(hits[0]?.explain as SearchExplain, 'vector');
    expect(byVector).toMatchObject({ rank: 1 });
    expect(byVector?.similarity).toBeGreaterThan(0.9);
    expect(byVector?.terms).toBeUndefined();
    // Not asked: the same hits without explanations.
    expect(
      rankIndex(index, { query: 'my canine companion', limit: 5 }, now, 0, { modelId: 'm', values: vec(0) }),
    ).toEqual(hits.map(({ explain: _e, ...h }) => h));
    expect(rankIndex(indexOf(items), { query: 'my canine companion', limit: 5, explain: true }, now)).toEqual([]);
  });
});
