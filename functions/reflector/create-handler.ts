/**
 * reflector — ReflectionQueue (SQS FIFO, group = userId) → one reflection per job.
 * Powertools' FIFO processor keeps order per user: when a job fails, the later jobs of
 * the same user go back to the queue too, other users' jobs are unaffected.
 */
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type ReflectionJob, ReflectionJobSchema } from '../../events/reflection-job.js';
import type { AwsClients } from '../../lib/adapters/aws-clients.js';
import { S3DynamoBatchLogStore } from '../../lib/adapters/batch-log-store.js';
import { BedrockConverseModel } from '../../lib/adapters/bedrock-converse-model.js';
import { DynamoDiaryStore } from '../../lib/adapters/dynamo-diary-store.js';
import { DynamoGraphStore } from '../../lib/adapters/dynamo-graph-store.js';
import { DynamoSignalStateStore } from '../../lib/adapters/dynamo-signal-state.js';
import { DynamoSourceReliabilityStore } from '../../lib/adapters/dynamo-source-reliability.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/adapters/search-index-store.js';
import { StoreMemoryCatalog } from '../../lib/use-cases/memory-catalog.js';
import { DynamoMemoryItemStore } from '../../lib/adapters/memory-item-store.js';
import { S3DynamoTurnStore } from '../../lib/adapters/dynamo-turn-store.js';
import { KnowledgeRepository } from '../../lib/adapters/knowledge-repository.js';
import { createLogger } from '../../lib/adapters/logger.js';
import { createMetrics, MetricUnit } from '../../lib/adapters/metrics.js';
import { DynamoCostLedger } from '../../lib/adapters/dynamo-cost-ledger.js';
import { DynamoUserSettingsStore } from '../../lib/adapters/dynamo-user-settings.js';
import { type JobUsage, runUsage, usageOf } from '../../lib/use-cases/job-cost.js';
import { DynamoReflectionLogStore, DynamoSummarySource } from '../../lib/adapters/reflection-log-store.js';
import { S3DynamoReflectionStore } from '../../lib/adapters/reflection-store.js';
import { S3RejectedEventLog } from '../../lib/adapters/s3-rejected-log.js';
import { SqsRedelivery } from '../../lib/adapters/sqs-redelivery.js';
import { parseSleepTimeConfig } from '../../lib/domain/sleep-time/config.js';
import { BatchNotRecordedError, type Clock, type Log, ModelAccessDeniedError, ModelUnavailableError } from '../../lib/ports.js';
import { parseOrKeep } from '../../lib/use-cases/parse-or-keep.js';
import { type ReflectionDeps, recordFailedAttempt, runReflection } from '../../lib/use-cases/run-reflection.js';
import { runNightly, runWeekly, type SleepTimeDeps } from '../../lib/use-cases/run-sleep-time.js';
import { runSummary, SUMMARY_KINDS, type SummaryDeps } from '../../lib/use-cases/run-summary.js';
import { COMPACT_AFTER_JOB, LiveSearchIndex } from '../../lib/use-cases/search-index.js';
import { DynamoForgetLog } from '../../lib/adapters/dynamo-forget-log.js';
import { DynamoS3UserEraser } from '../../lib/adapters/user-eraser.js';
import { ForgetContinuesError, type ForgetDeps, forgetUser, forgottenBefore } from '../../lib/use-cases/forget-user.js';
import type { ReflectorEnv } from './env.js';

export type ReflectorHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** Deliveries that may ask the model again for an unusable answer: the first and its one retry (seed 000 §9). */
const UNUSABLE_OUTPUT_DELIVERIES = 2;

type Clients = Pick<AwsClients, 'ddb' | 's3' | 'sqs' | 'bedrock'>;

/** The three use cases' dependencies, over one set of stores. */
function reflectorDeps(env: ReflectorEnv, { ddb, s3, bedrock }: Clients, clock: Clock, log: Log) {
  const { TABLE_NAME: table, BUCKET_NAME: bucket } = env;
  const model = new BedrockConverseModel(bedrock, env.MODEL_ID);
  const changes = new DynamoSearchChangeLog(ddb, table);
  const turns = new S3DynamoTurnStore(ddb, s3, table, bucket, changes);
  const costs = new DynamoCostLedger(ddb, table);
  const knowledge = new KnowledgeRepository(ddb, s3, table, bucket, changes);
  const reflections = new S3DynamoReflectionStore(ddb, s3, table, bucket, changes);
  const items = new DynamoMemoryItemStore(ddb, table, changes);
  const diary = new DynamoDiaryStore(ddb, table, changes);
  const catalog = new StoreMemoryCatalog({ turns, knowledge, reflections, items, diary, stagedExpiryDays: parseSleepTimeConfig(env.SLEEP_TIME_CONFIG).stagedExpiryDays });
  const search = new LiveSearchIndex({ store: new DynamoS3SearchIndexStore(ddb, s3, table, bucket), catalog, clock });
  const reflection: ReflectionDeps = {
    turns,
    signalState: new DynamoSignalStateStore(ddb, table, clock),
    knowledge,
    batchLogs: new S3DynamoBatchLogStore(ddb, s3, table, bucket),
    sources: new DynamoSourceReliabilityStore(ddb, table, clock),
    graph: new DynamoGraphStore(ddb, table),
    costs,
    diary,
    model,
    clock,
    log,
    settings: { temperature: env.MODEL_TEMPERATURE, maxTokens: env.MODEL_MAX_TOKENS, budgetTokens: env.BATCH_TOKEN_BUDGET },
  };
  const summary: SummaryDeps = {
    turns,
    reflections,
    costs,
    settings: new DynamoUserSettingsStore(ddb, table),
    model,
    clock,
    log,
    defaults: { enabled: env.SUMMARIES_ENABLED, prompt: env.SUMMARY_PROMPT, maxTokens: env.SUMMARY_MAX_TOKENS },
    temperature: env.MODEL_TEMPERATURE,
    budgetTokens: env.BATCH_TOKEN_BUDGET,
  };
  const sleepTime: SleepTimeDeps = {
    turns,
    knowledge: reflection.knowledge,
    runs: new DynamoReflectionLogStore(ddb, s3, table, bucket),
    summaries: new DynamoSummarySource(ddb, s3, table, bucket),
    graph: reflection.graph,
    items,
    costs,
    model,
    clock,
    log,
    config: parseSleepTimeConfig(env.SLEEP_TIME_CONFIG),
  };
  const forgets = new DynamoForgetLog(ddb, table);
  const forget = (remainingMs: () => number): ForgetDeps => ({
    forgets,
    eraser: new DynamoS3UserEraser(ddb, s3, table, bucket, changes),
    search,
    clock,
    log,
    settleSeconds: env.FORGET_SETTLE_SECONDS,
    remainingMs,
  });
  return { reflection, summary, sleepTime, search, forgets, forget };
}

export function createReflectorHandler(env: ReflectorEnv, clients: Clients, clock: Clock): ReflectorHandler {
  const { logger, log } = createLogger('reflector');
  const metrics = createMetrics('reflector');
  const rejected = new S3RejectedEventLog(clients.s3, env.BUCKET_NAME);
  const deps = reflectorDeps(env, clients, clock, log);
  const redelivery = new SqsRedelivery(clients.sqs, env.REFLECTION_QUEUE_URL);
  /** Deliveries before SQS parks a job in the DLQ (the queue's maxReceiveCount). */
  const maxReceives = env.REFLECTION_MAX_RECEIVES;

  /**
   * Seed 000 §9, "wait 30 s, retry once": a job whose model call failed on its first delivery
   * comes back after MODEL_RETRY_DELAY_SECONDS rather than the queue's whole visibility
   * timeout (6 × the function's timeout). If the change fails, it comes back later, as before.
   */
  async function retrySoon(record: SQSRecord): Promise<void> {
    try {
      await redelivery.after(record.receiptHandle, env.MODEL_RETRY_DELAY_SECONDS);
    } catch (error) {
      logger.warn('model retry not brought forward', { messageId: record.messageId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    }
  }

  async function recordHandler(record: SQSRecord, context?: Context): Promise<void> {
    // A malformed job never becomes valid by retrying: keep it with its reasons and move on.
    const job = await parseOrKeep(record, ReflectionJobSchema, { rejected, clock, source: 'reflection-queue' });
    if (!job) {
      logger.warn('reflection job rejected', { messageId: record.messageId });
      metrics.addMetric('RejectedRecords', MetricUnit.Count, 1);
      return;
    }
    const receives = Number(record.attributes.ApproximateReceiveCount);
    if (job.kind === 'forget') return forget(job, record, context);
    if (await askedBeforeForget(job)) return;
    try {
      // Seed 000 §9, "retry once": an unusable answer on the first delivery is asked again on
      // the next; from the second on, it aborts the batch with the answer kept in its log.
      const usage = await runJob(job, receives < UNUSABLE_OUTPUT_DELIVERIES, deps, metrics, logger);
      // Issue 20 item 6: the ModelCostUsd metric the stage's daily cost alarm sums
      // (infra/stacks/stateless-stack.ts); the job recorded its cost in the ledger itself.
      if (usage && usage.costUsd !== null && !usage.reused) metrics.addMetric('ModelCostUsd', MetricUnit.NoUnit, usage.costUsd);
    } catch (error) {
      // An outage, throttling or missing model access is retried by SQS up to the queue's
      // maxReceiveCount; on the last delivery the failure is logged before SQS parks the job.
      const parked = error instanceof ModelUnavailableError || error instanceof BatchNotRecordedError || error instanceof ModelAccessDeniedError;
      if (parked && receives >= maxReceives) await recordFailedAttempt(job, error, deps.reflection);
      else if (error instanceof ModelUnavailableError && receives === 1) await retrySoon(record);
      throw error;
    }
    await compactSearchIndex(job.userId, job.kind === 'nightly' || job.kind === 'weekly' ? 1 : COMPACT_AFTER_JOB, deps.search, logger);
  }

  /** Issue 21: a job asked for before its user was forgotten (a redrive, a late duplicate) writes nothing. */
  async function askedBeforeForget(job: ReflectionJob): Promise<boolean> {
    const before = await forgottenBefore(deps.forgets, job.userId);
    if (before === null || Date.parse(job.requestedAt) > Date.parse(before)) return false;
    logger.info('job dropped: its user was forgotten after it was asked for', { jobId: job.jobId, userId: job.userId, kind: job.kind, forgottenAt: before });
    countJob(metrics, false);
    return true;
  }

  /** The forget job; an erasure that runs out of time comes back in a second to go on. */
  async function forget(job: ReflectionJob, record: SQSRecord, context: Context | undefined): Promise<void> {
    try {
      const outcome = await forgetUser(job, deps.forget(() => context?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY));
      countJob(metrics, outcome.status === 'forgotten');
      if (outcome.status === 'skipped') logger.info('forget skipped', { jobId: job.jobId, userId: job.userId, reason: outcome.reason });
    } catch (error) {
      if (error instanceof ForgetContinuesError) await redelivery.after(record.receiptHandle, 1);
      throw error;
    }
  }

  const processor = new SqsFifoPartialProcessorAsync();
  // Powertools hands each record's handler the invocation's context (the forget's time left).
  return middy(
    async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
      processPartialResponse(event, recordHandler, processor, { context, skipGroupOnError: true, throwOnFullBatchFailure: false }),
  )
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics)) as unknown as ReflectorHandler;
}

/**
 * Fold the user's changed items into their search index after a job once COMPACT_AFTER_JOB
 * have piled up, and after every nightly and weekly run (one job at a time per user: the FIFO
 * group). A failure is logged, not thrown: the job's work is done, the marks
 * stay, and the next job (or the API past COMPACT_AT) folds them.
 */
async function compactSearchIndex(userId: string, atLeast: number, search: LiveSearchIndex, logger: ReturnType<typeof createLogger>['logger']): Promise<void> {
  try {
    const result = await search.compact(userId, atLeast);
    if (result.folded > 0 || result.lost) logger.info('search index compacted', { userId, ...result });
  } catch (error) {
    logger.warn('search index not compacted', { userId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
}

/**
 * Jobs done and not done, whatever their kind and status: a metric name per kind and status
 * would each be a custom metric billed by the month (issue 19); which kind and which status
 * are fields of the job's log lines (and the batch and run logs).
 */
function countJob(metrics: Metrics, done: boolean): void {
  metrics.addMetric(done ? 'JobsDone' : 'JobsNotDone', MetricUnit.Count, 1);
}

/** Run the job; what its model calls cost (null: no model call, or the job did not run). */
async function runJob(job: ReflectionJob, retryUnusableOutput: boolean, deps: ReturnType<typeof reflectorDeps>, metrics: Metrics, logger: ReturnType<typeof createLogger>['logger']): Promise<JobUsage | null> {
  if (job.kind === 'nightly' || job.kind === 'weekly') {
    const out = await (job.kind === 'nightly' ? runNightly : runWeekly)(job, { ...deps.sleepTime, retryUnusableOutput });
    countJob(metrics, out.status === 'completed');
    logger.info('sleep-time run done', { jobId: job.jobId, userId: job.userId, kind: job.kind, status: out.status, ...(out.status === 'completed' ? { memoriesStored: out.run.memoriesStored } : {}) });
    const usage = out.status === 'completed' ? runUsage(out.run) : null;
    if (!usage) return null;
    metrics.addMetric('ModelInputTokens', MetricUnit.Count, usage.inputTokens);
    metrics.addMetric('ModelOutputTokens', MetricUnit.Count, usage.outputTokens);
    return usage;
  }
  if (SUMMARY_KINDS.has(job.kind)) {
    const summary = await runSummary(job, { ...deps.summary, retryUnusableOutput });
    countJob(metrics, summary.status === 'written');
    if (summary.status !== 'written') {
      logger.info('summary not written', { jobId: job.jobId, userId: job.userId, status: summary.status, reason: summary.reason });
      return null;
    }
    return summary.usage;
  }
  const outcome = await runReflection(job, { ...deps.reflection, retryUnusableOutput });
  countJob(metrics, outcome.status === 'completed');
  if (!('log' in outcome)) {
    logger.info('reflection job not run', { jobId: job.jobId, userId: job.userId, kind: job.kind, status: outcome.status, reason: outcome.reason });
    return null;
  }
  const gates = outcome.log.quality_gate_results;
  metrics.addMetric('ItemsStaged', MetricUnit.Count, outcome.log.staged_files.length);
  metrics.addMetric('GateRejections', MetricUnit.Count, gates.rejections.length);
  metrics.addMetric('ItemsPromoted', MetricUnit.Count, outcome.log.promoted_files.length);
  const model = outcome.log.model;
  if (!model) return null;
  if (!model.reused) {
    metrics.addMetric('ModelInputTokens', MetricUnit.Count, model.inputTokens);
    metrics.addMetric('ModelOutputTokens', MetricUnit.Count, model.outputTokens);
  }
  return usageOf(model);
}
