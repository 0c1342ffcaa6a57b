/**
 * idle — IdleQueue (delayed idle checks) → idle-summary jobs (req R-SUM-1).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { IdleCheckSchema } from '../../events/idle-check.js';
import type { AwsClients } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoSignalStateStore } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { createLogger } from '../../lib/kernel/logger.adapter.js';
import { StageMetrics } from '../../lib/kernel/metrics.adapter.js';
import { S3RejectedEventLog } from '../../lib/turns/s3-rejected-event-log.adapter.js';
import { SqsIdleScheduler } from '../../lib/signals/sqs-idle-scheduler.adapter.js';
import { SqsJobQueue } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { parseSignalConfig } from '../../lib/signals/signal-weights.js';
import type { Clock } from '../../lib/kernel/runtime.port.js';
import { checkIdle, type IdleDeps } from '../../lib/signals/check-idle.js';
import { DynamoUserSettingsStore } from '../../lib/settings/dynamo-user-settings-store.adapter.js';
import { parseOrKeep } from '../../lib/kernel/parse-or-keep.js';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import type { IdleEnv } from './env.js';

export type IdleHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export function createIdleHandler(
  env: IdleEnv,
  clients: Pick<AwsClients, 'ddb' | 's3' | 'sqs'>,
  clock: Clock,
): IdleHandler {
  const { logger, log } = createLogger('idle');
  const metrics = new StageMetrics('idle', env.STAGE);
  // No change log: nothing the idle check writes is searched.
  const storage: Omit<Storage, 'changes'> = {
    ddb: clients.ddb,
    s3: clients.s3,
    tableName: env.TABLE_NAME,
    bucketName: env.BUCKET_NAME,
  };
  const rejected = new S3RejectedEventLog(storage);
  const deps: IdleDeps = {
    signalState: new DynamoSignalStateStore(storage, clock),
    jobs: new SqsJobQueue(clients.sqs, env.JOB_QUEUE_URL),
    idle: new SqsIdleScheduler(clients.sqs, env.IDLE_QUEUE_URL),
    settings: new DynamoUserSettingsStore(storage),
    clock,
    log,
    config: parseSignalConfig(env.SIGNAL_CONFIG),
  };

  async function recordHandler(record: SQSRecord): Promise<void> {
    const check = await parseOrKeep(record, IdleCheckSchema, { rejected, clock, source: 'idle-queue' });
    if (!check) {
      metrics.rejectedRecords(1);
      return;
    }
    const outcome = await checkIdle(check, deps);
    metrics.rejectedRecords(0);
    // An enqueued summary is a field of an info line (Logs Insights counts them); other outcomes are debug lines.
    if (outcome.status === 'enqueued') logger.info('idle check done', { userId: check.userId, ...outcome });
    else logger.debug('idle check done', { userId: check.userId, ...outcome });
  }

  const processor = new BatchProcessor(EventType.SQS);
  return middy(
    async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
      processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false }),
  )
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics.metrics)) as unknown as IdleHandler;
}
