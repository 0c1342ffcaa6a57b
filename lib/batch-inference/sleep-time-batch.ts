/**
 * Sleep-time at batch prices (docs/design.md "Batch inference"), the two use cases:
 *
 * - dispatchSleepTime (the sweep): runs each due job in collect mode, where a model call with
 *   no recorded answer becomes a record of the sweep's batch inference job and the run stops
 *   before its first write (DeferredToBatch). Enough records (chooseInference): one job, and the
 *   jobs wait for it; fewer or more: every job is enqueued and runs on demand as before.
 *   A job that needs no model call, or whose collection failed, is enqueued at once; so is
 *   every job when the batch job cannot be started.
 * - completeBatch (the job's state change event; also a routine reflections' job, routine-batch.ts): a Completed or PartiallyCompleted job's
 *   answers (but cut ones) go into the recorded-answer store under each record's key (the same key, the same
 *   answer: idempotent), then the jobs are enqueued again; they find their answers and finish
 *   with no model call. A record with no answer, or a Failed, Stopped or Expired job, leaves its
 *   runs to ask on demand when they run: the runs stay retryable. A repeated event does the same
 *   again, harmlessly (the runs are logged once, lib/sleep-time/run-log.ts).
 *
 * Every part of a sleep-time run is batched: the nightly run's chunk calls are independent of
 * each other, and the weekly run makes one call; no prompt depends on an earlier answer of the run.
 */
import type { Job } from '../../events/job.js';
import type { JobQueue } from '../jobs/job-queue.port.js';
import type { Log } from '../kernel/runtime.port.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { ForgetLog } from '../forget/forget.port.js';
import { askedBefore, forgottenBefore } from '../forget/forget-user.js';
import { inGroups } from '../kernel/in-groups.js';
import { unusableStop } from '../model/model-call.js';
import {
  type BatchCollector,
  type BatchEntry,
  type BatchJobStateChange,
  BatchJobStateChangeSchema,
  type BatchRecordLimits,
  batchJobName,
  batchRecordId,
  chooseInference,
  completionOf,
  DeferredToBatch,
} from './batch-inference.js';
import type { BatchInference } from './batch-inference.port.js';

export interface SleepTimeBatchDeps {
  batch: BatchInference;
  /** The forget receipts: a user forgotten after a job of theirs was asked for gets no answer recorded. */
  forgets: Pick<ForgetLog, 'latest'>;
  jobs: Pick<JobQueue, 'enqueue'>;
  /** The recorded-answer store the runs read (lib/sleep-time/run-record.ts callCached). */
  answers: Pick<KnowledgeStore, 'putModelOutput'>;
  /** The job's record limits: BATCH_RECORD_LIMITS, or the stage's. */
  limits: BatchRecordLimits;
  /** The model the job runs: the sleep-time runs'. */
  modelId: string;
  /** The stage's job name prefix (batchJobName). */
  jobPrefix: string;
  /**
   * The most records one job can make (the nightly run's chunk cap; the weekly run makes one):
   * a sweep whose jobs cannot reach the minimum even so goes on demand without collecting.
   */
  mostRecordsPerJob: number;
  /** The invocation's time left (Lambda's context): jobs not collected in time run on demand. */
  remainingMs?: (() => number) | undefined;
  log: Log;
}

/** Jobs collected at once: each reads its user's day from DynamoDB and S3. */
const COLLECT_CONCURRENCY = 8;
/** Time kept back from collecting for the input file, the job's start and the enqueues. */
export const COLLECT_RESERVE_MS = 60_000;

export interface Dispatch {
  inference: 'batch' | 'on-demand';
  records: number;
  /** The batch inference job's ARN, when one was started. */
  jobArn?: string;
  /** Jobs enqueued now (on demand); the others wait for the batch job. */
  enqueued: number;
}

/** One job in collect mode: its requests, none when it needs no model call or its collection failed. */
async function collect(
  job: Job,
  run: (job: Job, collect: BatchCollector) => Promise<unknown>,
  log: Log,
): Promise<Array<Omit<BatchEntry, 'recordId'>>> {
  const found: Array<Omit<BatchEntry, 'recordId'>> = [];
  try {
    await run(job, { add: (userId, key, request) => found.push({ userId, key, request }) });
  } catch (error) {
    if (!(error instanceof DeferredToBatch)) {
      log.warn('sleep-time job not collected for batch inference: it runs on demand', {
        userId: job.userId,
        jobId: job.jobId,
        error: (error as Error).message,
      });
      return [];
    }
  }
  return found;
}

/** Every job collected in time, in groups of COLLECT_CONCURRENCY; a job left out (time ran low) has no entry. */
async function collectAll(
  jobs: readonly Job[],
  run: (job: Job, collect: BatchCollector) => Promise<unknown>,
  deps: SleepTimeBatchDeps,
): Promise<Map<Job, Array<Omit<BatchEntry, 'recordId'>>>> {
  const found = new Map<Job, Array<Omit<BatchEntry, 'recordId'>>>();
  for (let i = 0; i < jobs.length; i += COLLECT_CONCURRENCY) {
    if (deps.remainingMs && deps.remainingMs() < COLLECT_RESERVE_MS) {
      deps.log.warn('sweep ran low on time collecting for batch inference: the rest run on demand', {
        collected: i,
        left: jobs.length - i,
      });
      break;
    }
    const group = jobs.slice(i, i + COLLECT_CONCURRENCY);
    const requests = await Promise.all(group.map((job) => collect(job, run, deps.log)));
    for (const [k, job] of group.entries()) found.set(job, requests[k] ?? []);
  }
  return found;
}

/** Every job enqueued to run on demand: the dispatch when there is no batch job. */
async function allOnDemand(jobs: readonly Job[], records: number, deps: SleepTimeBatchDeps): Promise<Dispatch> {
  for (const job of jobs) await deps.jobs.enqueue(job);
  return { inference: 'on-demand', records, enqueued: jobs.length };
}

/** The sweep's jobs, as one batch inference job when their records are enough, else on demand. */
export async function dispatchSleepTime(
  jobs: readonly Job[],
  run: (job: Job, collect: BatchCollector) => Promise<unknown>,
  deps: SleepTimeBatchDeps,
): Promise<Dispatch> {
  // Too few jobs to reach the minimum even at their most records: no collection pass at all.
  if (jobs.length * deps.mostRecordsPerJob < deps.limits.minRecords) return allOnDemand(jobs, 0, deps);
  const found = await collectAll(jobs, run, deps);
  const waiting: Job[] = [];
  const now: Job[] = [];
  const entries: BatchEntry[] = [];
  for (const job of jobs) {
    const requests = found.get(job) ?? [];
    if (requests.length === 0) now.push(job);
    else waiting.push(job);
    for (const f of requests) entries.push({ recordId: batchRecordId(f.userId, f.key), ...f });
  }
  const first = waiting[0];
  if (!first || chooseInference(entries.length, deps.limits) === 'on-demand')
    return allOnDemand(jobs, entries.length, deps);
  const jobName = batchJobName(deps.jobPrefix, first.jobId);
  const records = entries.map(({ recordId, userId, key }) => ({ recordId, userId, key }));
  let jobArn: string;
  try {
    jobArn = await deps.batch.start({ jobName, modelId: deps.modelId, jobs: waiting, records }, entries);
  } catch (error) {
    // A job Bedrock refuses (a quota, the role, the model) must not cost the night's runs: on demand.
    deps.log.warn('batch inference job not started: the runs go on demand', {
      jobName,
      error: (error as Error).message,
    });
    return allOnDemand(jobs, entries.length, deps);
  }
  for (const job of now) await deps.jobs.enqueue(job);
  deps.log.info('sleep-time batch inference job started', { jobName, jobArn, records: entries.length });
  return { inference: 'batch', records: entries.length, jobArn, enqueued: now.length };
}

export interface Completion {
  status: string;
  /** Answers put into the recorded-answer store. */
  answered: number;
  /** Records with no answer: their runs ask on demand. */
  unanswered: number;
  /** Jobs enqueued again. */
  enqueued: number;
}

/**
 * The users forgotten after one of their jobs was asked for (forgottenBefore): their partition is
 * erased, so no answer of theirs is recorded nor request of theirs sent; their jobs are dropped by
 * the reflector when they come (lib/jobs/run-job.ts).
 */
export async function forgottenUsers(jobs: readonly Job[], forgets: Pick<ForgetLog, 'latest'>): Promise<Set<string>> {
  const users = [...new Set(jobs.map((j) => j.userId))];
  const at = await inGroups(users, USERS_AT_ONCE, (userId) => forgottenBefore(forgets, userId));
  return new Set(users.filter((userId, i) => jobs.some((j) => j.userId === userId && askedBefore(j, at[i] ?? null))));
}

/** Users whose forget receipts or forgotten turns are read at once (one DynamoDB request each). */
export const USERS_AT_ONCE = 16;

type CompletionDeps = Pick<SleepTimeBatchDeps, 'batch' | 'jobs' | 'answers' | 'forgets' | 'log'>;

/** A batch inference job's state change (EventBridge): its answers recorded, its jobs run again. */
export async function completeBatch(event: unknown, deps: CompletionDeps): Promise<Completion> {
  return completeEnded(BatchJobStateChangeSchema.parse(event).detail, deps);
}

/** The job's answers recorded and its runs enqueued again, once it ended (by its event, or found by reconcileBatches). */
async function completeEnded(detail: BatchJobStateChange['detail'], deps: CompletionDeps): Promise<Completion> {
  const what = completionOf(detail.status);
  const none = { status: detail.status, answered: 0, unanswered: 0, enqueued: 0 };
  if (what === 'wait') return none;
  const manifest = await deps.batch.manifest(detail.batchJobName);
  if (!manifest) {
    deps.log.warn('batch inference job with no manifest: not one of the sweeps', { ...detail });
    return none;
  }
  const results = what === 'answers' ? await deps.batch.results(manifest) : [];
  const answers = new Map(results.flatMap((r) => ('response' in r ? [[r.recordId, r.response] as const] : [])));
  const forgotten = await forgottenUsers(manifest.jobs, deps.forgets);
  let answered = 0;
  for (const record of manifest.records) {
    const response = forgotten.has(record.userId) ? undefined : answers.get(record.recordId);
    // A cut answer is left out: the run asks on demand, with a larger budget if cut again (callWithBudgetRetry).
    if (!response || unusableStop(response.usage)) continue;
    await deps.answers.putModelOutput(record.userId, record.key, response);
    answered += 1;
  }
  // A job the batch did not answer asks the model itself (a routine reflection would otherwise be kept again).
  for (const job of manifest.jobs) await deps.jobs.enqueue({ ...job, onDemand: true });
  // Last: a completion that fails before here is done again by the next event or reconciliation.
  await deps.batch.markEnded(manifest.jobName);
  const unanswered = manifest.records.length - answered;
  const log = unanswered > 0 ? deps.log.warn.bind(deps.log) : deps.log.info.bind(deps.log);
  log('batch inference job ended', { ...detail, answered, unanswered, enqueued: manifest.jobs.length });
  return { status: detail.status, answered, unanswered, enqueued: manifest.jobs.length };
}

/**
 * Jobs whose end event never came: Bedrock sends job state changes to EventBridge best effort
 * (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-bedrock.html). Each scheduled
 * sweep asks Bedrock the state of every job whose end is not yet processed and completes those
 * that ended, as their event would have (completeEnded: a second completion, should the event
 * come after all, finds the same answers and the runs logged). The jobs completed.
 */
export async function reconcileBatches(deps: CompletionDeps): Promise<Completion[]> {
  const done: Completion[] = [];
  for (const { jobName, jobArn } of await deps.batch.unfinished()) {
    try {
      const status = await deps.batch.status(jobArn);
      if (completionOf(status) === 'wait') continue;
      deps.log.warn('batch inference job ended with no event processed: completed by the sweep', { jobName, status });
      done.push(await completeEnded({ batchJobArn: jobArn, batchJobName: jobName, status }, deps));
    } catch (error) {
      // One job Bedrock cannot tell about now is asked again at the next sweep; the others go on.
      deps.log.warn('batch inference job not reconciled: asked again at the next sweep', {
        jobName,
        error: (error as Error).message,
      });
    }
  }
  return done;
}
