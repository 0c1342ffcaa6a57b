/** A batch job and the signal state's counters (req R-SIG-3): wait until the state records its batch, reset them once it completes. */
import type { Job } from '../../events/job.js';
import { completeBatch } from '../signals/signal-accumulator.js';
import { parseSignalState, type SignalState } from '../signals/signal-state.js';
import { changeSignalState } from '../signals/change-signal-state.js';
import { BatchNotRecordedError } from './batch-log.port.js';
import type { ReflectionDeps } from './reflection-deps.js';

/** How long a job waits, in-process, for the state write that records its batch. */
const RECORDED_WAITS_MS = [200, 400, 800];
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The signal state must record the job's batch (pending) unless a later batch covered its
 * turns (superseded). Ingestion enqueues a job just before its state write, so a job can
 * arrive first: wait a little (the write usually follows within milliseconds), then throw
 * BatchNotRecordedError so the queue delivers the job again after the write landed.
 */
export async function waitUntilRecorded(
  job: Job,
  deps: ReflectionDeps,
): Promise<{ superseded: boolean; lastBatchTurn: number }> {
  const sleep = deps.sleep ?? defaultSleep;
  for (let look = 0; ; look++) {
    const { state } = parseSignalState((await deps.signalState.load(job.userId)).raw);
    if (state.pendingBatches.some((p) => p.jobId === job.jobId))
      return { superseded: false, lastBatchTurn: state.lastBatchTurn };
    if (job.turnIds.every((t) => t <= state.lastBatchTurn))
      return { superseded: true, lastBatchTurn: state.lastBatchTurn };
    const wait = RECORDED_WAITS_MS[look];
    if (wait === undefined) {
      throw new BatchNotRecordedError(
        `the signal state of ${job.userId} does not record batch ${job.jobId} (its ingestion has not written the state yet); retry later`,
      );
    }
    await sleep(wait);
  }
}

/** Reset the counters (req R-SIG-3: after the batch completes), once, if still waiting for this job. */
/** A batch's counters released as on completion, without reflecting (a job dropped for forgotten turns: run-job.ts). */
export const releaseBatch = (job: Job, deps: ReflectionDeps): Promise<void> => finishCounters(job, deps);

export async function finishCounters(job: Job, deps: ReflectionDeps): Promise<void> {
  const done = (state: SignalState) => completeBatch(state, job.jobId, job.turnIds, deps.clock.now());
  if (!(await changeSignalState(deps.signalState, job.userId, done)))
    throw new Error(`could not reset the signal state of ${job.userId} after batch ${job.jobId}`);
}
