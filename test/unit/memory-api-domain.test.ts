/** The memory API's domain rules: access, the commit rule, tiers, scope trust, unified search. */
import { describe, expect, it } from 'vitest';
import { authorize, principalFromClaims } from '../../lib/memory-api/access.js';
import { commitDecision } from '../../lib/trust/memory-candidates.js';
import { isLive, itemIdForPath, type MemoryItem, mergeAttributes } from '../../lib/items/memory-item.js';
import { searchMemory } from '../../lib/search/memory-search.js';
import { demoteTier, newTierItem, promoteTier } from '../../lib/tiers/memory-tiers.js';
import { applyOutcome } from '../../lib/trust/scope-trust.js';

const now = new Date('2026-03-01T12:00:00Z');
const item = (over: Partial<MemoryItem> & Pick<MemoryItem, 'id' | 'text'>): MemoryItem => ({
  ...newTierItem('u1', 'long_term', { text: over.text }, now),
  ...over,
});

describe('access', () => {
  it('reads claims of Cognito, of the local tokens and of API Gateway’s flattened arrays', () => {
    expect(principalFromClaims({ sub: 'a', 'cognito:groups': '[readers memory-admin]' })).toEqual({
      subject: 'a',
      users: '*',
      admin: true,
    });
    expect(principalFromClaims({ sub: 'b', memory_users: 'u1 u2' })).toEqual({
      subject: 'b',
      users: ['u1', 'u2'],
      admin: false,
    });
    expect(principalFromClaims({ sub: 'c', username: 'u9' })).toEqual({ subject: 'c', users: ['u9'], admin: false });
    expect(principalFromClaims({})).toBeNull();
    expect(principalFromClaims(undefined)).toBeNull();
  });

  it('lets a user act on its own users, read GLOBAL, and write GLOBAL only as an administrator', () => {
    const user = { subject: 'b', users: ['u1'], admin: false } as const;
    expect(authorize(user, 'u1', 'write').allowed).toBe(true);
    expect(authorize(user, 'u2', 'read').allowed).toBe(false);
    expect(authorize(user, 'GLOBAL', 'read').allowed).toBe(true);
    expect(authorize(user, 'GLOBAL', 'write')).toEqual({
      allowed: false,
      reason: 'GLOBAL memory is read-only to users',
    });
    expect(authorize({ subject: 'x', users: '*', admin: false }, 'GLOBAL', 'write').allowed).toBe(false);
    expect(authorize({ subject: 'a', users: '*', admin: true }, 'GLOBAL', 'write').allowed).toBe(true);
  });
});

describe('the commit rule (req R-CAND-1)', () => {
  it('commits on APPROVE only; the stored outcome wins over the claimed one', () => {
    expect(commitDecision(undefined, 'APPROVE')).toEqual({ commit: true });
    expect(commitDecision('APPROVE', undefined)).toEqual({ commit: true });
    for (const v of ['REVISE', 'RETRY', 'FAIL'] as const) expect(commitDecision(undefined, v).commit).toBe(false);
    expect(commitDecision('FAIL', 'APPROVE').commit).toBe(false);
    expect(commitDecision(undefined, undefined).commit).toBe(false);
  });
});

describe('tiers (req R-TIER)', () => {
  it('expire by type, promote up to long-term (no TTL) and demote back with a fresh TTL', () => {
    const e = newTierItem('u1', 'ephemeral', { text: 'looking at a kayak' }, now);
    expect(e).toMatchObject({
      tier: 'ephemeral',
      status: 'ephemeral',
      expiresAt: '2026-03-01T13:00:00.000Z',
      scope: 'new',
    });
    const perception = newTierItem('u1', 'short_term', { text: 'frame 12', type: 'perception' }, now);
    expect(perception.expiresAt).toBe('2026-03-01T12:15:00.000Z');
    const up = promoteTier(e, now);
    const top = up.ok ? promoteTier(up.item, now) : up;
    expect(top).toMatchObject({
      ok: true,
      from: 'short_term',
      to: 'long_term',
      item: { status: 'canonical', expiresAt: null },
    });
    if (!top.ok) return;
    expect(promoteTier(top.item, now).ok).toBe(false);
    // Req R-TIER-1: a short-term entry's TTL defaults to 7 days.
    expect(demoteTier(top.item, now)).toMatchObject({
      ok: true,
      to: 'short_term',
      item: { expiresAt: '2026-03-08T12:00:00.000Z' },
    });
    expect(demoteTier(e, now).ok).toBe(false);
  });

  it('derives the same id for the same entry (a retried create is the same item)', () => {
    expect(newTierItem('u1', 'short_term', { text: 'x' }, now).id).toBe(
      newTierItem('u1', 'short_term', { text: 'x' }, new Date(0)).id,
    );
    expect(newTierItem('u1', 'short_term', { text: 'x' }, now).id).not.toBe(
      newTierItem('u2', 'short_term', { text: 'x' }, now).id,
    );
  });
});

describe('scope trust (req R-SCOPE)', () => {
  it('APPROVE raises trust to USER scope, RETRY and FAIL lower it back to NEW, REVISE does nothing', () => {
    let i: MemoryItem = {
      ...item({ id: 'mem:a', text: 'x' }),
      scope: 'new',
      quality: 0.5,
      expiresAt: '2026-03-31T12:00:00.000Z',
    };
    expect(applyOutcome(i, 'REVISE', now).item.quality).toBe(0.5);
    i = applyOutcome(i, 'APPROVE', now).item;
    const c = applyOutcome(i, 'APPROVE', now);
    expect(c).toMatchObject({ trustTo: 0.7, scopeFrom: 'new', scopeTo: 'user', item: { expiresAt: null } });
    const d = applyOutcome(applyOutcome(c.item, 'RETRY', now).item, 'FAIL', now); // 0.7 → 0.6 → 0.4: still USER
    expect(d.scopeTo).toBe('user');
    const e = applyOutcome(d.item, 'RETRY', now);
    expect(e).toMatchObject({ trustTo: 0.3, scopeFrom: 'user', scopeTo: 'new' });
    expect(e.item.expiresAt).toBe('2026-03-31T12:00:00.000Z');
    expect(applyOutcome({ ...c.item, scope: 'global', quality: 0.65 }, 'FAIL', now).scopeTo).toBe('user');
  });
});

describe('unified search (req R-DOC-3)', () => {
  const items = [
    item({ id: 'mem:1', text: 'Caroline went to an LGBTQ support group', quality: 0.9 }),
    item({ id: 'mem:2', text: 'Melanie paints sunsets with her kids', quality: 0.9 }),
    item({ id: 'mem:3', text: 'Caroline support group transgender stories', quality: 0.2 }),
    item({ id: 'mem:4', text: 'a support group was mentioned', deleted: true }),
    item({ id: 'mem:5', text: 'support group at noon', expiresAt: '2026-03-01T11:00:00.000Z' }),
  ];

  it('ranks by relevance blended with quality, and never returns deleted or expired items', () => {
    const hits = searchMemory(items, { query: 'Caroline support group', limit: 10 }, now);
    expect(hits.map((h) => h.item.id)).toEqual(['mem:1', 'mem:3']);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 1);
  });

  it('leaves out an item whose source turns better results already stand for', () => {
    const pool = [
      item({ id: 'mem:a', text: 'Caroline support group on Tuesday', sourceTurns: [3, 4] }),
      item({ id: 'mem:b', text: 'support group', sourceTurns: [3] }),
      item({ id: 'mem:c', text: 'Caroline went to a support group', sourceTurns: [5] }),
    ];
    expect(
      searchMemory(pool, { query: 'Caroline support group Tuesday', limit: 10 }, now).map((h) => h.item.id),
    ).toEqual(['mem:a', 'mem:c']);
  });

  it('matches words by their stems, so a question in another tense still finds the item', () => {
    const pool = [
      item({ id: 'mem:r', text: 'Caroline researched adoption agencies' }),
      item({ id: 'mem:s', text: 'Melanie paints sunsets' }),
    ];
    expect(
      searchMemory(pool, { query: 'What is Caroline researching about adopting?', limit: 10 }, now).map(
        (h) => h.item.id,
      ),
    ).toEqual(['mem:r']);
    expect(searchMemory(pool, { query: 'painting', limit: 10 }, now).map((h) => h.item.id)).toEqual(['mem:s']);
  });

  it('ranks the answer to a question a reply asked where the question ranks, and never across sessions', () => {
    const turn = (n: number, session: string, text: string) =>
      item({ id: `turn:${n}`, kind: 'turn', text, sessionId: session, sourceTurns: [n] });
    const query = 'What is your favourite style of dance?';
    const asked = turn(1, 's1', 'I went dancing on Friday\nLovely! What is your favourite style of dance?');
    const pool = [
      asked,
      turn(2, 's1', 'Contemporary, it is so expressive and graceful'),
      ...Array.from({ length: 12 }, (_, i) =>
        turn(10 + i, `s2-${i}`, `another talk about dance number ${i}, my favourite pastime`),
      ),
      // It asks too, but the turn numbered after it is in another session.
      turn(30, 's3', 'Which style of dance is your favourite, do you think?'),
      turn(31, 's4', 'Ballet, for its discipline'),
    ];
    const hits = (p: typeof pool) => searchMemory(p, { query, limit: 5 }, now);
    const ids = hits(pool).map((h) => h.item.id);
    // Its own words share nothing with the question: it ranks right after the question it answers.
    expect(ids.indexOf('turn:2')).toBe(ids.indexOf('turn:1') + 1);
    // Turn 30 asks too, but the turn numbered after it is in another session.
    expect(ids).not.toContain('turn:31');
    // A reply that does not ask gives the next turn no answer's place: only its window ranks it, lower.
    const told = { ...asked, text: 'I went dancing on Friday\nLovely! Tell me your favourite style of dance.' };
    const scoreOf = (p: typeof pool) => hits(p).find((h) => h.item.id === 'turn:2')?.score ?? 0;
    expect(scoreOf(pool.map((i) => (i === asked ? told : i)))).toBeLessThan(scoreOf(pool));
  });

  it('ranks a turn by another form of an irregular word of the question (buy / bought)', () => {
    const turn = (n: number, session: string, text: string) =>
      item({ id: `turn:${n}`, kind: 'turn', text, sessionId: session, sourceTurns: [n] });
    const pool = [
      turn(1, 's1', 'I bought a brass lamp at the flea market on Sunday'),
      turn(2, 's2', 'the flea market, the flea market again'),
      ...Array.from({ length: 8 }, (_, i) => turn(10 + i, `s${3 + i}`, `a lamp in the hall, day ${i}`)),
    ];
    const best = searchMemory(pool, { query: 'What did she buy at the flea market?', limit: 3 }, now).map(
      (h) => h.item.id,
    );
    // Turn 2 says flea market more often and in fewer words; turn 1 also holds the question's buy, as bought.
    expect(best[0]).toBe('turn:1');
  });

  it('ranks a turn by its window: the words of the turns either side of it in its session', () => {
    const turn = (n: number, session: string, text: string) =>
      item({ id: `turn:${n}`, kind: 'turn', text, sessionId: session, sourceTurns: [n] });
    const pool = [
      turn(1, 's1', 'good morning, how was the weekend'),
      turn(2, 's1', 'we caught three trout'),
      turn(3, 's1', 'up at the lake by the old cabin'),
      ...Array.from({ length: 6 }, (_, i) => turn(10 + i, `t${i}`, `trout again, trout for dinner ${i}`)),
      ...Array.from({ length: 6 }, (_, i) => turn(20 + i, `l${i}`, `the lake, the lake at noon ${i}`)),
      // The same words, shorter (so each alone scores higher), in two sessions: no window holds both.
      turn(40, 'x1', 'three trout'),
      turn(41, 'x2', 'at the lake by the cabin'),
    ];
    const ids = searchMemory(pool, { query: 'trout at the lake', limit: 20 }, now).map((h) => h.item.id);
    const at = (id: string) => (ids.includes(id) ? ids.indexOf(id) : ids.length);
    expect(at('turn:2')).toBeLessThan(at('turn:40'));
    expect(at('turn:3')).toBeLessThan(at('turn:41'));
  });

  it('ranks first, among equals, what was said on the day a question names (time)', () => {
    const turn = (n: number, day: string, text: string) =>
      item({
        id: `turn:${n}`,
        kind: 'turn',
        text,
        sessionId: `s${n}`,
        sourceTurns: [n],
        createdAt: `${day}T10:00:00.000Z`,
      });
    const pool = [
      turn(1, '2025-05-02', 'I started a pottery class'),
      turn(2, '2025-06-03', 'I started a pottery class'),
      turn(3, '2025-07-09', 'I started a pottery class'),
    ];
    const first = (query: string) => searchMemory(pool, { query, limit: 3 }, now)[0]?.item.id;
    expect(first('What class did I start on 3 June, 2025?')).toBe('turn:2');
    expect(first('What class did I start in July 2025?')).toBe('turn:3');
    // No day named: the three tie on words, and the newest leads (recency).
    expect(first('What class did I start?')).toBe('turn:3');
  });

  it('ranks a summary by the turns it covers, so one hit stands for a spread-out answer (multi-hop)', () => {
    const turn = (n: number, session: string, text: string) =>
      item({ id: `turn:${n}`, kind: 'turn', text, sessionId: session, sourceTurns: [n] });
    const summary = (id: string, turns: number[], text: string) =>
      item({ id: `summary:${id}`, kind: 'summary', text, sourceTurns: turns });
    const pool = [
      turn(1, 's1', 'we went camping by the river with the kids'),
      turn(2, 's1', 'then a long hike up the ridge'),
      turn(3, 's1', 'and pottery on the last evening'),
      turn(4, 's1', 'we drove home on Sunday night'),
      ...Array.from({ length: 8 }, (_, i) =>
        turn(10 + i, `o${i}`, `the weather was grey and the traffic slow, day ${i}`),
      ),
      // Its own words share nothing with the question: only the turns it covers do.
      summary('a', [1, 2, 3, 4], 'A weekend away: three days outdoors and an evening class.'),
      summary('b', [10, 11], 'Grey weather and slow traffic.'),
    ];
    const ids = searchMemory(pool, { query: 'camping hike with the kids', limit: 10 }, now).map((h) => h.item.id);
    expect(ids).toContain('summary:a');
    expect(ids).not.toContain('summary:b');
    // It stands for turn 4 too, which no better hit stands for. Without the turns it covers, nothing finds it.
    expect(
      searchMemory(
        pool.filter((i) => i.kind !== 'turn' || !i.sourceTurns.some((t) => t <= 3)),
        { query: 'camping hike with the kids', limit: 10 },
        now,
      ),
    ).toEqual([]);
  });

  it('counts a matched word by its rarity: a word most items hold does not multiply the rest', () => {
    const turn = (n: number, text: string) =>
      item({ id: `turn:${n}`, kind: 'turn', text, sessionId: `s${n}`, sourceTurns: [n] });
    const pool = [
      turn(1, 'the sunset over the lake was orange and gold'),
      turn(2, 'Anna, your painting is lovely'),
      ...Array.from({ length: 8 }, (_, i) => turn(10 + i, `Thanks Anna, see you on day ${i}`)),
      ...Array.from({ length: 2 }, (_, i) => turn(20 + i, `a painting class on day ${i}`)),
    ];
    // Turn 2 matches two of the words, turn 1 one: but "Anna" is in most items, and "sunset" in one.
    expect(searchMemory(pool, { query: 'Anna sunset painting', limit: 3 }, now)[0]?.item.id).toBe('turn:1');
  });

  it('returns an item under the floor only when it answers a question that clears the floor', () => {
    const turn = (n: number, session: string, text: string) =>
      item({ id: `turn:${n}`, kind: 'turn', text, sessionId: session, sourceTurns: [n] });
    const pool = [
      turn(1, 's1', 'What is your favourite style of dance?'),
      turn(2, 's1', 'Contemporary, it is so expressive and graceful'),
      turn(20, 's2', 'a style of cooking, slow and patient, with bread and soup and a long walk after'),
      turn(21, 's2', 'dance halls were loud and crowded and hot, the music too fast for the old couples there'),
    ];
    const hits = searchMemory(pool, { query: 'favourite style of dance', limit: 10, minSimilarity: 0.3 }, now);
    expect(hits.map((h) => h.item.id)).toEqual(['turn:1', 'turn:2']);
    // Best first by score: the fused rank over its largest (1 for first in every ranking).
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 1);
    expect(hits[0]?.score).toBeLessThanOrEqual(1);
  });

  it('returns nothing below the confidence floor', () => {
    expect(searchMemory(items, { query: 'quantum carburettor', limit: 10 }, now)).toEqual([]);
  });

  it('filters before ranking', () => {
    expect(
      searchMemory(items, { query: 'support group', limit: 10, filters: { minQuality: 0.5 } }, now).map(
        (h) => h.item.id,
      ),
    ).toEqual(['mem:1']);
    expect(searchMemory(items, { query: 'support group', limit: 10, filters: { kind: ['turn'] } }, now)).toEqual([]);
  });

  it('knows which items are live and what a path names', () => {
    expect(isLive({ deleted: false, expiresAt: null }, now)).toBe(true);
    expect(isLive({ deleted: false, expiresAt: '2026-03-01T12:00:00.000Z' }, now)).toBe(false);
    expect(itemIdForPath('turns/0000000012/abc.md')).toBe('turn:12');
    expect(itemIdForPath('Knowledge/Facts/x.md')).toBe('knowledge:Facts/x.md');
    expect(itemIdForPath('Knowledge_staging/Facts/x--b.md')).toBe('staged:Facts/x--b.md');
    expect(itemIdForPath('summaries/summary-1-5.md')).toBe('summary:summary-1-5');
    expect(itemIdForPath('summaries/summary-1-5/assistant.md')).toBe('summary:summary-1-5'); // an older pair's document
    expect(itemIdForPath('reflections/summary-1-5')).toBe('summary:summary-1-5'); // the old path, still accepted
    expect(itemIdForPath('../etc/passwd')).toBeNull();
  });

  it('merges the source turns’ attributes key by key', () => {
    const attrs: Record<number, Record<string, string>> = {
      1: { dia_ids: 'D1:1 D1:2', session: '1' },
      2: { dia_ids: 'D1:2 D1:3', session: '1' },
    };
    expect(mergeAttributes([2, 1], (t) => attrs[t])).toEqual({ dia_ids: 'D1:1 D1:2 D1:3', session: '1' });
  });
});
