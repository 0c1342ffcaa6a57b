/**
 * Routine reflections at batch prices (docs/design.md "Batch inference"): a batch reflection fired
 * by the turn count (req R-SIG-1's `turn_count`) is not urgent, so on a stage with
 * `routineInference.batch` on the reflector does not ask the model for it: it keeps the request
 * (`deferReflection`) and the nightly sweep sends every request kept to one Amazon Bedrock batch
 * inference job (`dispatchRoutine`), about half the on-demand price. An urgent batch, an
 * agent.event's, a summary and a batch fired again by its timeout go on demand as before.
 *
 * - **Deferral (reflector).** The request is exactly the one the job would have sent then (the
 *   batch's turns, the Knowledge of that moment), kept under the user and job; the signal state
 *   marks the batch deferred, so its timeout waits for the job (`deferredBatchTimeoutMs`) instead of
 *   firing it again after half an hour. The job message is then done: nothing is staged yet.
 * - **Collection (nightly sweep).** Every kept request but those of users forgotten since, and
 *   those citing a turn forgotten by provenance since (sent back, for the reflector to drop).
 *   Enough of them (chooseInference): one job whose manifest lists the reflections in each user's
 *   turn order; too few, too many, or a job Bedrock refuses: each is enqueued to run on demand
 *   (`onDemand`). The kept requests are removed last, so a sweep that dies part-way collects them
 *   again; a job already started under the sweep's name is not started twice (its name is the
 *   request's idempotency token).
 * - **Completion** is the sleep-time jobs' (sleep-time-batch.ts completeEnded): each answer goes
 *   under its job id, the reflections are enqueued again in order (`onDemand`, a deduplication id of
 *   their own: lib/jobs/sqs-job-queue.adapter.ts), find their answer and finish; one with no usable
 *   answer asks on demand.
 */
import type { Job } from '../../events/job.js';
import type { JobQueue } from '../jobs/job-queue.port.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { ModelRequest } from '../model/language-model.port.js';
import type { SignalStateStore } from '../signals/signal-state.port.js';
import { changeSignalState } from '../signals/change-signal-state.js';
import { deferBatch } from '../signals/signal-accumulator.js';
import {
  type BatchEntry,
  type BatchRecordLimits,
  batchJobName,
  batchRecordId,
  chooseInference,
  type DeferredReflection,
  DeferredToBatch,
} from './batch-inference.js';
import type { BatchInference, DeferredReflections } from './batch-inference.port.js';
import type { ErasureLog, ForgetLog } from '../forget/forget.port.js';
import { forgottenUsers, USERS_AT_ONCE } from './sleep-time-batch.js';
import { inGroups } from '../kernel/in-groups.js';

/** The trigger of a routine batch: the turn count reached (lib/signals/signal-accumulator.ts shouldTrigger). */
export const ROUTINE_TRIGGER = 'turn_count';

/** A batch reflection that goes to batch inference: a routine batch's, not one sent back to run on demand. */
export const defersToBatch = (job: Job): boolean =>
  job.kind === 'batch' && job.trigger === ROUTINE_TRIGGER && job.onDemand !== true;

/** Thrown by the reflection once its request is kept: the job is done for now (lib/jobs/run-job.ts). */
export class ReflectionDeferred extends DeferredToBatch {}

export interface DeferralDeps {
  deferred: Pick<DeferredReflections, 'put'>;
  signalState: SignalStateStore;
  clock: Clock;
}

/** The request kept, then the batch marked deferred in the signal state; both repeatable. */
export async function deferReflection(
  job: Job,
  request: Omit<ModelRequest, 'signal'>,
  deps: DeferralDeps,
): Promise<never> {
  await deps.deferred.put({ job, request, deferredAt: deps.clock.now().toISOString() });
  // A state that could not be marked fires the batch again after the usual timeout: it then runs on demand.
  await changeSignalState(deps.signalState, job.userId, (state) => deferBatch(state, job.jobId));
  throw new ReflectionDeferred(`batch ${job.jobId}: its request waits for the nightly batch inference job`);
}

/** Time an on-demand batch keeps for itself (its own model call) before it reflects earlier kept batches first. */
export const EARLIER_FIRST_RESERVE_MS = 60_000;

/**
 * The batches that may correct what came before them: an urgent one (a correction or a
 * contradiction raises urgency, R-SIG-2) and an agent.event's. A session's end, a batch fired
 * again or sent back is not one: were it, every closed session would pull its day's routine
 * batches on demand.
 */
const mayCorrect = (job: Job): boolean => job.trigger === 'urgency' || job.trigger.startsWith('event:');

/**
 * A correction is not staged before what it corrects: before an urgent or agent.event batch
 * (mayCorrect), the user's kept routine batches of earlier turns are reflected on demand first and
 * their requests removed. Those already sent to the night's job wait for it. Stops while the
 * invocation keeps EARLIER_FIRST_RESERVE_MS; what is left waits for the night. How many were reflected.
 */
export async function reflectEarlierFirst(
  job: Job,
  deferred: Pick<DeferredReflections, 'list' | 'remove'>,
  reflect: (earlier: Job) => Promise<unknown>,
  remainingMs: () => number,
): Promise<number> {
  const from = job.turnIds[0];
  if (from === undefined || !mayCorrect(job)) return 0;
  const earlier = collectable(
    (await deferred.list(job.userId)).filter((d) => d.job.jobId !== job.jobId && (d.job.turnIds[0] ?? from) < from),
  );
  let done = 0;
  for (const d of earlier) {
    if (remainingMs() < EARLIER_FIRST_RESERVE_MS) break;
    await reflect({ ...d.job, onDemand: true });
    await deferred.remove([d.key]);
    done += 1;
  }
  return done;
}

export interface RoutineBatchDeps {
  batch: BatchInference;
  /** The forget receipts: a request of a user forgotten since it was kept is dropped, not sent. */
  forgets: Pick<ForgetLog, 'latest'>;
  /** The turns forgotten by provenance (req R-DEL-4): a request citing one is not sent; its reflection is dropped by the reflector. */
  erasures: Pick<ErasureLog, 'forgottenTurns'>;
  deferred: DeferredReflections;
  jobs: Pick<JobQueue, 'enqueue'>;
  limits: BatchRecordLimits;
  /** The model the job runs: the batch reflections'. */
  modelId: string;
  jobPrefix: string;
  log: Log;
}

export interface RoutineDispatch {
  inference: 'batch' | 'on-demand' | 'none';
  records: number;
  jobArn?: string;
  /** Reflections enqueued now, to run on demand. */
  enqueued: number;
}

/** The kept requests, one per user and job, in each user's turn order. */
function collectable(kept: ReadonlyArray<DeferredReflection & { key: string }>) {
  const byJob = new Map<string, DeferredReflection & { key: string }>();
  for (const d of kept) byJob.set(`${d.job.userId}\n${d.job.jobId}`, d);
  const first = (d: DeferredReflection) => d.job.turnIds[0] ?? 0;
  return [...byJob.values()].sort((a, b) =>
    a.job.userId === b.job.userId ? first(a) - first(b) : a.job.userId < b.job.userId ? -1 : 1,
  );
}

/** Each reflection enqueued to ask the model itself. */
async function onDemand(jobs: readonly Job[], deps: RoutineBatchDeps): Promise<void> {
  for (const job of jobs) await deps.jobs.enqueue({ ...job, onDemand: true });
}

/**
 * The nightly collection: every routine reflection kept, as one batch inference job named after
 * the sweep (`routine-<sweepJobId>`), or on demand. The requests are removed last.
 */
export async function dispatchRoutine(sweepJobId: string, deps: RoutineBatchDeps): Promise<RoutineDispatch> {
  const jobName = batchJobName(deps.jobPrefix, `routine-${sweepJobId}`);
  const kept = await deps.deferred.list();
  const started = await deps.batch.manifest(jobName);
  if (started) {
    // A sweep delivered again after its job started: only what the first delivery did not remove.
    const done = new Set(started.jobs.map((j) => `${j.userId}\n${j.jobId}`));
    await deps.deferred.remove(kept.filter((d) => done.has(`${d.job.userId}\n${d.job.jobId}`)).map((d) => d.key));
    return { inference: 'batch', records: started.records.length, enqueued: 0 };
  }
  const forgotten = await forgottenUsers(
    kept.map((d) => d.job),
    deps.forgets,
  );
  const due = collectable(kept.filter((d) => !forgotten.has(d.job.userId)));
  if (due.length === 0) {
    await deps.deferred.remove(kept.map((d) => d.key));
    return { inference: 'none', records: 0, enqueued: 0 };
  }
  const { send, cited } = await withoutForgottenTurns(due, deps.erasures);
  // Sent back at once: the reflector drops a job citing a forgotten turn and releases its batch (lib/jobs/run-job.ts).
  await onDemand(cited, deps);
  const jobs = send.map((d) => d.job);
  const entries: BatchEntry[] = send.map((d) => ({
    recordId: batchRecordId(d.job.userId, d.job.jobId),
    userId: d.job.userId,
    key: d.job.jobId,
    request: d.request,
  }));
  const result = jobs.length > 0 ? await startOrFallBack(jobName, jobs, entries, deps) : null;
  await deps.deferred.remove(kept.map((d) => d.key));
  return result ?? { inference: 'none', records: 0, enqueued: cited.length };
}

/** The requests to send, and the jobs of those citing a turn forgotten by provenance since they were kept. */
async function withoutForgottenTurns(
  due: ReadonlyArray<DeferredReflection>,
  erasures: Pick<ErasureLog, 'forgottenTurns'>,
): Promise<{ send: DeferredReflection[]; cited: Job[] }> {
  const users = [...new Set(due.map((d) => d.job.userId))];
  const turns = await inGroups(users, USERS_AT_ONCE, (userId) => erasures.forgottenTurns(userId));
  const forgotten = new Map(users.map((userId, i) => [userId, turns[i]]));
  const cites = (d: DeferredReflection) => d.job.turnIds.some((t) => forgotten.get(d.job.userId)?.has(t));
  return { send: due.filter((d) => !cites(d)), cited: due.filter(cites).map((d) => d.job) };
}

async function startOrFallBack(
  jobName: string,
  jobs: readonly Job[],
  entries: readonly BatchEntry[],
  deps: RoutineBatchDeps,
): Promise<RoutineDispatch> {
  if (chooseInference(entries.length, deps.limits) === 'on-demand') {
    await onDemand(jobs, deps);
    deps.log.info('routine reflections run on demand: outside the batch job limits', { records: entries.length });
    return { inference: 'on-demand', records: entries.length, enqueued: jobs.length };
  }
  const records = entries.map(({ recordId, userId, key }) => ({ recordId, userId, key }));
  try {
    const jobArn = await deps.batch.start({ jobName, modelId: deps.modelId, jobs: [...jobs], records }, entries);
    deps.log.info('routine batch inference job started', { jobName, jobArn, records: entries.length });
    return { inference: 'batch', records: entries.length, jobArn, enqueued: 0 };
  } catch (error) {
    // A job Bedrock refuses (a quota, the role, the model) must not cost the reflections: on demand.
    deps.log.warn('routine batch inference job not started: the reflections go on demand', {
      jobName,
      error: (error as Error).message,
    });
    await onDemand(jobs, deps);
    return { inference: 'on-demand', records: entries.length, enqueued: jobs.length };
  }
}
