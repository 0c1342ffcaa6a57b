/**
 * What the model cost, by day (req R-SLP-14: "under $1/day across all agents").
 * Every job that asked the model — batch, summary, nightly, weekly — leaves one cost entry:
 * its tokens and their price at the price table's rates (sleep-time/model-prices.ts), on the
 * UTC day it ran. Days are processing days: a cost is incurred when the job runs. The totals
 * are sums of entries; a model missing from the price table is counted as `unpricedJobs`.
 */
import type { Job } from '../../events/job.js';

export type CostGroup = 'batch' | 'summary' | 'nightly' | 'weekly';

export interface CostEntry {
  userId: string;
  jobId: string;
  kind: Job['kind'];
  /** YYYY-MM-DD (UTC) the job ran. */
  day: string;
  at: string;
  modelId: string;
  inputTokens: number;
  outputTokens: number;
  /** null: the model is not in the price table. */
  costUsd: number | null;
}

export interface DailyCost {
  day: string;
  costUsd: number;
  jobs: number;
  unpricedJobs: number;
  inputTokens: number;
  outputTokens: number;
  byGroup: Record<CostGroup, { jobs: number; costUsd: number }>;
  /** Users with a cost that day (the stage's totals only). */
  users?: number;
}

/** The stage's default daily alarm: req R-SLP-14's "under $1/day across all agents". */
export const DEFAULT_DAILY_COST_ALARM_USD = 1;

export function costGroup(kind: Job['kind']): CostGroup {
  if (kind === 'nightly' || kind === 'weekly') return kind;
  return kind === 'idle-summary' || kind === 'session-close' || kind === 'manual' ? 'summary' : 'batch';
}

/** The `count` UTC days up to and including `today`'s, oldest first. */
export function lastDays(today: Date, count: number): string[] {
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return Array.from({ length: count }, (_, i) =>
    new Date(end - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** One total per day asked for (zero when nothing ran), from the entries of those days. */
export function dailyTotals(
  entries: readonly CostEntry[],
  days: readonly string[],
  options: { countUsers?: boolean } = {},
): DailyCost[] {
  return days.map((day) => {
    const of = entries.filter((e) => e.day === day);
    const byGroup: DailyCost['byGroup'] = {
      batch: { jobs: 0, costUsd: 0 },
      summary: { jobs: 0, costUsd: 0 },
      nightly: { jobs: 0, costUsd: 0 },
      weekly: { jobs: 0, costUsd: 0 },
    };
    for (const e of of) {
      const g = byGroup[costGroup(e.kind)];
      g.jobs += 1;
      g.costUsd = round6(g.costUsd + (e.costUsd ?? 0));
    }
    return {
      day,
      costUsd: round6(of.reduce((n, e) => n + (e.costUsd ?? 0), 0)),
      jobs: of.length,
      unpricedJobs: of.filter((e) => e.costUsd === null).length,
      inputTokens: of.reduce((n, e) => n + e.inputTokens, 0),
      outputTokens: of.reduce((n, e) => n + e.outputTokens, 0),
      byGroup,
      ...(options.countUsers ? { users: new Set(of.map((e) => e.userId)).size } : {}),
    };
  });
}
