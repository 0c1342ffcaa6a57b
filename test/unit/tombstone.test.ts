/** Req R-DEL-2's tombstones (lib/domain/tombstone.ts): a deleted fact is recognised again, and nothing of it can be read back. */
import { describe, expect, it } from 'vitest';
import { buriedKeyOf, tombstoneKeys } from '../../lib/domain/tombstone.js';

describe('tombstones', () => {
  const fact = { title: 'Facts/Reef_Tank.md', text: 'The reef tank holds 40 gallons of salt water.' };

  it('recognise the same fact by its title or its words, whatever the case, order, folder or punctuation', () => {
    const buried = new Set(tombstoneKeys(fact));
    expect(buriedKeyOf({ title: 'reef tank', text: 'something else entirely' }, buried)).toMatch(/^title:/);
    expect(buriedKeyOf({ title: 'aquarium', text: 'Salt water: 40 gallons, the REEF tank holds.' }, buried)).toMatch(/^text:/);
    expect(buriedKeyOf({ title: 'aquarium', text: 'The pond holds 300 gallons of fresh water.' }, buried)).toBeNull();
  });

  it('hold hashes only', () => {
    const keys = tombstoneKeys(fact);
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/^(title|text):[0-9a-f]{32}$/);
    expect(tombstoneKeys({ title: '', text: '' })).toEqual([]);
  });
});
