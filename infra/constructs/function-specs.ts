/** What differs between the five memory functions: id, description, tracing, environment, event source, assets. */
import type { Stack } from 'aws-cdk-lib';
import { Tracing } from 'aws-cdk-lib/aws-lambda';
import type { SqsEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import { CONSOLE_FILES } from '../../functions/api/console.js';
import { ApiEnvSchema } from '../../functions/api/env.js';
import { IdleEnvSchema } from '../../functions/idle/env.js';
import { ReflectorEnvSchema } from '../../functions/reflector/env.js';
import { SignalEnvSchema } from '../../functions/signal/env.js';
import { SweepEnvSchema } from '../../functions/sweep/env.js';
import type { StageConfig } from '../config/stages.js';
import { tierPolicyOf } from '../../lib/tiers/tier-settings.js';
import { functionEnvironment } from '../function-environment.js';
import type { FunctionKey } from '../permissions.js';
import { FUNCTION_TIMEOUT_SECONDS, QUEUES } from '../resources.js';
import { jobModelEnvironment, modelIdFor } from '../stacks/reflector-model.js';
import type { StatelessStackProps } from '../stacks/stateless-props.js';

/** What differs between the five memory functions; the rest is MemoryFunction's default. */
export interface FunctionSpec {
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
 * L of the search index's watermark (lib/search/compaction-policy.ts MARK_LAG_MS): a
 * change mark's write lasts no longer than the invocation that sends it, so the longest
 * function timeout, and as much again for what is on the wire and for clocks apart.
 */
const SEARCH_MARK_LAG_SECONDS = String(2 * Math.max(...Object.values(FUNCTION_TIMEOUT_SECONDS)));

/**
 * The stage's tier policy overrides (TIER_POLICY) as the functions that apply tier rules read
 * them, validated at synth: an invalid one fails naming the field (`tiers.floors.long_term: …`).
 */
function tierPolicyVariable(config: StageConfig): string {
  tierPolicyOf(config.tiers, 'tiers');
  return JSON.stringify(config.tiers);
}

/** The variables naming the stage's embedding model, set only on a stage that embeds. */
function embeddingEnvironment(config: StageConfig): { EMBEDDING_MODEL_ID?: string; EMBEDDING_DIMENSIONS?: string } {
  return config.embeddings
    ? { EMBEDDING_MODEL_ID: config.embeddings.modelId, EMBEDDING_DIMENSIONS: String(config.embeddings.dimensions) }
    : {};
}

/** The five memory functions, one entry each: table code, built in the stack's scope. */
export const FUNCTION_SPECS: Record<FunctionKey, (stack: Stack, props: StatelessStackProps) => FunctionSpec> = {
  signal: (_stack, { stage, config, queues, table, bucket }) => ({
    id: 'SignalFunction',
    tracing: QUEUE_DRIVEN,
    description: 'TurnQueue → turn documents and index → signal state → jobs',
    environment: functionEnvironment(SignalEnvSchema, 'signal', config.logLevel, {
      STAGE: stage,
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      JOB_QUEUE_URL: queues.job.queue.queueUrl,
      IDLE_QUEUE_URL: queues.idle.queue.queueUrl,
      SIGNAL_CONFIG: JSON.stringify(config.signals),
      TIER_POLICY: tierPolicyVariable(config),
      REDACT_PERSONAL_DATA: String(config.redaction.personalData),
    }),
    source: { batchSize: 10, reportBatchItemFailures: true },
  }),
  idle: (_stack, { stage, config, queues, table, bucket }) => ({
    id: 'IdleFunction',
    tracing: QUEUE_DRIVEN,
    description: 'IdleQueue (delayed idle checks) → idle-summary jobs',
    environment: functionEnvironment(IdleEnvSchema, 'idle', config.logLevel, {
      STAGE: stage,
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      JOB_QUEUE_URL: queues.job.queue.queueUrl,
      IDLE_QUEUE_URL: queues.idle.queue.queueUrl,
      SIGNAL_CONFIG: JSON.stringify(config.signals),
    }),
    source: { batchSize: 10, reportBatchItemFailures: true },
  }),
  reflector: (stack, { stage, config, queues, table, bucket }) => ({
    id: 'ReflectorFunction',
    tracing: QUEUE_DRIVEN,
    description: 'Job queue → assemble → Bedrock Converse → gates → staging → batch log',
    environment: functionEnvironment(ReflectorEnvSchema, 'reflector', config.logLevel, {
      STAGE: stage,
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      MODEL_ID: modelIdFor(stack, config),
      ...jobModelEnvironment(stack, config),
      ANSWER_SHAPE: config.answerShape,
      JOB_MAX_RECEIVES: String(QUEUES.job.maxReceiveCount),
      JOB_QUEUE_URL: queues.job.queue.queueUrl,
      MODEL_RETRY_DELAY_SECONDS: '30',
      FORGET_SETTLE_SECONDS: String(Math.max(FUNCTION_TIMEOUT_SECONDS.signal, FUNCTION_TIMEOUT_SECONDS.api) + 5),
      SUMMARIES_ENABLED: String(config.summaries.enabled),
      SUMMARY_PROMPT: config.summaries.prompt,
      SUMMARY_MAX_TOKENS: String(config.summaries.maxTokens),
      SLEEP_TIME_CONFIG: JSON.stringify(config.sleepTime),
      TIER_POLICY: tierPolicyVariable(config),
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
      JOB_QUEUE_URL: queues.job.queue.queueUrl,
      SLEEP_TIME_CONFIG: JSON.stringify(config.sleepTime),
      TIER_POLICY: tierPolicyVariable(config),
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
      JOB_QUEUE_URL: queues.job.queue.queueUrl,
      TURN_QUEUE_URL: queues.turn.queue.queueUrl,
      REDACT_PERSONAL_DATA: String(config.redaction.personalData),
      SEARCH_MARK_LAG_SECONDS,
      ...embeddingEnvironment(config),
    }),
    // The review console's page (functions/api/console.ts reads it beside the bundle).
    assets: CONSOLE_FILES.map((file) => `functions/api/${file}`),
  }),
};
