/**
 * sweep — fired by the EventBridge schedules with `{ sweep, time }` (time = the schedule's
 * own event time, so "now" is never the wall clock): nightly and weekly fan-out of
 * sleep-time reflection jobs (seed 001), expiry of stale staged items (seed 000 §6).
 * Turn archival (seed 002 §12) is the bucket's lifecycle rule, run daily by S3 itself.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { z } from 'zod';
import { TimestampSchema } from '../../events/common.js';
import { createDocumentClient, createS3Client, createSqsClient } from '../../lib/adapters/aws-clients.js';
import { getStringFromEnv } from '../../lib/adapters/config.js';
import { DynamoSignalStateStore } from '../../lib/adapters/dynamo-signal-state.js';
import { S3DynamoTurnStore } from '../../lib/adapters/dynamo-turn-store.js';
import { KnowledgeRepository } from '../../lib/adapters/knowledge-repository.js';
import { systemClock } from '../../lib/adapters/clock.js';
import { createLogger } from '../../lib/adapters/logger.js';
import { createMetrics, MetricUnit } from '../../lib/adapters/metrics.js';
import { DynamoReflectionLogStore, S3ExpiryLog } from '../../lib/adapters/reflection-log-store.js';
import { SqsJobQueue } from '../../lib/adapters/sqs-job-queue.js';
import { parseSleepTimeConfig } from '../../lib/domain/sleep-time/config.js';
import { expirySweep, nightlySweep, type SweepDeps, type SweepResult, weeklySweep } from '../../lib/use-cases/sweeps.js';

export const SweepInputSchema = z.object({
  sweep: z.enum(['nightly', 'weekly', 'expiry']),
  /** The schedule's time; defaults to now for a sweep run by hand. */
  time: TimestampSchema.optional(),
});
export type SweepInput = z.infer<typeof SweepInputSchema>;

const tableName = getStringFromEnv('TABLE_NAME');
const bucketName = getStringFromEnv('BUCKET_NAME');
const { logger, log } = createLogger('sweep');
const metrics = createMetrics('sweep');
const ddb = createDocumentClient();
const s3 = createS3Client();
const deps: SweepDeps = {
  activity: new DynamoSignalStateStore(ddb, tableName),
  runs: new DynamoReflectionLogStore(ddb, s3, tableName, bucketName),
  turns: new S3DynamoTurnStore(ddb, s3, tableName, bucketName),
  jobs: new SqsJobQueue(createSqsClient(), getStringFromEnv('REFLECTION_QUEUE_URL')),
  knowledge: new KnowledgeRepository(ddb, s3, tableName, bucketName),
  expiryLog: new S3ExpiryLog(s3, bucketName),
  config: parseSleepTimeConfig(process.env.SLEEP_TIME_CONFIG),
  log,
};

const SWEEP = { nightly: nightlySweep, weekly: weeklySweep, expiry: expirySweep } as const;

export const handler = middy(async (event: unknown): Promise<SweepResult> => {
  const input = SweepInputSchema.parse(event);
  const result = await SWEEP[input.sweep](input.time ? new Date(input.time) : systemClock.now(), deps);
  metrics.addMetric(`Sweep_${input.sweep}_jobs`, MetricUnit.Count, result.jobs.length);
  if (result.deleted !== undefined) metrics.addMetric('StagedExpired', MetricUnit.Count, result.deleted);
  logger.info('sweep done', { ...result });
  return result;
})
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
