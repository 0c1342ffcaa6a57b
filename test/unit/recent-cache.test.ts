/** The least-recently-used cache warm containers keep (lib/kernel/recent-cache.ts). */
import { describe, expect, it } from 'vitest';
import { RecentCache } from '../../lib/kernel/recent-cache.js';

describe('RecentCache', () => {
  it('keeps at most `max` entries, dropping the least recently read or written', () => {
    const cache = new RecentCache<string, number>({ max: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
  });

  it('keeps at most `maxSize` in total, never an entry larger than it, and forgets a deleted one', () => {
    const cache = new RecentCache<string, string>({ max: 10, maxSize: 5, sizeOf: (v) => v.length });
    cache.set('a', 'xx');
    cache.set('b', 'yyy');
    cache.set('c', 'z');
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 'yyy', 'z']);
    cache.set('d', 'too large');
    expect(cache.get('d')).toBeUndefined();
    cache.set('b', 'yy');
    cache.delete('c');
    expect([cache.get('b'), cache.get('c')]).toEqual(['yy', undefined]);
    cache.set('e', 'www');
    expect([cache.get('b'), cache.get('e')]).toEqual(['yy', 'www']);
  });
});
