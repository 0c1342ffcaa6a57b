/**
 * Self-assessment (req R-SLP-10): calibration signals derived from the sleep-time run log.
 */

export interface AssessedRun {
  startedAt: string;
  sessionsReviewed: number;
  findingsByCategory: Partial<Record<string, number>>;
}

export type Trend = 'improving' | 'stable' | 'degrading' | 'insufficient_data';

export interface SelfAssessment {
  runs: number;
  sessionsReviewed: number;
  /** Corrections per session reviewed (lower = better calibrated). */
  correctionRate: number;
  /** Unresolved threads per session reviewed (lower = better attention). */
  unresolvedRate: number;
  contradictionCount: number;
  trend: Trend;
}

/** Fewer runs than this and there is no trend to speak of. */
export const MIN_RUNS_FOR_TREND = 4;
/** A half must differ by more than this share to count as a change. */
export const TREND_TOLERANCE = 0.1;

const rate = (runs: readonly AssessedRun[]) => {
  const sessions = runs.reduce((n, r) => n + r.sessionsReviewed, 0);
  const issues = runs.reduce(
    (n, r) =>
      n +
      (r.findingsByCategory.correction ?? 0) +
      (r.findingsByCategory.unresolved ?? 0) +
      (r.findingsByCategory.contradiction ?? 0),
    0,
  );
  return sessions > 0 ? issues / sessions : 0;
};

/** Over the given runs (any order): rates, and the trend from the first half to the second. */
export function computeSelfAssessment(history: readonly AssessedRun[]): SelfAssessment {
  const runs = [...history].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const sessionsReviewed = runs.reduce((n, r) => n + r.sessionsReviewed, 0);
  const count = (c: string) => runs.reduce((n, r) => n + (r.findingsByCategory[c] ?? 0), 0);
  const per = (n: number) => (sessionsReviewed > 0 ? Math.round((n / sessionsReviewed) * 1000) / 1000 : 0);
  let trend: Trend = 'insufficient_data';
  if (runs.length >= MIN_RUNS_FOR_TREND) {
    const half = Math.floor(runs.length / 2);
    const before = rate(runs.slice(0, half));
    const after = rate(runs.slice(runs.length - half));
    const change = before === 0 ? (after === 0 ? 0 : 1) : (after - before) / before;
    trend = change < -TREND_TOLERANCE ? 'improving' : change > TREND_TOLERANCE ? 'degrading' : 'stable';
  }
  return {
    runs: runs.length,
    sessionsReviewed,
    correctionRate: per(count('correction')),
    unresolvedRate: per(count('unresolved')),
    contradictionCount: count('contradiction'),
    trend,
  };
}
