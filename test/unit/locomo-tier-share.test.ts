/**
 * The LoCoMo bench's tier share (bench/locomo-quality.ts, `tierShareTop10` in its last line):
 * tier entries (kind `memory`) among the top 10 results of every question.
 */
import { describe, expect, it } from 'vitest';
import { addTop10, type Top10Tally, tierEntryShare } from '../../bench/locomo-quality.js';

const page = (...kinds: string[]) => kinds.map((kind) => ({ kind }));

describe('the tier share of the top 10', () => {
  it('counts kind `memory` among at most 10 results a question, over every question', () => {
    const t: Top10Tally = { results: 0, tierEntries: 0 };
    addTop10(t, page('memory', 'turn', 'summary', 'memory', ...Array(10).fill('memory')));
    addTop10(t, page('knowledge', 'staged', 'episode', 'diary'));
    addTop10(t, []);
    // 10 of the first page (its 4 results past the 10th left out), 4 of the second.
    expect(t).toEqual({ results: 14, tierEntries: 8 });
    expect(tierEntryShare(t)).toBe(0.571);
  });

  it('is 0 when no question got a result', () => {
    expect(tierEntryShare({ results: 0, tierEntries: 0 })).toBe(0);
  });
});
