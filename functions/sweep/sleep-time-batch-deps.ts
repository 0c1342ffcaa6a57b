/**
 * The sweep's sleep-time at batch prices over the AWS stores (lib/batch-inference/sleep-time-batch.ts):
 * its runs in collect mode read what the reflector's runs read (turns, summaries, Knowledge, the
 * run log, recorded answers) and stop before their first write; the batch inference job's files
 * go under the bucket's `batch-inference/` prefix; its answers into the recorded-answer store.
 */
import type { Context } from 'aws-lambda';
import type { Job } from '../../events/job.js';
import { BedrockBatchInference } from '../../lib/batch-inference/bedrock-batch-inference.adapter.js';
import { type BatchInferenceSettings, collectOnlyModel } from '../../lib/batch-inference/batch-inference.js';
import {
  type Completion,
  completeBatch,
  type Dispatch,
  dispatchSleepTime,
  reconcileBatches,
} from '../../lib/batch-inference/sleep-time-batch.js';
import { S3DeferredReflections } from '../../lib/batch-inference/deferred-reflections.adapter.js';
import { dispatchRoutine, type RoutineDispatch } from '../../lib/batch-inference/routine-batch.js';
import { DynamoCostLedger } from '../../lib/costs/dynamo-cost-ledger.adapter.js';
import { DynamoErasureLog } from '../../lib/forget/dynamo-erasure-log.adapter.js';
import { DynamoForgetLog } from '../../lib/forget/dynamo-forget-log.adapter.js';
import { DynamoGraphStore } from '../../lib/graph/dynamo-graph-store.adapter.js';
import type { JobQueue } from '../../lib/jobs/job-queue.port.js';
import { sweepStamp } from '../../lib/jobs/sweeps.js';
import type { AwsClients } from '../../lib/kernel/aws-clients.adapter.js';
import type { Clock, Log } from '../../lib/kernel/runtime.port.js';
import type { Storage } from '../../lib/kernel/storage.adapter.js';
import { catalogStores } from '../../lib/search/catalog-stores.adapter.js';
import type { SleepTimeConfig } from '../../lib/sleep-time/config.js';
import { runSleepTime, type SleepTimeDeps } from '../../lib/sleep-time/run-sleep-time.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { DynamoS3SummarySource } from '../../lib/summaries/summary-source.adapter.js';
import type { TierPolicy } from '../../lib/tiers/tier-settings.js';

export interface SleepTimeBatch {
  /** The sweep's jobs, as one batch inference job or on demand, within the invocation's time; unset: batch inference off. */
  dispatch?: (jobs: readonly Job[], context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<Dispatch>;
  /** A batch inference job's state change: its answers recorded, its jobs enqueued again. */
  complete(event: unknown): Promise<Completion>;
  /** Jobs that ended with no event processed, completed (reconcileBatches); none when batch inference is off. */
  reconcile(): Promise<Completion[]>;
  /** The nightly collection of routine reflections (dispatchRoutine); unset: routine batch inference off. */
  routine?: (now: Date) => Promise<RoutineDispatch>;
}

export function sleepTimeBatch(
  settings: BatchInferenceSettings | null,
  routine: BatchInferenceSettings | null,
  storage: Storage,
  clients: Pick<AwsClients, 'bedrockBatch'>,
  parts: { jobs: JobQueue; config: SleepTimeConfig; tierPolicy: TierPolicy; clock: Clock; log: Log },
): SleepTimeBatch {
  const { jobs, config, tierPolicy, clock, log } = parts;
  const { turns, knowledge, items } = catalogStores(storage, config.stagedExpiryDays);
  const erasures = new DynamoErasureLog(storage);
  const sleep: SleepTimeDeps = {
    turns,
    knowledge,
    items,
    runs: new DynamoSleepTimeLogStore(storage),
    summaries: new DynamoS3SummarySource(storage),
    graph: new DynamoGraphStore(storage),
    costs: new DynamoCostLedger(storage),
    erasures,
    model: collectOnlyModel,
    clock,
    log,
    config,
    tierPolicy,
  };
  // The role is named only when a job starts: a stage that turned batch inference off still completes its last job.
  const batch = new BedrockBatchInference(storage, clients.bedrockBatch, (settings ?? routine)?.roleArn ?? '');
  const common = { batch, jobs, answers: knowledge, forgets: new DynamoForgetLog(storage), log };
  const dispatch =
    (s: BatchInferenceSettings) => (due: readonly Job[], context: Pick<Context, 'getRemainingTimeInMillis'>) =>
      dispatchSleepTime(due, (job, collect) => runSleepTime(job, { ...sleep, collect }), {
        ...common,
        limits: s,
        modelId: s.modelId,
        jobPrefix: s.jobPrefix,
        mostRecordsPerJob: Math.max(config.maxNightlyChunks, 1),
        remainingMs: () => context.getRemainingTimeInMillis(),
      });
  const deferred = new S3DeferredReflections(storage);
  // The routine reflections' job is named after the night's sweep, as its sleep-time runs are.
  const collect = (s: BatchInferenceSettings) => (now: Date) =>
    dispatchRoutine(sweepStamp(now), {
      ...common,
      deferred,
      erasures,
      limits: s,
      modelId: s.modelId,
      jobPrefix: s.jobPrefix,
    });
  return {
    ...(settings ? { dispatch: dispatch(settings) } : {}),
    ...(routine ? { routine: collect(routine) } : {}),
    complete: (event) => completeBatch(event, common),
    reconcile: () => (settings || routine ? reconcileBatches(common) : Promise.resolve([])),
  };
}
