import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Powertools Metrics (CloudWatch embedded metric format), one namespace for the service.
 * CloudWatch bills each metric — a name with its dimensions — by the month it is emitted in
 * ($0.30 for the first 10,000: https://aws.amazon.com/cloudwatch/pricing/), so the set is small
 * and fixed (issue 19): statuses, kinds and sweeps are log fields, never parts of a name or a
 * dimension. The functions emit, each with its `service` dimension:
 * signal TurnsAccepted, RejectedRecords, ReflectionJobsEnqueued, RecordsRetried;
 * idle IdleSummariesEnqueued, RejectedRecords;
 * reflector JobsDone, JobsNotDone, ItemsStaged, GateRejections, ItemsPromoted, ModelInputTokens, ModelOutputTokens,
 * ModelCostUsd (the stage's daily cost alarm sums it), RejectedRecords;
 * sweep SweepJobs — 16 metrics in all.
 */
export const METRICS_NAMESPACE = 'ReflectiveMemory';

export function createMetrics(serviceName: string): Metrics {
  return new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? serviceName });
}

export { MetricUnit };
