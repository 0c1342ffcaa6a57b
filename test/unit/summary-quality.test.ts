/** Req R-SUM-10's summary quality metrics: deletions, resurrections, topics. */
import { describe, expect, it } from 'vitest';
import type { SummaryRecordView } from '../../lib/items/source-items.js';
import { summaryQuality } from '../../lib/summaries/summary-quality.js';

const summary = (id: string, text: string, extra: Partial<SummaryRecordView> = {}): SummaryRecordView => ({
  userId: 'u',
  id,
  kind: 'idle-summary',
  createdAt: '2026-02-06T14:00:00Z',
  sourceTurns: [1],
  text,
  deleted: false,
  ...extra,
});

describe('summary quality', () => {
  it('counts deletions, resurrections of live summaries, those of deleted ones apart, and shared topics', () => {
    const q = summaryQuality([
      summary('s1', 'The reef tank needs a new pump.', { resurrections: 3 }),
      summary('s2', 'Pump choices for the reef tank.', { resurrections: 0 }),
      summary('s3', 'Painting class on Tuesday.', { deleted: true, resurrections: 2, resurrectionsWhileDeleted: 0 }),
      summary('s4', 'The reef lights.'),
    ]);
    expect(q).toMatchObject({
      summaries: 4,
      deleted: 1,
      deletionRate: 0.25,
      resurrections: 3,
      resurrected: 1,
      resurrectionRate: 0.333,
      resurrectionsOfDeleted: 0,
    });
    expect(q.topics.slice(0, 3)).toEqual([
      { topic: 'reef', summaries: 3 },
      { topic: 'pump', summaries: 2 },
      { topic: 'tank', summaries: 2 },
    ]);
    expect(q.topics.map((t) => t.topic)).not.toContain('painting');
  });

  it('reports a deleted summary given back, and nothing for a user without summaries', () => {
    expect(
      summaryQuality([summary('s1', 'x', { deleted: true, resurrectionsWhileDeleted: 1 })]).resurrectionsOfDeleted,
    ).toBe(1);
    expect(summaryQuality([])).toMatchObject({
      summaries: 0,
      deletionRate: 0,
      resurrectionRate: 0,
      topics: [],
      carrying: 0,
    });
  });

  it("counts the live summaries that carry their session's previous one forward", () => {
    const q = summaryQuality([
      summary('s1', 'Rex the beagle.'),
      summary('s2', 'Rex the beagle chewed the sofa.', { carried: 's1', sourceTurns: [1, 2] }),
      summary('s3', 'Rex again.', { carried: 's2', deleted: true }),
    ]);
    expect(q.carrying).toBe(1);
  });
});
