/**
 * The search index's segments: ranking over segments gives what one index over the
 * same items gives; bytes load back to the same segment; a merge keeps exactly the items
 * still served; newer segments and removals hide older versions.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryItem } from '../../lib/items/memory-item.js';
import { rankIndex, searchMemory } from '../../lib/search/memory-search.js';
import { indexOf, itemKey, SearchSegments, segmentOf } from '../../lib/search/search-segments.js';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import { mergeSegments } from '../../lib/search/search-segment.js';
import { segmentFromBytes, segmentToBytes } from '../../lib/search/segment-bytes.js';

const now = new Date('2026-06-01T00:00:00Z');
const TEXTS = [
  'Caroline went to the LGBTQ support group on Tuesday',
  'Melanie painted a sunrise over the lake last summer',
  'The reef tank needs a new heater before winter',
  'Caroline is researching adoption agencies for next year',
  'Melanie ran a charity race for mental health awareness',
  'A zebrafish aquarium needs a heater check every week',
  'Caroline gave a talk at the school about her journey',
  'The pottery class fired the glazed bowls at cone six',
];
const item = (i: number, text = TEXTS[i % TEXTS.length] ?? '', extra: Partial<MemoryItem> = {}): MemoryItem => ({
  ...newTierItem(
    'u1',
    'long_term',
    { text: `${text} (${i})`, sourceTurns: [i + 1] },
    new Date(now.getTime() - i * 3_600_000),
  ),
  id: `mem:${i}`,
  quality: (i % 5) / 5,
  ...extra,
});
const items = Array.from({ length: 40 }, (_, i) => item(i));
const queries = [
  'Caroline support group',
  'heater for the tank',
  'What did Melanie paint?',
  'adoption agencies research',
  'pottery glaze',
];
const ids = (index: SearchSegments, query: string) => rankIndex(index, { query, limit: 10 }, now).map((h) => h.item.id);

describe('search segments', () => {
  it('load from bytes into the same ranking', () => {
    const one = indexOf(items);
    const loaded = new SearchSegments([{ segment: segmentFromBytes(segmentToBytes(one.segments[0] as never)) }]);
    for (const q of queries) expect(ids(loaded, q)).toEqual(ids(one, q));
    expect(loaded.segments[0]?.item(3)).toEqual(one.segments[0]?.item(3));
  });

  it('merge into one segment that ranks as the parts did, dropping only what the parts hid', () => {
    const parts = [segmentOf(items.slice(0, 15)), segmentOf(items.slice(15, 30)), segmentOf(items.slice(30))];
    const split = new SearchSegments(parts.map((segment) => ({ segment })));
    const merged = new SearchSegments([
      { segment: mergeSegments(parts.map((segment) => ({ segment, keep: () => true }))) },
    ]);
    expect(merged.size).toBe(40);
    expect([...merged.visible()].map((i) => i.id).sort()).toEqual(items.map((i) => i.id).sort());
    for (const q of queries) expect(ids(merged, q)).toEqual(ids(split, q));
    for (const q of queries) expect(ids(merged, q)).toEqual(ids(indexOf(items), q));
  });

  it('carry which turns ask a question through bytes and merges; a segment written before reads as none asking', () => {
    const turn = (n: number, text: string): MemoryItem => ({
      ...item(n),
      text,
      id: `turn:${n}`,
      kind: 'turn',
      sessionId: 's1',
      sourceTurns: [n],
    });
    const turns = [
      turn(1, 'We went out.\nHow was the lake?'),
      turn(2, 'Cold, but lovely.'),
      turn(3, 'Any plans？'),
      { ...item(4), text: 'Is this a turn?' },
    ];
    const asking = (segment: ReturnType<typeof segmentOf>) => turns.map((_, d) => segment.item(d).asks);
    const built = segmentOf(turns);
    expect(asking(built)).toEqual([true, false, true, false]);
    expect(asking(segmentFromBytes(segmentToBytes(built)))).toEqual([true, false, true, false]);
    expect(asking(mergeSegments([{ segment: built, keep: () => true }]))).toEqual([true, false, true, false]);
    expect(asking(segmentFromBytes(withoutArray(segmentToBytes(built), 'asks')))).toEqual([false, false, false, false]);
  });

  it('serve an item from the newest segment holding it, and not at all once removed', () => {
    const changed = item(2, 'The reef tank got a titanium heater');
    const index = new SearchSegments([
      { segment: segmentOf(items) },
      { segment: segmentOf([changed]), removes: new Set([itemKey({ userId: 'u1', id: 'mem:5' })]) },
    ]);
    const visible = [...index.visible()];
    expect(visible.filter((i) => i.id === 'mem:2')).toHaveLength(1);
    expect(visible.some((i) => i.id === 'mem:5')).toBe(false);
    expect(ids(index, 'titanium heater')[0]).toBe('mem:2');
    expect(ids(index, 'zebrafish aquarium heater')).not.toContain('mem:5');
  });

  it('never rank an expired item, and rank items in memory as searchMemory always did', () => {
    const expiring = item(50, 'Zebrafish aquarium glance', {
      tier: 'ephemeral',
      sessionId: 's1',
      expiresAt: new Date(now.getTime() + 60_000).toISOString(),
    });
    const index = indexOf([...items, expiring]);
    const inSession = (at: Date) =>
      rankIndex(index, { query: 'zebrafish aquarium glance', limit: 10, sessionId: 's1' }, at).map((h) => h.item.id);
    expect(inSession(now)[0]).toBe('mem:50');
    expect(inSession(new Date(now.getTime() + 120_000))).not.toContain('mem:50');
    expect(searchMemory(items, { query: 'Caroline support group', limit: 3 }, now).map((h) => h.item.id)).toEqual(
      ids(indexOf(items), 'Caroline support group').slice(0, 3),
    );
  });
});

/** The segment's bytes as a writer that did not know `name` would have written them (its layout without that array). */
function withoutArray(bytes: Uint8Array, name: string): Uint8Array {
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length))) as {
    layout: Array<[string, ...unknown[]]>;
  };
  const body = bytes.subarray(Math.ceil((length + 4) / 8) * 8);
  const encoded = new TextEncoder().encode(
    JSON.stringify({ ...header, layout: header.layout.filter(([n]) => n !== name) }),
  );
  const base = Math.ceil((encoded.length + 4) / 8) * 8;
  const out = new Uint8Array(base + body.length);
  new DataView(out.buffer).setUint32(0, encoded.length, true);
  out.set(encoded, 4);
  out.set(body, base);
  return out;
}
