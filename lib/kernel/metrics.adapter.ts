import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Powertools Metrics (CloudWatch embedded metric format), one namespace for the service.
 * CloudWatch bills each metric — a name with its dimension values — by the month it is emitted in
 * ($0.30 for the first 10,000: https://aws.amazon.com/cloudwatch/pricing/), so a metric exists
 * only when an alarm reads it (docs/design.md, "Observability"). Three names in all, each with
 * the one dimension `stage`, so three metrics per stage:
 * - ModelCostUsd (reflector, each job's model cost): the stage's daily cost alarm sums it;
 * - RejectedRecords (signal, idle, reflector: a malformed record kept in the rejected-events
 *   log and never retried): its alarm says to read that log, whose records name their source;
 * - StaleSearchIndex (a metric filter on the api's log, infra/constructs/stage-alarms.ts).
 * Everything else a handler counts (turns accepted, jobs enqueued, jobs done or not, items
 * staged, tokens, sweep jobs) is a field of the structured log line it writes, for Logs Insights.
 *
 * The dimension `stage` is needed: the namespace is shared by every stage in the account and
 * dimensions are part of a metric's identity
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Dimension.html), so
 * without it a stage's alarm would sum dev's and prod's together. Powertools' default `service`
 * dimension is dropped: it would make RejectedRecords one metric per function, and the
 * function that rejected a record is in its log line and its kept record.
 */
export const METRICS_NAMESPACE = 'ReflectiveMemory';

/** The metric names the functions emit (StaleSearchIndex is published by a metric filter). */
export const METRIC_NAMES = { modelCost: 'ModelCostUsd', rejectedRecords: 'RejectedRecords' } as const;

/**
 * A function's metrics: each has the dimension `stage` alone. The EMF line also carries the
 * function's name as `service`, a property that is not a dimension (no metric of its own), so
 * Logs Insights and the cost bench can tell whose line it is.
 */
export class StageMetrics {
  /** The Powertools Metrics the handler's logMetrics middleware flushes. */
  readonly metrics: Metrics;

  constructor(
    private readonly service: string,
    stage: string,
  ) {
    this.metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: service });
    // The constructor always adds `service` as a default dimension: cleared, then the stage alone.
    this.metrics.clearDefaultDimensions();
    this.metrics.setDefaultDimensions({ stage });
  }

  /**
   * Records rejected as malformed; 0 when none, as an invocation with no metric makes Powertools
   * log a warning (a log line billed per invocation).
   */
  rejectedRecords(count: number): void {
    this.add(METRIC_NAMES.rejectedRecords, MetricUnit.Count, count);
  }

  /** One job's model cost in US dollars: the stage's daily cost alarm (infra/constructs/stage-alarms.ts) sums it. */
  modelCost(usd: number): void {
    this.add(METRIC_NAMES.modelCost, MetricUnit.NoUnit, usd);
  }

  private add(name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number): void {
    // Metadata is cleared at each flush: set with every metric.
    this.metrics.addMetadata('service', this.service);
    this.metrics.addMetric(name, unit, value);
  }
}
