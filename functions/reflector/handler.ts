/**
 * reflector — ReflectionQueue (SQS FIFO, group = userId) → one reflection per job.
 * Powertools' FIFO processor keeps order per user: when a job fails, the later jobs of
 * the same user go back to the queue too, other users' jobs are unaffected.
 */
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type ReflectionJob, ReflectionJobSchema } from '../../events/reflection-job.js';
import { DEFAULT_SUMMARY_PROMPT } from '../../lib/domain/summary.js';
import { createBedrockClient, createDocumentClient, createS3Client } from '../../lib/adapters/aws-clients.js';
import { S3DynamoBatchLogStore } from '../../lib/adapters/batch-log-store.js';
import { BedrockConverseModel } from '../../lib/adapters/bedrock-converse-model.js';
import { getNumberFromEnv, getStringFromEnv } from '../../lib/adapters/config.js';
import { DynamoGraphStore } from '../../lib/adapters/dynamo-graph-store.js';
import { DynamoSignalStateStore } from '../../lib/adapters/dynamo-signal-state.js';
import { DynamoSourceReliabilityStore } from '../../lib/adapters/dynamo-source-reliability.js';
import { S3DynamoTurnStore } from '../../lib/adapters/dynamo-turn-store.js';
import { systemClock } from '../../lib/adapters/clock.js';
import { createLogger } from '../../lib/adapters/logger.js';
import { createMetrics, MetricUnit } from '../../lib/adapters/metrics.js';
import { DynamoReflectionLogStore, DynamoSummarySource } from '../../lib/adapters/reflection-log-store.js';
import { parseSleepTimeConfig } from '../../lib/domain/sleep-time/config.js';
import { runNightly, runWeekly, type SleepTimeDeps } from '../../lib/use-cases/run-sleep-time.js';
import { KnowledgeRepository } from '../../lib/adapters/knowledge-repository.js';
import { S3RejectedEventLog } from '../../lib/adapters/s3-rejected-log.js';
import { parseOrKeep } from '../../lib/use-cases/parse-or-keep.js';
import { type ReflectionDeps, recordFailedAttempt, runReflection } from '../../lib/use-cases/run-reflection.js';
import { runSummary, SUMMARY_KINDS, type SummaryDeps } from '../../lib/use-cases/run-summary.js';
import { DynamoUserSettingsStore, S3DynamoReflectionStore } from '../../lib/adapters/reflection-store.js';
import { BatchNotRecordedError, ModelAccessDeniedError, ModelUnavailableError } from '../../lib/ports.js';

const tableName = getStringFromEnv('TABLE_NAME');
const bucketName = getStringFromEnv('BUCKET_NAME');
const modelId = getStringFromEnv('MODEL_ID');
const { logger, log } = createLogger('reflector');
const ddb = createDocumentClient();
const s3 = createS3Client();
const rejected = new S3RejectedEventLog(s3, bucketName);
const metrics = createMetrics('reflector');

const model = new BedrockConverseModel(createBedrockClient(), modelId);
const turns = new S3DynamoTurnStore(ddb, s3, tableName, bucketName);
/** Deliveries before SQS parks a job in the DLQ (the queue's maxReceiveCount). */
const maxReceives = getNumberFromEnv('REFLECTION_MAX_RECEIVES', 2);

const deps: ReflectionDeps = {
  turns,
  signalState: new DynamoSignalStateStore(ddb, tableName),
  knowledge: new KnowledgeRepository(ddb, s3, tableName, bucketName),
  batchLogs: new S3DynamoBatchLogStore(ddb, s3, tableName, bucketName),
  sources: new DynamoSourceReliabilityStore(ddb, tableName, systemClock),
  graph: new DynamoGraphStore(ddb, tableName),
  model,
  clock: systemClock,
  log,
  settings: {
    temperature: getNumberFromEnv('MODEL_TEMPERATURE', 0.6),
    maxTokens: getNumberFromEnv('MODEL_MAX_TOKENS', 1500),
    budgetTokens: getNumberFromEnv('BATCH_TOKEN_BUDGET', 4000),
  },
};

const summaryDeps: SummaryDeps = {
  turns,
  reflections: new S3DynamoReflectionStore(ddb, s3, tableName, bucketName),
  settings: new DynamoUserSettingsStore(ddb, tableName),
  model,
  clock: systemClock,
  log,
  defaults: {
    enabled: (process.env.SUMMARIES_ENABLED ?? 'true') !== 'false',
    prompt: process.env.SUMMARY_PROMPT || DEFAULT_SUMMARY_PROMPT,
    maxTokens: getNumberFromEnv('SUMMARY_MAX_TOKENS', 2000),
  },
  temperature: getNumberFromEnv('MODEL_TEMPERATURE', 0.6),
  budgetTokens: getNumberFromEnv('BATCH_TOKEN_BUDGET', 4000),
};

const sleepTimeDeps: SleepTimeDeps = {
  turns,
  knowledge: deps.knowledge,
  runs: new DynamoReflectionLogStore(ddb, s3, tableName, bucketName),
  summaries: new DynamoSummarySource(ddb, s3, tableName, bucketName),
  graph: deps.graph,
  model,
  clock: systemClock,
  log,
  config: parseSleepTimeConfig(process.env.SLEEP_TIME_CONFIG),
};

async function recordHandler(record: SQSRecord): Promise<void> {
  // A malformed job never becomes valid by retrying: keep it with its reasons and move on.
  const job = await parseOrKeep(record, ReflectionJobSchema, { rejected, clock: systemClock, source: 'reflection-queue' });
  if (!job) {
    logger.warn('reflection job rejected', { messageId: record.messageId });
    metrics.addMetric('RejectedRecords', MetricUnit.Count, 1);
    return;
  }
  // Not the last delivery: an unusable model answer is retried (the next delivery asks again).
  const retryUnusableOutput = Number(record.attributes.ApproximateReceiveCount) < maxReceives;
  try {
    await runJob(job, retryUnusableOutput);
  } catch (error) {
    // Seed 000 §9: one retry; on the last delivery the failure is logged before SQS parks the job in the DLQ.
    const parked = error instanceof ModelUnavailableError || error instanceof BatchNotRecordedError || error instanceof ModelAccessDeniedError;
    if (parked && Number(record.attributes.ApproximateReceiveCount) >= maxReceives) {
      await recordFailedAttempt(job, error, deps);
    }
    throw error;
  }
}

async function runJob(job: ReflectionJob, retryUnusableOutput: boolean): Promise<void> {
  if (job.kind === 'nightly' || job.kind === 'weekly') {
    const out = await (job.kind === 'nightly' ? runNightly : runWeekly)(job, { ...sleepTimeDeps, retryUnusableOutput });
    metrics.addMetric(`SleepTime_${job.kind}_${out.status}`, MetricUnit.Count, 1);
    if (out.status === 'completed') {
      metrics.addMetric('SleepTimeMemoriesStored', MetricUnit.Count, out.run.memoriesStored);
      metrics.addMetric('ModelInputTokens', MetricUnit.Count, out.run.tokens.input);
      metrics.addMetric('ModelOutputTokens', MetricUnit.Count, out.run.tokens.output);
    }
    return;
  }
  if (SUMMARY_KINDS.has(job.kind)) {
    const summary = await runSummary(job, { ...summaryDeps, retryUnusableOutput });
    metrics.addMetric(`Summaries_${summary.status}`, MetricUnit.Count, 1);
    if (summary.status !== 'written') logger.info('summary not written', { jobId: job.jobId, userId: job.userId, status: summary.status, reason: summary.reason });
    return;
  }
  const outcome = await runReflection(job, { ...deps, retryUnusableOutput });
  metrics.addMetric(`Jobs_${outcome.status}`, MetricUnit.Count, 1);
  if ('log' in outcome) {
    const gates = outcome.log.quality_gate_results;
    metrics.addMetric('ItemsProposed', MetricUnit.Count, gates.items_proposed);
    metrics.addMetric('ItemsStaged', MetricUnit.Count, outcome.log.staged_files.length);
    metrics.addMetric('GateRejections', MetricUnit.Count, gates.rejections.length);
    metrics.addMetric('ItemsPromoted', MetricUnit.Count, outcome.log.promoted_files.length);
    if (outcome.log.model && !outcome.log.model.reused) {
      metrics.addMetric('ModelInputTokens', MetricUnit.Count, outcome.log.model.inputTokens);
      metrics.addMetric('ModelOutputTokens', MetricUnit.Count, outcome.log.model.outputTokens);
    }
    return;
  }
  logger.info('reflection job not run', { jobId: job.jobId, userId: job.userId, kind: job.kind, status: outcome.status, reason: outcome.reason });
}

const processor = new SqsFifoPartialProcessorAsync();

export const handler = middy(
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, recordHandler, processor, { context, skipGroupOnError: true, throwOnFullBatchFailure: false }),
)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
