/**
 * sweep — fired by the EventBridge schedules with `{ sweep, time }` (time = the schedule's
 * own event time, so "now" is never the wall clock): nightly and weekly fan-out of
 * sleep-time jobs (req R-SLP), as one Bedrock batch inference job when the stage has it on
 * and the runs have enough records (sleep-time-batch-deps.ts), expiry of stale staged items
 * (req R-PRO-3). Also the target of the stage's rule on Bedrock's "Batch Inference Job State
 * Change" events: a job that ended has its answers recorded and its runs enqueued again (and
 * each scheduled sweep first completes any job that ended with no event processed).
 * Turn archival (req R-ARC-1) is the bucket's lifecycle rule, run daily by S3 itself.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { BatchJobStateChangeSchema, parseBatchInferenceSettings } from '../../lib/batch-inference/batch-inference.js';
import type { Completion } from '../../lib/batch-inference/sleep-time-batch.js';
import * as z from 'zod';
import { TimestampSchema } from '../../events/common.js';
import type { Job } from '../../events/job.js';
import type { AwsClients } from '../../lib/kernel/aws-clients.adapter.js';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import { DynamoSignalStateStore } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoMemoryItemStore } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { createLogger } from '../../lib/kernel/logger.adapter.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { DynamoExpiryLog } from '../../lib/knowledge/dynamo-expiry-log.adapter.js';
import { SqsJobQueue } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { parseSleepTimeConfig } from '../../lib/sleep-time/config.js';
import { parseTierPolicy } from '../../lib/tiers/tier-settings.js';
import type { Clock } from '../../lib/kernel/runtime.port.js';
import { expirySweep, nightlySweep, type SweepDeps, type SweepResult, weeklySweep } from '../../lib/jobs/sweeps.js';
import type { SweepEnv } from './env.js';
import { sleepTimeBatch } from './sleep-time-batch-deps.js';

export const SweepInputSchema = z.object({
  sweep: z.enum(['nightly', 'weekly', 'expiry']),
  /** The schedule's time; defaults to now for a sweep run by hand. */
  time: TimestampSchema.optional(),
});
export type SweepInput = z.infer<typeof SweepInputSchema>;

export type SweepHandler = (event: unknown, context: Context) => Promise<SweepResult | Completion>;

const SWEEP = { nightly: nightlySweep, weekly: weeklySweep, expiry: expirySweep } as const;

export function createSweepHandler(
  env: SweepEnv,
  clients: Pick<AwsClients, 'ddb' | 's3' | 'sqs' | 'bedrockBatch'>,
  clock: Clock,
): SweepHandler {
  const { ddb, s3 } = clients;
  const { logger, log } = createLogger('sweep');
  const table = { ddb, tableName: env.TABLE_NAME };
  const storage: Storage = { ...table, s3, bucketName: env.BUCKET_NAME, changes: new DynamoSearchChangeLog(table) };
  const jobs = new SqsJobQueue(clients.sqs, env.JOB_QUEUE_URL);
  const config = parseSleepTimeConfig(env.SLEEP_TIME_CONFIG);
  const tierPolicy = parseTierPolicy(env.TIER_POLICY);
  const deps: SweepDeps = {
    activity: new DynamoSignalStateStore(storage, clock),
    runs: new DynamoSleepTimeLogStore(storage),
    turns: new DynamoS3TurnStore(storage),
    jobs,
    knowledge: new DynamoS3KnowledgeStore(storage),
    expiryLog: new DynamoExpiryLog(storage),
    items: new DynamoMemoryItemStore(storage),
    config,
    tierPolicy,
    log,
  };
  const settings = parseBatchInferenceSettings(env.BATCH_INFERENCE, 'BATCH_INFERENCE');
  const routine = parseBatchInferenceSettings(env.ROUTINE_BATCH_INFERENCE, 'ROUTINE_BATCH_INFERENCE');
  const batch = sleepTimeBatch(settings, routine, storage, clients, {
    jobs,
    config,
    tierPolicy,
    clock,
    log,
  });

  return middy(async (event: unknown, context: Context): Promise<SweepResult | Completion> => {
    if (BatchJobStateChangeSchema.safeParse(event).success) {
      const done = await batch.complete(event);
      logger.info('batch inference job state change', { ...done });
      return done;
    }
    const input = SweepInputSchema.parse(event);
    // Bedrock's end events come best effort: every scheduled sweep completes the jobs that ended without one.
    // A failure here (S3, Bedrock's control plane) must not cost the sweep itself: the next sweep asks again.
    const reconciled = await batch.reconcile().catch((error: Error) => {
      logger.warn('batch inference jobs not reconciled: the next sweep asks again', { error: error.message });
      return [];
    });
    if (reconciled.length > 0) logger.warn('batch inference jobs completed with no event', { jobs: reconciled });
    const dispatch = batch.dispatch;
    const now = input.time ? new Date(input.time) : clock.now();
    // The day's routine reflections first: their job is started before the night's runs are collected.
    const routine = input.sweep === 'nightly' && batch.routine ? await batch.routine(now) : undefined;
    if (routine) logger.info('routine reflections collected', { ...routine });
    const result = await SWEEP[input.sweep](now, {
      ...deps,
      ...(dispatch ? { dispatch: (due: readonly Job[]) => dispatch(due, context) } : {}),
    });
    // No metric: no alarm reads a sweep's count (lib/kernel/metrics.adapter.ts); the jobs it enqueued are in the log line.
    logger.info('sweep done', { ...result, jobCount: result.jobs.length });
    return result;
  }).use(injectLambdaContext(logger)) as unknown as SweepHandler;
}
