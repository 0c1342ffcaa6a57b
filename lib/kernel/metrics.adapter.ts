import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Powertools Metrics (CloudWatch embedded metric format), one namespace for the service.
 * CloudWatch bills each metric — a name with its dimensions — by the month it is emitted in
 * ($0.30 for the first 10,000: https://aws.amazon.com/cloudwatch/pricing/), so the set is small
 * and fixed: statuses, kinds and sweeps are log fields, never parts of a name or a
 * dimension. The functions emit, each with its `service` dimension:
 * signal TurnsAccepted, RejectedRecords, ReflectionJobsEnqueued, RecordsRetried;
 * idle IdleSummariesEnqueued, RejectedRecords;
 * reflector JobsDone, JobsNotDone, ItemsStaged, GateRejections, ItemsPromoted, ModelInputTokens, ModelOutputTokens,
 * ModelCostUsd (the stage's daily cost alarm sums it; with a `stage` dimension too, addModelCost), RejectedRecords;
 * sweep SweepJobs — 16 metrics in all.
 */
export const METRICS_NAMESPACE = 'ReflectiveMemory';

export function createMetrics(serviceName: string): Metrics {
  return new Metrics({ namespace: METRICS_NAMESPACE, serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? serviceName });
}

export { MetricUnit };

/**
 * One job's model cost: ModelCostUsd with the dimensions `service` and `stage`. The namespace is
 * the service's, shared by every stage in the account, and dimensions are part of a metric's
 * identity: each name/value pair makes a metric of its own
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Dimension.html),
 * so the stage's daily cost alarm (infra/constructs/stage-alarms.ts, same dimensions) sums its
 * own stage's cost, not dev's and prod's together. Written at once as its own EMF line
 * (Powertools' singleMetric), so the invocation's other metrics keep `service` alone.
 */
export function addModelCost(metrics: Metrics, stage: string, usd: number): void {
  const single = metrics.singleMetric();
  single.addDimension('stage', stage);
  single.addMetric('ModelCostUsd', MetricUnit.NoUnit, usd);
}
