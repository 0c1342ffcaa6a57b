/**
 * memory.search's session rule (req R-TIER-1, docs/memory-api.md "Search"): an ephemeral entry
 * is eligible only to a search made in its own session, and the rule is applied before the
 * ranking cuts its page, so a page is never short for it.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryItem } from '../../lib/items/memory-item.js';
import { rankIndex } from '../../lib/search/memory-search.js';
import { inSession, matchesFilters } from '../../lib/search/search-filters.js';
import { indexOf } from '../../lib/search/search-segments.js';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';

const now = new Date('2026-06-01T00:00:00Z');
const entry = (tier: MemoryItem['tier'], text: string, sessionId?: string): MemoryItem =>
  newTierItem('u1', tier, { text, sessionId }, now);

describe('the session rule of memory.search', () => {
  it('shows an ephemeral entry to its own session only; other tiers to every search', () => {
    const mine = entry('ephemeral', 'comparing two kayaks', 's-a');
    const sessionless = entry('ephemeral', 'comparing two kayaks');
    expect([inSession(mine, 's-a'), inSession(mine, 's-b'), inSession(mine, undefined)]).toEqual([true, false, false]);
    expect([inSession(sessionless, 's-a'), inSession(sessionless, undefined)]).toEqual([false, false]);
    for (const tier of ['short_term', 'long_term'] as const) {
      const other = entry(tier, 'owns a red kayak', 's-a');
      expect([inSession(other, 's-a'), inSession(other, 's-b'), inSession(other, undefined)]).toEqual([
        true,
        true,
        true,
      ]);
    }
  });

  it('is part of matchesFilters, whatever the filters ask for', () => {
    const mine = entry('ephemeral', 'comparing two kayaks', 's-a');
    const asked = { tier: ['ephemeral' as const], kind: ['memory' as const] };
    expect(matchesFilters(mine, asked, now, 's-a')).toBe(true);
    expect(matchesFilters(mine, asked, now, 's-b')).toBe(false);
    expect(matchesFilters(mine, asked, now)).toBe(false);
    expect(matchesFilters({ ...mine, tier: 'short_term' }, {}, now)).toBe(true);
  });

  it("fills the page from eligible items when another session's entries would rank first", () => {
    const theirs = Array.from({ length: 60 }, (_, i) =>
      entry('ephemeral', `kayak paddle kayak paddle glance ${i}`, 's-b'),
    );
    const mine = entry('ephemeral', 'kayak paddle glance in my session', 's-a');
    const lasting = Array.from({ length: 8 }, (_, i) => entry('long_term', `the kayak club meets on day ${i}`));
    const index = indexOf([...theirs, mine, ...lasting]);
    const page = (sessionId?: string) =>
      rankIndex(index, { query: 'kayak paddle glance', limit: 5, minSimilarity: 0, sessionId }, now).map((h) => h.item);
    const inA = page('s-a');
    expect(inA).toHaveLength(5);
    expect(inA[0]?.id).toBe(mine.id);
    expect(inA.filter((i) => i.sessionId === 's-b')).toEqual([]);
    const outside = page();
    expect(outside).toHaveLength(5);
    expect(outside.filter((i) => i.tier === 'ephemeral')).toEqual([]);
    expect(page('s-b').filter((i) => i.tier === 'ephemeral')).toHaveLength(5);
  });
});
