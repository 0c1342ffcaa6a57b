/**
 * The stateless stack's alarms, each with the action it asks for in its description and in
 * docs/deploy.md ("Runbook"): errors and throttles of the functions no queue stands behind,
 * the daily model cost, rejected records, a stale search index.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import { ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { METRIC_NAMES, METRICS_NAMESPACE } from '../../lib/kernel/metrics.adapter.js';
import { STALE_INDEX_WARNING } from '../../lib/search/search-api.js';
import type { StatelessStackProps } from '../stacks/stateless-props.js';
import type { MemoryFunction } from './memory-function.js';
import { NotifyingAlarm } from './notifying-alarm.js';

/** What a human does when a function's Errors or Throttles alarm fires. */
const FUNCTION_ACTIONS = {
  Api: {
    errors:
      "Callers got 500s. Action: read the api function's log group around the alarm (errorMessage, 'Task timed out'); roll back a deploy that broke init.",
    throttles:
      "Callers were refused for lack of concurrency. Action: raise the account's concurrency quota or the api function's reserved concurrency.",
  },
  Sweep: {
    errors:
      'A scheduled sweep failed after Lambda\'s two retries and was dropped. Action: read the sweep function\'s log group, fix the cause, then invoke it with {"sweep": "...", "time": "<the schedule time>"}.',
    throttles:
      'A scheduled sweep waits for concurrency (Lambda retries it up to its event age, then drops it). Action: raise the concurrency; if its log shows no "sweep done" for that time, invoke it again.',
  },
} as const;

/**
 * Errors and Throttles alarms of the functions no queue stands behind, each the Sum over 5
 * minutes against the stage's thresholds. Errors counts invocations that end in a function
 * error: an exception out of the handler, a timeout, a runtime or init failure. Throttles
 * counts invocation requests refused for lack of concurrency
 * (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html).
 * - api: invoked synchronously by API Gateway, nothing retries it: the caller got the failure.
 * - sweep: invoked asynchronously by EventBridge; Lambda retries a function error twice, a
 *   throttled event for up to 6 hours, then drops the event
 *   (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
 * The queue consumers (signal, reflector, idle) have none: an error or a throttle sends their
 * batch back to the queue, to be received again
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html); one that
 * passes needs no one, one that lasts ages the queue (its AgeAlarm) and ends in its DLQ (its
 * DlqDepthAlarm), each alarm with its action (infra/constructs/memory-queues.ts).
 */
export function functionAlarms(
  stack: Stack,
  props: StatelessStackProps,
  fns: Record<'Sweep' | 'Api', MemoryFunction>,
): void {
  const { alarms } = props.config;
  for (const [name, fn] of Object.entries(fns) as Array<[keyof typeof fns, MemoryFunction]>) {
    const common = {
      topic: props.alarmTopic,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    };
    new NotifyingAlarm(stack, `${name}FunctionErrorsAlarm`, {
      ...common,
      alarmDescription: FUNCTION_ACTIONS[name].errors,
      metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: alarms.functionErrors,
    });
    new NotifyingAlarm(stack, `${name}FunctionThrottlesAlarm`, {
      ...common,
      alarmDescription: FUNCTION_ACTIONS[name].throttles,
      metric: fn.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: alarms.functionThrottles,
    });
  }
}

/**
 * Req R-SLP-14's "under $1/day": the Sum of the reflector's ModelCostUsd (each
 * job's model cost, lib/costs/job-cost.ts) over one day against the stage's threshold.
 * A period of 86,400 s with one evaluation period is within PutMetricAlarm's limits (period
 * × evaluation periods ≤ 604,800 s; https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html).
 * The metric's namespace is the service's, shared by two stages in one account: the `stage`
 * dimension the reflector gives it (lib/kernel/metrics.adapter.ts) keeps their sums apart.
 */
export function costAlarm(stack: Stack, props: StatelessStackProps): void {
  new NotifyingAlarm(stack, 'DailyModelCostAlarm', {
    topic: props.alarmTopic,
    alarmDescription: `The model cost of the last day passed $${props.config.alarms.dailyModelCostUsd}. Action: GET /v1/costs for the totals by day and kind, GET /v1/users/{u}/costs for a user's; look for a redrive loop or a runaway user first, then lower the stage's schedules or model.`,
    metric: new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: METRIC_NAMES.modelCost,
      dimensionsMap: { stage: props.stage },
      statistic: 'Sum',
      period: Duration.days(1),
    }),
    threshold: props.config.alarms.dailyModelCostUsd,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/**
 * Records the signal, idle and reflector functions rejected as malformed: each is kept in the
 * rejected-events log and never retried (lib/kernel/parse-or-keep.ts), so without this alarm a
 * producer sending a bad shape would lose data silently. The Sum over an hour of
 * RejectedRecords, one metric for the three functions (dimension `stage` alone,
 * lib/kernel/metrics.adapter.ts); the kept records name their source queue and the field.
 */
export function rejectedRecordsAlarm(stack: Stack, props: StatelessStackProps): void {
  new NotifyingAlarm(stack, 'RejectedRecordsAlarm', {
    topic: props.alarmTopic,
    alarmDescription:
      'Records were rejected as malformed and kept, not processed. Action: read rejected/{day}/{source}/ in the bucket (each record names the failing field), fix the producer, then send the records again.',
    metric: new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: METRIC_NAMES.rejectedRecords,
      dimensionsMap: { stage: props.stage },
      statistic: 'Sum',
      period: Duration.hours(1),
    }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/**
 * An owner whose search index watermark is older than the change marks' TTL may
 * have lost marks that expired unfolded (docs/search-index.md, "Marks expire by TTL"); the
 * api logs it (STALE_INDEX_WARNING). A metric filter counts those lines, a JSON pattern on
 * the Powertools line's `message`
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html), and
 * the alarm fires at the first one. The filter publishes only when a line matches, so a
 * quiet stage stores no data points for it.
 *
 * The namespace is shared by every stage in the account, so the metric carries the stage as
 * its `stage` dimension, as ModelCostUsd does (lib/kernel/metrics.adapter.ts): a metric filter takes
 * a dimension's value from a field of the JSON log event
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntaxForMetricFilters.html,
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-logs-metricfilter-dimension.html),
 * here the line's `stage` (functions/api/create-handler.ts), which the pattern also requires
 * to be this stage's. Dimensions are part of a metric's identity
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Dimension.html), and an
 * alarm's dimensions name the metric it watches
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-cloudwatch-alarm-dimension.html):
 * the alarm gives the same `stage`, or it would watch a metric nothing publishes.
 */
export function staleIndexAlarm(stack: Stack, props: StatelessStackProps, apiFn: MemoryFunction): void {
  const filter = new MetricFilter(stack, 'StaleSearchIndexFilter', {
    logGroup: apiFn.logGroup,
    filterPattern: FilterPattern.all(
      FilterPattern.stringValue('$.message', '=', STALE_INDEX_WARNING),
      FilterPattern.stringValue('$.stage', '=', props.stage),
    ),
    metricNamespace: METRICS_NAMESPACE,
    metricName: 'StaleSearchIndex',
    metricValue: '1',
    dimensions: { stage: '$.stage' },
  });
  new NotifyingAlarm(stack, 'StaleSearchIndexAlarm', {
    topic: props.alarmTopic,
    alarmDescription:
      "A search index's watermark is older than its change marks' TTL: changes made after it may have expired unfolded. Action: the api's log names the owner; rebuild its index from its stores with npm run reindex (docs/search-index.md, docs/deploy.md).",
    // MetricFilter.metric() leaves the filter's dimensions out: the alarm names the stage itself.
    metric: filter.metric({ statistic: 'Sum', period: Duration.hours(1), dimensionsMap: { stage: props.stage } }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
