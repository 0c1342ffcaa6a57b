/**
 * The reflector's per-record path: parse (or keep) a job-queue record, dispatch its job
 * through lib/jobs/run-job.ts, report its metrics, decide on retries, compact the search index.
 * createReflectorHandler (create-handler.ts) runs it under Powertools' FIFO processor.
 */
import type { Context, SQSRecord } from 'aws-lambda';
import { type Job, JobSchema } from '../../events/job.js';
import type { SqsRedelivery } from '../../lib/kernel/sqs-redelivery.adapter.js';
import { BatchNotRecordedError } from '../../lib/batches/batch-log.port.js';
import type { RejectedEventLog } from '../../lib/turns/turn.port.js';
import { ModelAccessDeniedError, ModelUnavailableError } from '../../lib/model/language-model.port.js';
import type { Clock, Log } from '../../lib/kernel/runtime.port.js';
import { parseOrKeep } from '../../lib/kernel/parse-or-keep.js';
import { recordFailedAttempt } from '../../lib/batches/run-reflection.js';
import { type JobOutcome, runJob } from '../../lib/jobs/run-job.js';
import { COMPACT_AFTER_JOB } from '../../lib/search/compaction-policy.js';
import type { SearchIndexReader } from '../../lib/search/search-index-reader.js';
import { ForgetContinuesError } from '../../lib/forget/forget-user.js';
import type { ReflectorDeps } from './reflector-deps.js';

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

/** Where the record handler adds its metrics (Powertools Metrics in the function, lib/kernel/metrics.adapter.ts). */
export interface MetricSink {
  /** RejectedRecords: 1 for a malformed job kept in the rejected-events log, 0 for a job that parsed. */
  rejectedRecords(count: number): void;
  /** One job's ModelCostUsd, which the stage's daily cost alarm sums. */
  modelCost(usd: number): void;
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
      metrics.rejectedRecords(1);
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
    reportJob(job, outcome, metrics, log);
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
 * The job's log line: its kind, status, whether it was done, its counts (items staged, gate
 * rejections, items promoted, model tokens) and cost, fields for Logs Insights, never metrics
 * (each a custom metric billed by the month that no alarm reads: lib/kernel/metrics.adapter.ts).
 * Then the two metrics: RejectedRecords 0, and the ModelCostUsd the stage's daily cost alarm
 * sums (infra/constructs/stage-alarms.ts); the job recorded its cost in the ledger itself.
 */
function reportJob(job: Job, outcome: JobOutcome, metrics: MetricSink, log: Log): void {
  const usage = outcome.usage;
  const costUsd = usage && usage.costUsd !== null && !usage.reused ? usage.costUsd : null;
  log.info('job reported', {
    jobId: job.jobId,
    kind: job.kind,
    family: outcome.family,
    status: outcome.status,
    done: outcome.done,
    ...outcome.counts,
    costUsd,
  });
  metrics.rejectedRecords(0);
  if (costUsd !== null) metrics.modelCost(costUsd);
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
