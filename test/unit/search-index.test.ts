/**
 * The search index's use cases over an in-memory store: what a view serves after
 * changes, compactions and both kinds of merge is what the items' stores hold.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryItem } from '../../lib/items/memory-item.js';
import { SearchSegments } from '../../lib/search/search-segments.js';
import { SEARCH_MARK_TTL_MS } from '../../lib/kernel/memory-paths.js';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import type { MemoryCatalog } from '../../lib/search/search-index.port.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { MAX_SEGMENTS } from '../../lib/search/compaction-segments.js';
import { MemorySearchIndexStore } from '../../lib/search/search-index.fake.js';

const start = new Date('2026-06-01T00:00:00Z');
let now = start;

/** The stores' items and the index's marks, pointer and segments, in memory. */
function world(timing?: { now?: () => Date; lagMs?: number }) {
  const items = new Map<string, MemoryItem>();
  const store = new MemorySearchIndexStore();
  const { segments } = store;
  const catalog: MemoryCatalog = {
    itemsById: async (_u, ids) =>
      new Map(ids.flatMap((id) => (items.has(id) ? [[id, items.get(id) as MemoryItem] as const] : []))),
  };
  const write = (item: MemoryItem) => {
    items.set(item.id, item);
    store.mark(item.id);
  };
  now = start;
  const index = new LiveSearchIndex({
    store,
    catalog,
    clock: { now: () => now },
    marks: { ...store.timing, ...timing },
  });
  // What ranking may return: visible and not expired.
  const served = async () =>
    [...new SearchSegments((await index.view('u')).entries).visible()]
      .filter((i) => i.expiresAt === null || i.expiresAt > now.getTime())
      .map((i) => i.id)
      .sort();
  const live = () =>
    [...items.values()]
      .filter((i) => !i.deleted && (i.expiresAt === null || Date.parse(i.expiresAt) > now.getTime()))
      .map((i) => i.id)
      .sort();
  return { items, segments, write, index, served, live, head: () => store.pointer };
}

const note = (i: number, extra: Partial<MemoryItem> = {}): MemoryItem => ({
  ...newTierItem('u', 'long_term', { text: `note ${i} about reef tanks` }, now),
  id: `mem:${i}`,
  ...extra,
});

describe('the search index over changes, compactions and merges', () => {
  it('serves what the stores hold: changes in the overlay, then in deltas, then merged', async () => {
    const w = world();
    for (let i = 0; i < 200; i++) w.write(note(i));
    expect(await w.served()).toEqual(w.live());
    await w.index.compact('u');
    expect(w.head().segments).toHaveLength(1);
    // A base item rewritten to expire soon, folded while live, expired before the deltas merge.
    w.write(note(150, { tier: 'short_term', expiresAt: new Date(now.getTime() + 60_000).toISOString() }));
    await w.index.compact('u');
    now = new Date(now.getTime() + 120_000);
    expect(await w.served()).toEqual(w.live());
    // Small deltas: updated, deleted and expired items, each compacted on its own.
    for (let round = 0; round < MAX_SEGMENTS + 2; round++) {
      w.write(note(1000 + round));
      w.write(note(round, { text: `note ${round} rewritten` }));
      w.write(note(50 + round, { deleted: true }));
      w.write(note(100 + round, { tier: 'short_term', expiresAt: new Date(now.getTime() - 1).toISOString() }));
      expect(await w.served()).toEqual(w.live());
      await w.index.compact('u');
      expect(await w.served()).toEqual(w.live());
    }
    // The deltas were merged without the base (they hold far less than a tenth of it), so the
    // base's versions of rewritten, deleted and expired items stay hidden by the merged delta.
    expect(w.head().segments.length).toBeLessThanOrEqual(MAX_SEGMENTS);
    expect(w.head().segments[0]?.key).toBe('seg-1');
    expect(w.head().segments.flatMap((s) => s.removes)).toEqual(
      expect.arrayContaining(['mem:50', 'mem:100', 'mem:150']),
    );
    expect(
      w
        .head()
        .segments.slice(1)
        .some((s) => s.items > 4),
    ).toBe(true);
    expect(w.segments.size).toBe(w.head().segments.length);
    // Enough deltas to outweigh a tenth of the base: everything in one segment again.
    for (let i = 0; i < 30; i++) {
      w.write(note(2000 + i));
      await w.index.compact('u');
    }
    expect(w.head().segments.length).toBeLessThanOrEqual(MAX_SEGMENTS);
    expect(await w.served()).toEqual(w.live());
  });

  it('serves a change made during a compaction, folded then or by the next one', async () => {
    const w = world();
    w.write(note(1));
    const pending = w.index.compact('u');
    w.write(note(1, { quality: 0.123 }));
    await pending;
    const quality = async () =>
      [...new SearchSegments((await w.index.view('u')).entries).visible()].find((i) => i.id === 'mem:1')?.quality;
    expect(await quality()).toBe(0.123);
    await w.index.compact('u');
    expect((await w.index.view('u')).changes).toBe(0);
    expect(await quality()).toBe(0.123);
  });

  it('leaves a compaction for later below its threshold', async () => {
    const w = world();
    w.write(note(1));
    expect(await w.index.compact('u', 32)).toMatchObject({ folded: 0 });
    expect(w.head().version).toBe(0);
    expect(await w.served()).toEqual(['mem:1']);
  });

  it('moves the watermark only to its start minus L; the marks above it it folded are listed and neither read nor folded again', async () => {
    const w = world({ lagMs: 10 });
    for (let i = 0; i < 40; i++) w.write(note(i));
    expect(await w.index.compact('u', 32)).toMatchObject({ folded: 40 });
    // The last ten marks are within L of its start: above the watermark, listed as folded.
    expect(w.head().folded).toHaveLength(10);
    expect((await w.index.view('u')).changes).toBe(0);
    expect(await w.served()).toEqual(w.live());
    // They do not count toward the next threshold, nor go into the next delta.
    for (let i = 40; i < 60; i++) w.write(note(i));
    expect(await w.index.compact('u', 32)).toMatchObject({ folded: 0 });
    expect(await w.index.compact('u')).toMatchObject({ folded: 20 });
    expect(w.head().segments.at(-1)?.items).toBe(20);
    // An item marked again is folded again, whatever its earlier mark.
    w.write(note(59, { text: 'note 59 rewritten' }));
    expect((await w.index.view('u')).changes).toBe(1);
    expect(await w.index.compact('u')).toMatchObject({ folded: 1 });
    expect(await w.served()).toEqual(w.live());
  });

  it("is due for a compaction once its watermark is half the marks' TTL old, and stale past the TTL; a compaction with nothing to fold moves the watermark then", async () => {
    let wall = Date.UTC(2026, 0, 1) + 1_000;
    const w = world({ now: () => new Date(wall), lagMs: 0 });
    w.write(note(1));
    await w.index.compact('u');
    expect(await w.index.view('u')).toMatchObject({ changes: 0, due: false, stale: false });
    const version = w.head().version;
    // Nothing to fold and a young watermark: no write.
    expect(await w.index.compact('u')).toMatchObject({ folded: 0, version });
    wall += SEARCH_MARK_TTL_MS / 2 + 1;
    expect(await w.index.view('u')).toMatchObject({ due: true, stale: false });
    wall += SEARCH_MARK_TTL_MS / 2;
    expect(await w.index.view('u')).toMatchObject({ due: true, stale: true });
    expect(await w.index.compact('u')).toMatchObject({ folded: 0, version: version + 1 });
    expect(w.head().watermark).toBe(new Date(wall).toISOString());
    expect(await w.index.view('u')).toMatchObject({ due: false, stale: false });
    expect(await w.served()).toEqual(['mem:1']);
  });
});
