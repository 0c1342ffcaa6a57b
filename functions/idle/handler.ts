/**
 * idle — IdleQueue (delayed idle checks) → idle-summary reflection jobs (seed 003).
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { IdleCheckSchema } from '../../events/idle-check.js';
import { createDocumentClient, createS3Client, createSqsClient } from '../../lib/adapters/aws-clients.js';
import { getStringFromEnv } from '../../lib/adapters/config.js';
import { DynamoSignalStateStore } from '../../lib/adapters/dynamo-signal-state.js';
import { systemClock } from '../../lib/adapters/clock.js';
import { createLogger } from '../../lib/adapters/logger.js';
import { createMetrics, MetricUnit } from '../../lib/adapters/metrics.js';
import { S3RejectedEventLog } from '../../lib/adapters/s3-rejected-log.js';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue.js';
import { parseSignalConfig } from '../../lib/domain/signal-weights.js';
import { checkIdle, type IdleDeps } from '../../lib/use-cases/check-idle.js';
import { parseOrKeep } from '../../lib/use-cases/parse-or-keep.js';

const tableName = getStringFromEnv('TABLE_NAME');
const bucketName = getStringFromEnv('BUCKET_NAME');
const { logger, log } = createLogger('idle');
const metrics = createMetrics('idle');
const rejected = new S3RejectedEventLog(createS3Client(), bucketName);
const deps: IdleDeps = {
  signalState: new DynamoSignalStateStore(createDocumentClient(), tableName),
  jobs: new SqsJobQueue(createSqsClient(), getStringFromEnv('REFLECTION_QUEUE_URL')),
  clock: systemClock,
  log,
  config: parseSignalConfig(process.env.SIGNAL_CONFIG),
};

async function recordHandler(record: SQSRecord): Promise<void> {
  const check = await parseOrKeep(record, IdleCheckSchema, { rejected, clock: systemClock, source: 'idle-queue' });
  if (!check) {
    metrics.addMetric('RejectedRecords', MetricUnit.Count, 1);
    return;
  }
  const outcome = await checkIdle(check, deps);
  metrics.addMetric(outcome.status === 'enqueued' ? 'IdleSummariesEnqueued' : 'IdleChecksSkipped', MetricUnit.Count, 1);
}

const processor = new BatchProcessor(EventType.SQS);

export const handler = middy(
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false }),
)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
