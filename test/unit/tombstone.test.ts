/** Req R-DEL-2's tombstones (lib/forget/tombstone.ts): a deleted fact is recognised again, a corrected one is not, and nothing of it can be read back. */
import { describe, expect, it } from 'vitest';
import { buriedKeyOf, tombstoneKeys, tombstonesOf } from '../../lib/forget/tombstone.js';

describe('tombstones', () => {
  const fact = { title: 'Facts/Reef_Tank.md', text: 'The reef tank holds 40 gallons of salt water.' };
  const buried = new Map(tombstonesOf(fact).map((t) => [t.key, t]));

  it('recognise the same fact by its words, whatever the title, case, order or punctuation', () => {
    expect(buriedKeyOf({ title: 'aquarium', text: 'Salt water: 40 gallons, the REEF tank holds.' }, buried)).toMatch(
      /^text:/,
    );
    expect(buriedKeyOf({ title: 'aquarium', text: 'The pond holds 300 gallons of fresh water.' }, buried)).toBeNull();
  });

  it('recognise the same title saying nothing new (a rephrasing, a part), and let a corrected value through', () => {
    expect(buriedKeyOf({ title: 'reef tank', text: 'Holds 40 gallons of salt water, the reef tank.' }, buried)).toMatch(
      /^(title|text):/,
    );
    expect(buriedKeyOf({ title: 'Reef_tank', text: 'The reef tank holds 40 gallons.' }, buried)).toMatch(/^title:/);
    // Other numbers only: the same fact citing another turn or amount (numbers are no content words).
    expect(buriedKeyOf({ title: 'Reef_tank', text: 'The reef tank holds 75 gallons of salt water.' }, buried)).toMatch(
      /^title:/,
    );
    // A word the deleted fact never had: a new statement under the same title.
    expect(
      buriedKeyOf({ title: 'Reef_tank', text: 'The reef tank holds 40 gallons of fresh water.' }, buried),
    ).toBeNull();
    // A tombstone of the title alone (no words kept) still rejects the title.
    const titleOnly = new Map(
      tombstonesOf(fact)
        .filter((t) => t.key.startsWith('title:'))
        .map((t) => [t.key, { key: t.key }]),
    );
    expect(buriedKeyOf({ title: 'reef tank', text: 'something else entirely' }, titleOnly)).toMatch(/^title:/);
  });

  it('hold hashes only', () => {
    const stones = tombstonesOf(fact);
    expect(tombstoneKeys(fact)).toHaveLength(2);
    for (const s of stones) expect(s.key).toMatch(/^(title|text):[0-9a-f]{32}$/);
    for (const w of stones.flatMap((s) => s.words ?? [])) expect(w).toMatch(/^[0-9a-f]{12}$/);
    expect(JSON.stringify(stones)).not.toMatch(/reef|gallons|salt/i);
    expect(tombstonesOf({ title: '', text: '' })).toEqual([]);
  });
});
