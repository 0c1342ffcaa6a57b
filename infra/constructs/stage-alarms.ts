/** The stateless stack's alarms: per-function errors and throttles, the daily model cost, a stale search index. */
import { Duration, type Stack } from 'aws-cdk-lib';
import { ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { METRICS_NAMESPACE } from '../../lib/kernel/metrics.adapter.js';
import { STALE_INDEX_WARNING } from '../../lib/search/search-api.js';
import type { StatelessStackProps } from '../stacks/stateless-props.js';
import type { MemoryFunction } from './memory-function.js';
import { NotifyingAlarm } from './notifying-alarm.js';

/**
 * Errors and Throttles alarms per function, each the Sum over 5 minutes against the stage's
 * thresholds. Errors counts invocations that end in a function error: an exception out of the
 * handler, a timeout, a runtime or init failure; records that fail inside a batch are reported
 * as partial batch failures and are not errors. Throttles counts invocation requests refused
 * for lack of concurrency. https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html
 */
export function functionAlarms(
  stack: Stack,
  props: StatelessStackProps,
  fns: Record<'Signal' | 'Reflector' | 'Idle' | 'Sweep' | 'Api', MemoryFunction>,
): void {
  const { alarms } = props.config;
  for (const [name, fn] of Object.entries(fns)) {
    const common = {
      topic: props.alarmTopic,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    };
    new NotifyingAlarm(stack, `${name}FunctionErrorsAlarm`, {
      ...common,
      alarmDescription: `The ${name.toLowerCase()} function failed (exception, timeout or init error): see its log group.`,
      metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: alarms.functionErrors,
    });
    new NotifyingAlarm(stack, `${name}FunctionThrottlesAlarm`, {
      ...common,
      alarmDescription: `The ${name.toLowerCase()} function was throttled: the account's or the function's concurrency is exhausted.`,
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
 * dimension the reflector gives it (lib/kernel/metrics.adapter.ts addModelCost) keeps their sums apart.
 */
export function costAlarm(stack: Stack, props: StatelessStackProps): void {
  new NotifyingAlarm(stack, 'DailyModelCostAlarm', {
    topic: props.alarmTopic,
    alarmDescription: `The model cost of the last day passed $${props.config.alarms.dailyModelCostUsd}: GET /v1/costs gives the totals by day and kind, GET /v1/users/{u}/costs a user's.`,
    metric: new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: 'ModelCostUsd',
      dimensionsMap: { service: 'reflector', stage: props.stage },
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
      "A search index's watermark is older than its change marks' TTL: changes made after it may have expired unfolded. The api's log names the owner; rebuild its index from its stores (docs/search-index.md).",
    // MetricFilter.metric() leaves the filter's dimensions out: the alarm names the stage itself.
    metric: filter.metric({ statistic: 'Sum', period: Duration.hours(1), dimensionsMap: { stage: props.stage } }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
