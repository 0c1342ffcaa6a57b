/**
 * reflector — job queue (SQS FIFO, group = userId) → one job per record, dispatched by
 * kind through lib/jobs/run-job.ts (the per-record path: job-record-handler.ts, its deps:
 * reflector-deps.ts). Powertools' FIFO processor keeps order per user:
 * when a job fails, the later jobs of the same user go back to the queue too, other users'
 * jobs are unaffected.
 */
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { createLogger } from '../../lib/kernel/logger.adapter.js';
import { StageMetrics } from '../../lib/kernel/metrics.adapter.js';
import { S3RejectedEventLog } from '../../lib/turns/s3-rejected-event-log.adapter.js';
import { SqsRedelivery } from '../../lib/kernel/sqs-redelivery.adapter.js';
import type { Clock } from '../../lib/kernel/runtime.port.js';
import { jobRecordHandler } from './job-record-handler.js';
import { type Clients, reflectorDeps } from './reflector-deps.js';
import type { ReflectorEnv } from './env.js';

export type ReflectorHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export function createReflectorHandler(env: ReflectorEnv, clients: Clients, clock: Clock): ReflectorHandler {
  const { logger, log } = createLogger('reflector');
  const metrics = new StageMetrics('reflector', env.STAGE);
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
    metrics,
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
    .use(logMetrics(metrics.metrics)) as unknown as ReflectorHandler;
}
