import { fileURLToPath } from 'node:url';
import { type CfnElement, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { METRICS_NAMESPACE } from '../../lib/kernel/metrics.adapter.js';
import { STALE_INDEX_WARNING } from '../../lib/search/search-api.js';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Code, Function as LambdaFn, RecursiveLoop, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource, type SqsEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import { FilterPattern, LogGroup, MetricFilter, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { type NagPackSuppression, NagSuppressions, type RegexAppliesTo } from 'cdk-nag';
import type { Construct } from 'constructs';
import { CONSOLE_FILES } from '../../functions/api/console.js';
import { ApiEnvSchema } from '../../functions/api/env.js';
import { IdleEnvSchema } from '../../functions/idle/env.js';
import { ReflectorEnvSchema } from '../../functions/reflector/env.js';
import { SignalEnvSchema } from '../../functions/signal/env.js';
import { SweepEnvSchema } from '../../functions/sweep/env.js';
import type { StageConfig } from '../config/stages.js';
import { tierPolicyOf } from '../../lib/tiers/tier-settings.js';
import { functionEnvironment } from '../function-environment.js';
import { functionRole, MemoryFunction } from '../constructs/memory-function.js';
import { NotifyingAlarm } from '../constructs/notifying-alarm.js';
import { type FunctionKey, PERMISSIONS, type Permissions } from '../permissions.js';
import { FUNCTION_TIMEOUT_SECONDS, QUEUES, type QueueKey, SWEEPS } from '../resources.js';
import { jobModelEnvironment, modelGrant, modelGrantWildcards, modelIdFor } from './reflector-model.js';
import type { MemoryQueue, MemoryUserPool } from './stateful-stack.js';

export interface StatelessStackProps extends StackProps {
  stage: string;
  config: StageConfig;
  table: Table;
  bucket: Bucket;
  queues: Record<QueueKey, MemoryQueue>;
  /** The key of the table, bucket and queues (the stateful stack's `dataKey`). */
  dataKey: IKey;
  /** The Cognito pool the memory API trusts; required when `config.auth.issuer` is not set. */
  users?: MemoryUserPool;
  /** The stage's alarm topic (the stateful stack's `alarmTopic`): every alarm here notifies it. */
  alarmTopic: ITopic;
  /** What each function may do. @default PERMISSIONS (infra/permissions.ts); tests grant less to show a denial. */
  permissions?: Record<FunctionKey, Permissions>;
  /** Each function's recursive loop setting. @default RECURSIVE_LOOPS; tests leave it out to show what Lambda does then. */
  recursiveLoops?: RecursiveLoops;
}

/** A function's RecursiveLoop setting (AWS::Lambda::Function RecursiveLoop); one left out is Lambda's default, Terminate. */
export type RecursiveLoops = Partial<Record<FunctionKey, 'Allow' | 'Terminate'>>;

/**
 * Functions that send to the queue that invokes them, allowed to: Lambda stops an SQS → function
 * → same queue chain once the function has been invoked 16 times in it (recursive loop
 * detection, on by default: https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html).
 * The idle check puts itself back on the IdleQueue while it must wait longer than SQS's 900-s
 * delay allows (a user's threshold of up to a day, lib/settings/user-settings.ts) and while the
 * user keeps talking (lib/signals/check-idle.ts): a threshold over 4 hours takes more than 16
 * hops. The guard Lambda's detection stood for is the idle rule's own: one pending check per
 * user, which stops as superseded once a newer check is sent and stops for good when it
 * summarises or finds nothing to do, so no check loops without a user's turn having sent it
 * within a threshold (at most 96 hops of 15 minutes). The reflector continues a large forget
 * in a fresh job on the ReflectionQueue (lib/forget/forget-user.ts): a user of many items
 * takes more than 16; its guard is that a job which erased nothing does not continue, and the
 * forget's items only decrease. The test in test/infra/recursive-loops.test.ts derives from the
 * templates which functions send to their own queue.
 */
export const RECURSIVE_LOOPS: RecursiveLoops = { idle: 'Allow', reflector: 'Allow' };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const entry = (name: string) => `${ROOT}functions/${name}/handler.ts`;

/**
 * A cdk-nag `appliesTo` for the IAM5 finding on the wildcard resource `<ARN of resource>/<tail>`.
 * The resource lives in the stateful stack, so cdk-nag renders its ARN either as a GetAtt
 * (`<MemoryBucket1234ABCD.Arn>`) or as the name of the stateful stack's export; both name the
 * resource's logical id in one path segment, and the tail must match exactly.
 */
const wildcardUnder = (resource: Construct, tail: string): RegexAppliesTo => {
  const logicalId = Stack.of(resource).getLogicalId(resource.node.defaultChild as CfnElement);
  const literal = tail.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return { regex: `/^Resource::[^/]*${logicalId}[^/]*\\/${literal}$/` };
};

/** What differs between the five memory functions; the rest is MemoryFunction's default. */
interface FunctionSpec {
  /** The construct id (and the start of every logical id under it). */
  id: string;
  description: string;
  /** @default Tracing.ACTIVE */
  tracing?: Tracing;
  environment: Record<string, string>;
  /** The SQS event source, for a function that consumes a queue (infra/permissions.ts `consumes`). */
  source?: SqsEventSourceProps;
  /** Files read at run time, copied beside the bundle (MemoryFunctionProps.assets). */
  assets?: string[];
}

// Queue-driven functions are traced only when the publisher's trace was sampled (an
// ACTIVE queue function records about every invocation).
const QUEUE_DRIVEN = Tracing.PASS_THROUGH;

/**
 * L of the search index's watermark (lib/search/search-index.ts MARK_LAG_MS): a
 * change mark's write lasts no longer than the invocation that sends it, so the longest
 * function timeout, and as much again for what is on the wire and for clocks apart.
 */
const SEARCH_MARK_LAG_SECONDS = String(2 * Math.max(...Object.values(FUNCTION_TIMEOUT_SECONDS)));

/** The variables naming the stage's embedding model, set only on a stage that embeds. */
/** The stage's tier policy overrides as the api reads them (TIER_POLICY), validated at synth: an invalid one fails naming the field (`tiers.floors.long_term: …`). */
function tierPolicyVariable(config: StageConfig): string {
  tierPolicyOf(config.tiers, 'tiers');
  return JSON.stringify(config.tiers);
}

function embeddingEnvironment(config: StageConfig): { EMBEDDING_MODEL_ID?: string; EMBEDDING_DIMENSIONS?: string } {
  return config.embeddings ? { EMBEDDING_MODEL_ID: config.embeddings.modelId, EMBEDDING_DIMENSIONS: String(config.embeddings.dimensions) } : {};
}

/**
 * bedrock:InvokeModel on the embedding model's foundation-model ARN in the stack's Region (no
 * wildcard): the resource an on-demand InvokeModel of a bare model id is authorised on
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonbedrock.html).
 */
function embeddingGrant(stack: Stack, modelId: string): PolicyStatement {
  return new PolicyStatement({ sid: 'InvokeEmbeddingModel', actions: ['bedrock:InvokeModel'], resources: [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${modelId}`] });
}

/** The five memory functions, one entry each: table code, built in the stack's scope. */
const FUNCTIONS: Record<FunctionKey, (stack: Stack, props: StatelessStackProps) => FunctionSpec> = {
  signal: (_stack, { config, queues, table, bucket }) => ({
    id: 'SignalFunction',
    tracing: QUEUE_DRIVEN,
    description: 'TurnQueue → turn documents and index → signal state → jobs',
    environment: functionEnvironment(SignalEnvSchema, 'signal', config.logLevel, {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
      IDLE_QUEUE_URL: queues.idle.queue.queueUrl,
      SIGNAL_CONFIG: JSON.stringify(config.signals),
      REDACT_PERSONAL_DATA: String(config.redaction.personalData),
    }),
    source: { batchSize: 10, reportBatchItemFailures: true },
  }),
  idle: (_stack, { config, queues, table, bucket }) => ({
    id: 'IdleFunction',
    tracing: QUEUE_DRIVEN,
    description: 'IdleQueue (delayed idle checks) → idle-summary jobs',
    environment: functionEnvironment(IdleEnvSchema, 'idle', config.logLevel, {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
      IDLE_QUEUE_URL: queues.idle.queue.queueUrl,
      SIGNAL_CONFIG: JSON.stringify(config.signals),
    }),
    source: { batchSize: 10, reportBatchItemFailures: true },
  }),
  reflector: (stack, { stage, config, queues, table, bucket }) => ({
    id: 'ReflectorFunction',
    tracing: QUEUE_DRIVEN,
    description: 'ReflectionQueue → assemble → Bedrock Converse → gates → staging → batch log',
    environment: functionEnvironment(ReflectorEnvSchema, 'reflector', config.logLevel, {
      STAGE: stage,
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      MODEL_ID: modelIdFor(stack, config),
      ...jobModelEnvironment(stack, config),
      ANSWER_SHAPE: config.answerShape,
      REFLECTION_MAX_RECEIVES: String(QUEUES.reflection.maxReceiveCount),
      REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
      MODEL_RETRY_DELAY_SECONDS: '30',
      FORGET_SETTLE_SECONDS: String(Math.max(FUNCTION_TIMEOUT_SECONDS.signal, FUNCTION_TIMEOUT_SECONDS.api) + 5),
      SUMMARIES_ENABLED: String(config.summaries.enabled),
      SUMMARY_PROMPT: config.summaries.prompt,
      SUMMARY_MAX_TOKENS: String(config.summaries.maxTokens),
      SLEEP_TIME_CONFIG: JSON.stringify(config.sleepTime),
      SEARCH_MARK_LAG_SECONDS,
      ...embeddingEnvironment(config),
    }),
    // MaximumConcurrency (2–1000) caps the concurrent invocations this event source starts, so
    // a nightly fan-out reaches Bedrock with at most maxConcurrency.reflector calls at a time
    // while the other jobs wait in the queue. AWS advises it, not reserved concurrency, to limit
    // an SQS consumer: reserved concurrency throttles batches the event source already read.
    // https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html,
    // https://docs.aws.amazon.com/lambda/latest/dg/API_ScalingConfig.html,
    // https://repost.aws/knowledge-center/lambda-sqs-scaling
    source: { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: config.maxConcurrency.reflector },
  }),
  sweep: (_stack, { config, queues, table, bucket }) => ({
    id: 'SweepFunction',
    description: 'Scheduled sweeps: nightly and weekly reflection fan-out, staged-item expiry',
    environment: functionEnvironment(SweepEnvSchema, 'sweep', config.logLevel, {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
      SLEEP_TIME_CONFIG: JSON.stringify(config.sleepTime),
    }),
  }),
  api: (_stack, { stage, config, queues, table, bucket }) => ({
    id: 'ApiFunction',
    description: 'Memory API: search/save/retrieve, tiers, summaries, sleep-time runs, review console',
    environment: functionEnvironment(ApiEnvSchema, 'api', config.logLevel, {
      STAGE: stage,
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      SLEEP_TIME_CONFIG: JSON.stringify(config.sleepTime),
      TIER_POLICY: tierPolicyVariable(config),
      REFLECTION_QUEUE_URL: queues.reflection.queue.queueUrl,
      TURN_QUEUE_URL: queues.turn.queue.queueUrl,
      REDACT_PERSONAL_DATA: String(config.redaction.personalData),
      SEARCH_MARK_LAG_SECONDS,
      ...embeddingEnvironment(config),
    }),
    // The review console's page (functions/api/console.ts reads it beside the bundle).
    assets: CONSOLE_FILES.map((file) => `functions/api/${file}`),
  }),
};

const recursiveLoop = (setting: 'Allow' | 'Terminate' | undefined): { recursiveLoop?: RecursiveLoop } =>
  setting === undefined ? {} : { recursiveLoop: setting === 'Allow' ? RecursiveLoop.ALLOW : RecursiveLoop.TERMINATE };

/** Functions, their event sources, grants and schedules, and the memory API. */
export class StatelessStack extends Stack {
  readonly signalFn: MemoryFunction;
  readonly reflectorFn: MemoryFunction;
  readonly idleFn: MemoryFunction;
  readonly sweepFn: MemoryFunction;
  readonly apiFn: MemoryFunction;
  readonly api: HttpApi;
  /** Where EventBridge puts a sweep event it could not deliver to the sweep function. */
  readonly sweepDlq: Queue;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const permissions = props.permissions ?? PERMISSIONS;
    this.signalFn = this.memoryFunction('signal', permissions.signal, props);
    this.idleFn = this.memoryFunction('idle', permissions.idle, props);
    this.reflectorFn = this.memoryFunction('reflector', permissions.reflector, props);
    this.sweepFn = this.memoryFunction('sweep', permissions.sweep, props);
    this.sweepDlq = this.sweepSchedules(props);
    this.apiFn = this.memoryFunction('api', permissions.api, props);

    this.api = this.memoryApi(props);
    this.functionAlarms(props);
    this.costAlarm(props);
    this.staleIndexAlarm(props);
    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Memory API base URL: /v1/* needs a bearer JWT; /openapi.json and /console are public' });
  }

  /** One memory function as FUNCTIONS describes it: its event source, if any, and its grants. */
  private memoryFunction(key: FunctionKey, permissions: Permissions, props: StatelessStackProps): MemoryFunction {
    const spec = FUNCTIONS[key](this, props);
    const fn = new MemoryFunction(this, spec.id, {
      tracing: spec.tracing,
      entry: entry(key),
      projectRoot: ROOT,
      description: spec.description,
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS[key],
      memorySize: props.config.memoryMb[key],
      environment: spec.environment,
      assets: spec.assets,
      ...recursiveLoop((props.recursiveLoops ?? RECURSIVE_LOOPS)[key]),
    });
    if (spec.source) fn.addEventSource(this.eventSource(permissions, props, spec.source));
    this.grantPermissions(fn, permissions, props);
    return fn;
  }

  /**
   * The nightly, weekly and expiry schedules onto the sweep function, with a dead-letter queue
   * for their target. EventBridge retries a failed delivery twice, for at most an hour (a sweep
   * an hour late is better looked at and run by hand than retried unseen), then puts the event
   * in the DLQ with RULE_ARN, TARGET_ARN, ERROR_CODE and ERROR_MESSAGE attributes.
   * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html,
   * https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_RetryPolicy.html
   *
   * That DLQ catches what EventBridge could not hand to Lambda (a missing permission, a deleted
   * function). EventBridge invokes the function asynchronously, so an error *inside* a sweep is
   * Lambda's to retry (twice) and is then dropped; the sweep function's Errors alarm reports it
   * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).
   *
   * The queue: standard (EventBridge refuses a FIFO DLQ), its policy lets events.amazonaws.com
   * send only for these rules (aws:SourceArn; CDK's LambdaFunction target adds the statement, as
   * the EventBridge page above shows it), and it is encrypted with SQS-managed keys (SSE-SQS),
   * not the data key: with SSE-KMS, EventBridge could send only if the key policy named
   * events.amazonaws.com (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html#compatibility-with-aws-services),
   * which the stateful stack cannot write for rules of this stack without a cyclic reference,
   * nor at all for a key the stage brings. The queue holds schedule events (which sweep, which
   * time), no user memory.
   */
  private sweepSchedules(props: StatelessStackProps): Queue {
    const dlq = new Queue(this, 'SweepScheduleDlq', {
      queueName: `reflective-memory-${props.stage}-SweepScheduleDlq`,
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    NagSuppressions.addResourceSuppressions(dlq, [
      {
        id: 'AwsSolutions-SQS3',
        reason:
          "This queue is itself a dead-letter queue: the sweep schedules' EventBridge target DLQ (EventBridge's DeadLetterConfig, which cdk-nag does not see as a redrive policy). Its depth alarm notifies the stage's alarm topic.",
      },
    ]);
    for (const sweep of SWEEPS) {
      const name = sweep.charAt(0).toUpperCase() + sweep.slice(1);
      new Rule(this, `${name}Schedule`, {
        description: `${sweep} sweep`,
        schedule: Schedule.expression(props.config.schedules[sweep]),
        targets: [
          new LambdaFunction(this.sweepFn, {
            // The schedule's own time travels with it: the sweep's "now" is never the wall clock.
            event: RuleTargetInput.fromObject({ sweep, time: EventField.time }),
            retryAttempts: 2,
            maxEventAge: Duration.hours(1),
            deadLetterQueue: dlq,
          }),
        ],
      });
    }
    new NotifyingAlarm(this, 'SweepScheduleDlqDepthAlarm', {
      topic: props.alarmTopic,
      alarmDescription:
        'A scheduled sweep could not be delivered to the sweep function: read the message attributes (ERROR_CODE, ERROR_MESSAGE, RULE_ARN), fix the cause, then invoke the sweep function with {"sweep": "...", "time": "<the schedule time>"}.',
      metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    return dlq;
  }

  /**
   * Errors and Throttles alarms per function, each the Sum over 5 minutes against the stage's
   * thresholds. Errors counts invocations that end in a function error: an exception out of the
   * handler, a timeout, a runtime or init failure; records that fail inside a batch are reported
   * as partial batch failures and are not errors. Throttles counts invocation requests refused
   * for lack of concurrency. https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html
   */
  private functionAlarms(props: StatelessStackProps): void {
    const { alarms } = props.config;
    const fns = { Signal: this.signalFn, Reflector: this.reflectorFn, Idle: this.idleFn, Sweep: this.sweepFn, Api: this.apiFn };
    for (const [name, fn] of Object.entries(fns)) {
      const common = {
        topic: props.alarmTopic,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      };
      new NotifyingAlarm(this, `${name}FunctionErrorsAlarm`, {
        ...common,
        alarmDescription: `The ${name.toLowerCase()} function failed (exception, timeout or init error): see its log group.`,
        metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: alarms.functionErrors,
      });
      new NotifyingAlarm(this, `${name}FunctionThrottlesAlarm`, {
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
  private costAlarm(props: StatelessStackProps): void {
    new NotifyingAlarm(this, 'DailyModelCostAlarm', {
      topic: props.alarmTopic,
      alarmDescription: `The model cost of the last day passed $${props.config.alarms.dailyModelCostUsd}: GET /v1/costs gives the totals by day and kind, GET /v1/users/{u}/costs a user's.`,
      metric: new Metric({ namespace: METRICS_NAMESPACE, metricName: 'ModelCostUsd', dimensionsMap: { service: 'reflector', stage: props.stage }, statistic: 'Sum', period: Duration.days(1) }),
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
  private staleIndexAlarm(props: StatelessStackProps): void {
    const filter = new MetricFilter(this, 'StaleSearchIndexFilter', {
      logGroup: this.apiFn.logGroup,
      filterPattern: FilterPattern.all(FilterPattern.stringValue('$.message', '=', STALE_INDEX_WARNING), FilterPattern.stringValue('$.stage', '=', props.stage)),
      metricNamespace: METRICS_NAMESPACE,
      metricName: 'StaleSearchIndex',
      metricValue: '1',
      dimensions: { stage: '$.stage' },
    });
    new NotifyingAlarm(this, 'StaleSearchIndexAlarm', {
      topic: props.alarmTopic,
      alarmDescription: "A search index's watermark is older than its change marks' TTL: changes made after it may have expired unfolded. The api's log names the owner; rebuild its index from its stores (docs/search-index.md).",
      // MetricFilter.metric() leaves the filter's dimensions out: the alarm names the stage itself.
      metric: filter.metric({ statistic: 'Sum', period: Duration.hours(1), dimensionsMap: { stage: props.stage } }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * The event source on the queue infra/permissions.ts says the function consumes. It is
   * built on a view of the queue that leaves its key out, so the event source grants only
   * the SQS actions (receive, delete, visibility): CDK would otherwise add kms:Decrypt on
   * the key with no condition, and the function's KMS grants come from the table instead.
   */
  private eventSource(permissions: Permissions, props: StatelessStackProps, options: SqsEventSourceProps): SqsEventSource {
    const key = permissions.consumes;
    if (key === null) throw new Error('this function consumes no queue (infra/permissions.ts)');
    const { queue } = props.queues[key];
    const view = Queue.fromQueueAttributes(this, `${QUEUES[key].id}Source`, { queueArn: queue.queueArn, queueUrl: queue.queueUrl, fifo: QUEUES[key].fifo });
    return new SqsEventSource(view, options);
  }

  /**
   * Grants exactly what infra/permissions.ts lists for the function: DynamoDB actions on the
   * table and its indexes, S3 actions on the listed key patterns, SendMessage on the listed
   * queues, InvokeModel on the stage's model (its Region's inference profile and the foundation
   * models that profile routes to, no wildcard), and KMS actions on the data key, each only
   * through the service that uses it. No grant helper with wider actions is used.
   */
  private grantPermissions(fn: MemoryFunction, permissions: Permissions, props: StatelessStackProps): void {
    const { table, bucket, queues, config, dataKey } = props;
    if (permissions.dynamodb.length > 0) table.grant(fn, ...permissions.dynamodb.map((a) => `dynamodb:${a}`));
    for (const [pattern, actions] of Object.entries(permissions.s3)) {
      fn.addToRolePolicy(new PolicyStatement({ actions: actions.map((a) => `s3:${a}`), resources: [bucket.arnForObjects(pattern)] }));
    }
    if (permissions.listBucket) fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
    if (permissions.listBucketVersions) fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucketVersions'], resources: [bucket.bucketArn] }));
    if (permissions.sends.length > 0) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: permissions.sends.map((q) => queues[q].queue.queueArn) }));
    }
    for (const [service, actions] of Object.entries(permissions.kms)) {
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: actions.map((a) => `kms:${a}`),
          resources: [dataKey.keyArn],
          conditions: { StringEquals: { 'kms:ViaService': `${service}.${this.region}.amazonaws.com` } },
        }),
      );
    }
    // InvokeModel on the stage's model: its inference profile in this Region and the foundation
    // model in every Region, only through the profile (infra/stacks/reflector-model.ts).
    if (permissions.model) for (const statement of modelGrant(this, config)) fn.addToRolePolicy(statement);
    // InvokeModel on the embedding model, in this Region, only on a stage that embeds.
    if (permissions.embeddings && config.embeddings) fn.addToRolePolicy(embeddingGrant(this, config.embeddings.modelId));

    // cdk-nag AwsSolutions-IAM5 flags every wildcard resource; these are the intended ones,
    // each named exactly (appliesTo), so any other wildcard on the role is still reported.
    const wildcards: NagPackSuppression[] = [];
    if (permissions.dynamodb.length > 0) {
      wildcards.push({
        id: 'AwsSolutions-IAM5',
        reason:
          "The table grant also covers the table's global secondary indexes (index/*, today only gsi1), which Query needs; the actions are exactly the DynamoDB actions infra/permissions.ts lists for this function.",
        appliesTo: [wildcardUnder(table, 'index/*')],
      });
    }
    const patterns = Object.keys(permissions.s3);
    if (patterns.length > 0) {
      wildcards.push({
        id: 'AwsSolutions-IAM5',
        reason: `S3 grants are per key prefix, exactly as infra/permissions.ts lists them for this function (${patterns.join(', ')}): the wildcards stand for user ids and object names, known only per request, and test/infra/stacks.test.ts checks that the synthesized grants equal that table.`,
        appliesTo: patterns.map((pattern) => wildcardUnder(bucket, pattern)),
      });
    }
    const modelWildcards = permissions.model ? modelGrantWildcards(config) : null;
    if (modelWildcards) wildcards.push(modelWildcards);
    if (wildcards.length > 0) NagSuppressions.addResourceSuppressions(fn.role!, wildcards, true);
  }

  /**
   * The HTTP API in front of the API function. `/v1/*` needs a JWT from the trusted issuer
   * (the stage's own OIDC issuer, or the stateful stack's Cognito pool); the OpenAPI document
   * and the review console's page are public, and the console signs in to call `/v1/*`.
   */
  private memoryApi(props: StatelessStackProps): HttpApi {
    const authorizer = this.jwtAuthorizer(props);
    const api = this.httpApi(props);
    const integration = new HttpLambdaIntegration('ApiIntegration', this.apiFn);
    this.publicRoutes(api, integration);
    api.addRoutes({ path: '/v1/{proxy+}', methods: [HttpMethod.ANY], integration, authorizer });
    this.preflightRoute(api);
    return api;
  }

  /** The JWT authorizer of `/v1/*`: the stage's own OIDC issuer, or the stateful stack's Cognito pool. */
  private jwtAuthorizer(props: StatelessStackProps): HttpJwtAuthorizer {
    const { config } = props;
    let issuer: string;
    let audience: string[];
    if (config.auth.issuer) {
      issuer = config.auth.issuer;
      audience = config.auth.audience ?? [];
      if (audience.length === 0) throw new Error(`stage ${props.stage}: auth.issuer is set, so auth.audience must list at least one audience`);
    } else {
      if (!props.users) throw new Error(`stage ${props.stage}: no auth.issuer, so the stateful stack's Cognito user pool must be passed in`);
      // ProviderURL is cognito-idp.<region>.amazonaws.com/<pool id>: the issuer without its scheme.
      issuer = `https://${props.users.userPool.userPoolProviderUrl}`;
      audience = [props.users.client.userPoolClientId];
    }
    return new HttpJwtAuthorizer('JwtAuthorizer', issuer, {
      jwtAudience: audience,
      identitySource: ['$request.header.Authorization'],
    });
  }

  /** The HTTP API with CORS and its $default stage: throttled, with JSON access logs. */
  private httpApi(props: StatelessStackProps): HttpApi {
    const api = new HttpApi(this, 'MemoryApi', {
      apiName: `reflective-memory-${props.stage}-api`,
      description: 'Reflective memory API',
      corsPreflight: {
        allowOrigins: ['*'],
        allowHeaders: ['Authorization', 'Content-Type'],
        allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.PUT, CorsHttpMethod.PATCH, CorsHttpMethod.DELETE, CorsHttpMethod.OPTIONS],
        maxAge: Duration.hours(1),
      },
      // The $default stage is added below, with throttling and access logs.
      createDefaultStage: false,
    });
    const accessLogs = new LogGroup(this, 'MemoryApiAccessLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    new HttpStage(this, 'MemoryApiDefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: 100, burstLimit: 200 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            ip: AccessLogField.contextIdentitySourceIp(),
            requestTime: AccessLogField.contextRequestTime(),
            routeKey: AccessLogField.contextRouteKey(),
            path: AccessLogField.contextPath(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            latency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            integrationError: AccessLogField.contextIntegrationErrorMessage(),
            authorizerError: AccessLogField.contextAuthorizerError(),
            sub: AccessLogField.contextAuthorizerClaims('sub'),
          }),
        ),
      },
    });
    return api;
  }

  /** GET /openapi.json and GET /console: public, answered by the API function. */
  private publicRoutes(api: HttpApi, integration: HttpLambdaIntegration): void {
    const openapi = api.addRoutes({ path: '/openapi.json', methods: [HttpMethod.GET], integration });
    NagSuppressions.addResourceSuppressions(openapi, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'The OpenAPI document is public by design: the API function answers it with the document generated from the route contract and reads no memory for it; every /v1 route it describes needs a JWT.',
      },
    ]);
    const consolePage = api.addRoutes({ path: '/console', methods: [HttpMethod.GET], integration });
    NagSuppressions.addResourceSuppressions(consolePage, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'The review console page is public by design: the API function answers it with one fixed HTML page and reads no memory for it; the page calls /v1/* with the bearer token the reviewer enters, and those routes need a JWT.',
      },
    ]);
  }

  /**
   * The OPTIONS route of `/v1/*`, without the authorizer, onto a tiny function of its own.
   *
   * An ANY route also catches the browser's CORS preflight, which carries no token, so the
   * authorizer would refuse it. A more specific OPTIONS route without the authorizer wins;
   * it goes to a tiny function, never to the memory function, and API Gateway adds the CORS
   * headers of the API's corsPreflight (httpApi) to its 204. Its role may only write its own log group; it has
   * no bundle and no dependencies, so it runs on the newest Node.js runtime.
   */
  private preflightRoute(api: HttpApi): void {
    const preflightLogs = new LogGroup(this, 'PreflightFunctionLogs', { retention: RetentionDays.ONE_WEEK, removalPolicy: RemovalPolicy.DESTROY });
    const preflightFn = new LambdaFn(this, 'PreflightFunction', {
      description: 'CORS preflight for /v1/*: 204, no body',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: 128,
      timeout: Duration.seconds(3),
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({ statusCode: 204 });'),
      logGroup: preflightLogs,
      role: functionRole(this, 'PreflightFunctionRole', preflightLogs),
    });
    const preflight = api.addRoutes({ path: '/v1/{proxy+}', methods: [HttpMethod.OPTIONS], integration: new HttpLambdaIntegration('PreflightIntegration', preflightFn) });
    NagSuppressions.addResourceSuppressions(preflight, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Browsers send the CORS preflight without the Authorization header, so this OPTIONS route cannot carry the JWT authorizer; it goes to a function that returns 204 with no body and whose role may only write its own logs, never to the memory function.',
      },
    ]);
  }
}
