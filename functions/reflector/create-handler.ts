/**
 * reflector — job queue (SQS FIFO, group = userId) → one job per record, dispatched by
 * kind through lib/jobs/run-job.ts. Powertools' FIFO processor keeps order per user:
 * when a job fails, the later jobs of the same user go back to the queue too, other users'
 * jobs are unaffected.
 */
import { DynamoTurnLog } from '../../lib/search/dynamo-turn-log.adapter.js';
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type Job, JobSchema } from '../../events/job.js';
import type { AwsClients } from '../../lib/kernel/aws-clients.adapter.js';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import { BedrockConverseModel } from '../../lib/model/bedrock-converse-model.adapter.js';
import { DynamoDiaryStore } from '../../lib/diary/dynamo-diary-store.adapter.js';
import { DynamoItemTrustStore } from '../../lib/trust/dynamo-item-trust-store.adapter.js';
import { DynamoGraphStore } from '../../lib/graph/dynamo-graph-store.adapter.js';
import { DynamoSignalStateStore } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { DynamoSourceReliabilityStore } from '../../lib/sources/dynamo-source-reliability-store.adapter.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { StoreMemoryCatalog } from '../../lib/search/memory-catalog.js';
import { DynamoMemoryItemStore } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { createLogger } from '../../lib/kernel/logger.adapter.js';
import { addModelCost, createMetrics, MetricUnit } from '../../lib/kernel/metrics.adapter.js';
import { DynamoCostLedger } from '../../lib/costs/dynamo-cost-ledger.adapter.js';
import { DynamoUserSettingsStore } from '../../lib/settings/dynamo-user-settings-store.adapter.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { DynamoS3SummarySource } from '../../lib/summaries/summary-source.adapter.js';
import { DynamoS3SummaryStore } from '../../lib/summaries/summary-store.adapter.js';
import { S3RejectedEventLog } from '../../lib/turns/s3-rejected-event-log.adapter.js';
import { SqsJobQueue } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { SqsRedelivery } from '../../lib/kernel/sqs-redelivery.adapter.js';
import { parseSleepTimeConfig } from '../../lib/sleep-time/config.js';
import { parseTierPolicy } from '../../lib/tiers/tier-settings.js';
import { BatchNotRecordedError } from '../../lib/batches/batch-log.port.js';
import type { RejectedEventLog } from '../../lib/turns/turn.port.js';
import { ModelAccessDeniedError, ModelUnavailableError } from '../../lib/model/language-model.port.js';
import type { Clock, Log } from '../../lib/kernel/runtime.port.js';
import { parseOrKeep } from '../../lib/kernel/parse-or-keep.js';
import type { ReflectionDeps } from '../../lib/batches/reflection-deps.js';
import { recordFailedAttempt } from '../../lib/batches/run-reflection.js';
import { type JobDeps, type JobOutcome, runJob } from '../../lib/jobs/run-job.js';
import type { SleepTimeDeps } from '../../lib/sleep-time/run-sleep-time.js';
import type { SummaryDeps } from '../../lib/summaries/run-summary.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { COMPACT_AFTER_JOB } from '../../lib/search/compaction-policy.js';
import type { SearchIndexReader } from '../../lib/search/search-index-reader.js';
import { embeddingModelOf } from '../../lib/model/titan-embeddings.adapter.js';
import { DynamoForgetLog } from '../../lib/forget/dynamo-forget-log.adapter.js';
import { DynamoErasureLog } from '../../lib/forget/dynamo-erasure-log.adapter.js';
import { DynamoS3UserEraser } from '../../lib/forget/user-eraser.adapter.js';
import { ForgetContinuesError } from '../../lib/forget/forget-user.js';
import type { ReflectorEnv } from './env.js';

export type ReflectorHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** Deliveries that may ask the model again for an unusable answer: the first and its one retry (req R-ERR). */
const UNUSABLE_OUTPUT_DELIVERIES = 2;

/**
 * What an invocation keeps for a job's failure path when its model calls are abandoned: the
 * batch log of a last delivery (S3 and DynamoDB), the visibility change of a first, the
 * batch response. A model call may otherwise run BEDROCK_REQUEST_TIMEOUT_MS × BEDROCK_MAX_ATTEMPTS
 * (lib/kernel/aws-clients.adapter.ts), longer than the function's timeout (infra/resources.ts).
 */
export const MODEL_CALL_RESERVE_MS = 15_000;

/**
 * The job's deadline for its model calls: aborts MODEL_CALL_RESERVE_MS before the invocation
 * times out, as its context tells (`getRemainingTimeInMillis()`, "the number of milliseconds
 * left before the execution times out": https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html).
 * None without a context (the fuzzer).
 */
function modelDeadline(context: Context | undefined): AbortSignal | undefined {
  if (!context) return undefined;
  return AbortSignal.timeout(Math.max(0, context.getRemainingTimeInMillis() - MODEL_CALL_RESERVE_MS));
}

type Clients = Pick<AwsClients, 'ddb' | 's3' | 'sqs' | 'bedrock'>;

/** The job dispatcher's dependencies and the search index the handler compacts after a job. */
export type ReflectorDeps = JobDeps & { search: Pick<SearchIndexReader, 'compact'> };

/** The stores the reflector's use cases share, over one table and one bucket. */
function sharedStores(env: ReflectorEnv, storage: Storage, { bedrock }: Clients, clock: Clock, log: Log) {
  const turns = new DynamoS3TurnStore(storage);
  const knowledge = new DynamoS3KnowledgeStore(storage);
  const summaries = new DynamoS3SummaryStore(storage);
  const items = new DynamoMemoryItemStore(storage);
  const diary = new DynamoDiaryStore(storage);
  // The derived items' trust (req R-SCOPE-2) is folded into what its compactions index: read only here (the API writes it).
  const trust = new DynamoItemTrustStore(storage);
  const catalog = new StoreMemoryCatalog({
    turns,
    knowledge,
    summaries,
    items,
    diary,
    trust,
    stagedExpiryDays: parseSleepTimeConfig(env.SLEEP_TIME_CONFIG).stagedExpiryDays,
  });
  // A stage that embeds stores the vectors of the items each compaction folds.
  const search = new LiveSearchIndex({
    store: new DynamoS3SearchIndexStore(storage),
    catalog,
    clock,
    embeddings: embeddingModelOf(bedrock, env),
    marks: { lagMs: env.SEARCH_MARK_LAG_SECONDS * 1000 },
    turns: new DynamoTurnLog(storage),
  });
  const models = new Map<string, BedrockConverseModel>();
  const modelOf = (id: string = env.MODEL_ID): BedrockConverseModel => {
    const model = models.get(id) ?? new BedrockConverseModel(bedrock, id, { answerShape: env.ANSWER_SHAPE, log });
    models.set(id, model);
    return model;
  };
  const costs = new DynamoCostLedger(storage);
  const graph = new DynamoGraphStore(storage);
  // Batches run on MODEL_ID; summaries and sleep-time runs on their own model when the stage gives them one.
  // Req R-DEL: tombstones the gates consult, and the turns forgotten by provenance, which drop a job citing them.
  const erasures = new DynamoErasureLog(storage);
  return {
    storage,
    turns,
    knowledge,
    summaries,
    items,
    diary,
    search,
    costs,
    graph,
    erasures,
    model: modelOf(),
    summaryModel: modelOf(env.SUMMARY_MODEL_ID),
    sleepTimeModel: modelOf(env.SLEEP_TIME_MODEL_ID),
  };
}
type Stores = ReturnType<typeof sharedStores>;

function reflectionDeps(env: ReflectorEnv, stores: Stores, clock: Clock, log: Log): ReflectionDeps {
  const { storage, turns, knowledge, graph, costs, diary, model, erasures } = stores;
  return {
    erasures,
    turns,
    signalState: new DynamoSignalStateStore(storage, clock),
    knowledge,
    batchLogs: new DynamoS3BatchLogStore(storage),
    sources: new DynamoSourceReliabilityStore(storage, clock),
    graph,
    costs,
    diary,
    model,
    clock,
    log,
    settings: {
      temperature: env.MODEL_TEMPERATURE,
      maxTokens: env.MODEL_MAX_TOKENS,
      budgetTokens: env.BATCH_TOKEN_BUDGET,
    },
  };
}

function summaryDeps(
  env: ReflectorEnv,
  { storage, turns, summaries, costs, summaryModel: model }: Stores,
  clock: Clock,
  log: Log,
): SummaryDeps {
  return {
    turns,
    summaries,
    costs,
    settings: new DynamoUserSettingsStore(storage),
    model,
    clock,
    log,
    defaults: { enabled: env.SUMMARIES_ENABLED, prompt: env.SUMMARY_PROMPT, maxTokens: env.SUMMARY_MAX_TOKENS },
    temperature: env.MODEL_TEMPERATURE,
    budgetTokens: env.BATCH_TOKEN_BUDGET,
  };
}

function sleepTimeDeps(
  env: ReflectorEnv,
  { storage, turns, knowledge, graph, items, costs, erasures, sleepTimeModel: model }: Stores,
  clock: Clock,
  log: Log,
): SleepTimeDeps {
  return {
    erasures,
    turns,
    knowledge,
    runs: new DynamoSleepTimeLogStore(storage),
    summaries: new DynamoS3SummarySource(storage),
    graph,
    items,
    costs,
    model,
    clock,
    log,
    config: parseSleepTimeConfig(env.SLEEP_TIME_CONFIG),
    tierPolicy: parseTierPolicy(env.TIER_POLICY),
  };
}

/** The job dispatcher's dependencies over the AWS stores. */
function reflectorDeps(env: ReflectorEnv, storage: Storage, clients: Clients, clock: Clock, log: Log): ReflectorDeps {
  const stores = sharedStores(env, storage, clients, clock, log);
  const forgets = new DynamoForgetLog(stores.storage);
  const eraser = new DynamoS3UserEraser(stores.storage, { pageSize: env.FORGET_PAGE_SIZE });
  const jobs = new SqsJobQueue(clients.sqs, env.JOB_QUEUE_URL);
  return {
    reflection: reflectionDeps(env, stores, clock, log),
    summary: summaryDeps(env, stores, clock, log),
    sleepTime: sleepTimeDeps(env, stores, clock, log),
    search: stores.search,
    forgets,
    erasures: stores.erasures,
    // A forget's continuation goes on the reflector's own queue (lib/forget/forget-user.ts).
    forget: (remainingMs) => ({
      forgets,
      eraser,
      search: stores.search,
      clock,
      log,
      settleSeconds: env.FORGET_SETTLE_SECONDS,
      remainingMs,
      jobs,
      pagesPerJob: env.FORGET_PAGES_PER_JOB,
    }),
    log,
  };
}

/** Where the record handler adds its metrics (Powertools Metrics in the function). */
export interface MetricSink {
  addMetric(name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number): void;
  /** One job's ModelCostUsd, with the stage as a dimension (lib/kernel/metrics.adapter.ts addModelCost). */
  addModelCost(usd: number): void;
}

/** What the record handler uses besides the use cases: the rejected-events log, the queue, metrics, retry settings. */
export interface JobRecordIo {
  rejected: RejectedEventLog;
  redelivery: Pick<SqsRedelivery, 'after'>;
  metrics: MetricSink;
  log: Log;
  clock: Clock;
  /** Deliveries before SQS parks a job in the DLQ (the queue's maxReceiveCount). */
  maxReceives: number;
  /** When a job whose model call failed on its first delivery comes back (req R-ERR, "wait 30 s"). */
  modelRetryDelaySeconds: number;
}

/** One record of the job queue, handled; what came of its job (null: the record was rejected and kept). */
export type JobRecordHandler = (record: SQSRecord, context?: Context) => Promise<JobOutcome | null>;

/**
 * The reflector's per-record path, as the Lambda handler runs it: parse (or keep a malformed
 * job), dispatch it (run-job.ts), report its metrics, decide on retries, compact the search
 * index. The fuzzer (bench/fuzz-targets.ts) drives it over recording fakes.
 */
export function jobRecordHandler(deps: ReflectorDeps, io: JobRecordIo): JobRecordHandler {
  const { metrics, log } = io;
  return async (record, context) => {
    // A malformed job never becomes valid by retrying: keep it with its reasons and move on.
    const job = await parseOrKeep(record, JobSchema, {
      rejected: io.rejected,
      clock: io.clock,
      source: 'reflection-queue',
    }); // a stored value (rejected records), kept as it was
    if (!job) {
      log.warn('job rejected', { messageId: record.messageId });
      metrics.addMetric('RejectedRecords', MetricUnit.Count, 1);
      return null;
    }
    const receives = Number(record.attributes.ApproximateReceiveCount);
    let outcome: JobOutcome;
    // One deadline for the record's model calls: the job's and the compaction's embedding calls after it.
    const signal = modelDeadline(context);
    try {
      // Req R-ERR-1, R-ERR-2, "retry once": an unusable answer on the first delivery is asked again on
      // the next; from the second on, it aborts the batch with the answer kept in its log.
      outcome = await runJob(job, deps, {
        retryUnusableOutput: receives < UNUSABLE_OUTPUT_DELIVERIES,
        remainingMs: () => context?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      await beforeRetry(job, record, receives, error, deps, io);
      throw error;
    }
    reportJob(outcome, metrics);
    if (outcome.family !== 'forget' && outcome.status !== 'dropped') {
      // A manual summary (asked through the API) may be all a user without turns ever gets: its marks are folded now.
      const always = outcome.family === 'nightly' || outcome.family === 'weekly' || job.kind === 'manual';
      await compactSearchIndex(job.userId, always ? 1 : COMPACT_AFTER_JOB, deps.search, log, signal);
    }
    return outcome;
  };
}

/**
 * A failed job goes back to the queue. A forget that ran out of time before it erased anything
 * comes back in a second to go on (one that erased something went on in a fresh job instead). An outage, throttling or missing model access is retried by SQS up to the queue's
 * maxReceiveCount; on the last delivery the failure is logged before SQS parks the job.
 */
async function beforeRetry(
  job: Job,
  record: SQSRecord,
  receives: number,
  error: unknown,
  deps: ReflectorDeps,
  io: JobRecordIo,
): Promise<void> {
  if (job.kind === 'forget') {
    if (error instanceof ForgetContinuesError) await io.redelivery.after(record.receiptHandle, 1);
    return;
  }
  const parked =
    error instanceof ModelUnavailableError ||
    error instanceof BatchNotRecordedError ||
    error instanceof ModelAccessDeniedError;
  if (parked && receives >= io.maxReceives) await recordFailedAttempt(job, error, deps.reflection);
  else if (error instanceof ModelUnavailableError && receives === 1) await retrySoon(record, io);
}

/**
 * Req R-ERR-1, R-ERR-2, "wait 30 s, retry once": a job whose model call failed on its first delivery
 * comes back after MODEL_RETRY_DELAY_SECONDS rather than the queue's whole visibility
 * timeout (6 × the function's timeout). If the change fails, it comes back later, as before.
 */
async function retrySoon(record: SQSRecord, io: JobRecordIo): Promise<void> {
  try {
    await io.redelivery.after(record.receiptHandle, io.modelRetryDelaySeconds);
  } catch (error) {
    io.log.warn('model retry not brought forward', {
      messageId: record.messageId,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  }
}

/**
 * Jobs done and not done, whatever their kind and status: a metric name per kind and status
 * would each be a custom metric billed by the month; which kind and which status
 * are fields of the job's log lines (and the batch and run logs). Then the job's own counts,
 * and the ModelCostUsd metric the stage's daily cost alarm sums
 * (infra/constructs/stage-alarms.ts); the job recorded its cost in the ledger itself.
 */
function reportJob(outcome: JobOutcome, metrics: MetricSink): void {
  metrics.addMetric(outcome.done ? 'JobsDone' : 'JobsNotDone', MetricUnit.Count, 1);
  for (const [name, value] of Object.entries(outcome.counts)) metrics.addMetric(name, MetricUnit.Count, value);
  const usage = outcome.usage;
  if (usage && usage.costUsd !== null && !usage.reused) metrics.addModelCost(usage.costUsd);
}

/**
 * Fold the user's changed items into their search index after a job once COMPACT_AFTER_JOB
 * have piled up, and after every nightly, weekly and manual run (one job at a time per user: the FIFO
 * group). A failure is logged, not thrown: the job's work is done, the marks
 * stay, and the next job (or the API past COMPACT_AT) folds them.
 */
async function compactSearchIndex(
  userId: string,
  atLeast: number,
  search: Pick<SearchIndexReader, 'compact'>,
  log: Log,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    const result = await search.compact(userId, atLeast, { signal });
    if (result.folded > 0 || result.lost) log.info('search index compacted', { userId, ...result });
  } catch (error) {
    log.warn('search index not compacted', {
      userId,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  }
}

export function createReflectorHandler(env: ReflectorEnv, clients: Clients, clock: Clock): ReflectorHandler {
  const { logger, log } = createLogger('reflector');
  const metrics = createMetrics('reflector');
  const table = { ddb: clients.ddb, tableName: env.TABLE_NAME };
  // The per-turn path's marks expire by TTL (no delete at compaction): every user a job
  // runs for is compacted after it, and weekly while they talk (docs/search-index.md, "Liveness").
  const storage: Storage = {
    ...table,
    s3: clients.s3,
    bucketName: env.BUCKET_NAME,
    changes: new DynamoSearchChangeLog(table, { expiring: true }),
  };
  const recordHandler = jobRecordHandler(reflectorDeps(env, storage, clients, clock, log), {
    rejected: new S3RejectedEventLog(storage),
    redelivery: new SqsRedelivery(clients.sqs, env.JOB_QUEUE_URL),
    metrics: {
      addMetric: (name, unit, value) => metrics.addMetric(name, unit, value),
      addModelCost: (usd) => addModelCost(metrics, env.STAGE, usd),
    },
    log,
    clock,
    maxReceives: env.JOB_MAX_RECEIVES,
    modelRetryDelaySeconds: env.MODEL_RETRY_DELAY_SECONDS,
  });
  const processor = new SqsFifoPartialProcessorAsync();
  // Powertools hands each record's handler the invocation's context (the forget's time left).
  return middy(
    async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
      processPartialResponse(event, recordHandler, processor, {
        context,
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      }),
  )
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics)) as unknown as ReflectorHandler;
}
