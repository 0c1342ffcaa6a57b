/** Daily model cost totals: sums by day and kind, empty days included. */
import { describe, expect, it } from 'vitest';
import { type CostEntry, costGroup, dailyTotals, lastDays } from '../../lib/costs/daily-cost.js';

const entry = (
  userId: string,
  jobId: string,
  kind: CostEntry['kind'],
  day: string,
  costUsd: number | null,
): CostEntry => ({
  userId,
  jobId,
  kind,
  day,
  at: `${day}T03:00:00.000Z`,
  modelId: 'm',
  inputTokens: 1000,
  outputTokens: 100,
  costUsd,
});

describe('daily cost', () => {
  it('lists the last days up to today, oldest first, across a month boundary', () => {
    expect(lastDays(new Date('2026-03-01T23:59:00Z'), 3)).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
  });

  it('sums each day by kind, counts unpriced jobs and users, and gives an empty day zeros', () => {
    const entries = [
      entry('a', 'batch-1-5', 'batch', '2026-03-01', 0.002),
      entry('a', 'summary-1-5', 'idle-summary', '2026-03-01', 0.001),
      entry('b', 'nightly-2026-03-01', 'nightly', '2026-03-01', 0.01),
      entry('b', 'weekly-2026-W09', 'weekly', '2026-03-01', null),
      entry('a', 'batch-6-9', 'batch', '2026-02-28', 0.003),
    ];
    const [before, day, after] = dailyTotals(entries, ['2026-02-28', '2026-03-01', '2026-03-02'], { countUsers: true });
    expect(before).toMatchObject({ costUsd: 0.003, jobs: 1, users: 1 });
    expect(day).toMatchObject({
      costUsd: 0.013,
      jobs: 4,
      unpricedJobs: 1,
      inputTokens: 4000,
      outputTokens: 400,
      users: 2,
    });
    expect(day?.byGroup).toEqual({
      batch: { jobs: 1, costUsd: 0.002 },
      summary: { jobs: 1, costUsd: 0.001 },
      nightly: { jobs: 1, costUsd: 0.01 },
      weekly: { jobs: 1, costUsd: 0 },
    });
    expect(after).toMatchObject({ costUsd: 0, jobs: 0, users: 0 });
    expect(dailyTotals(entries, ['2026-03-01'])[0]?.users).toBeUndefined();
  });

  it('groups every job kind', () => {
    expect(
      ['batch', 'event', 'manual', 'session-close', 'idle-summary', 'nightly', 'weekly'].map((k) =>
        costGroup(k as CostEntry['kind']),
      ),
    ).toEqual(['batch', 'batch', 'summary', 'summary', 'summary', 'nightly', 'weekly']);
  });
});
