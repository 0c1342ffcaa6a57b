/**
 * The reflector's one job dispatcher: a parsed job of the job queue (`QUEUES.job` in infra), whatever its kind,
 * to the use case that does it — the forget, the nightly and weekly sleep-time runs, a summary,
 * or a batch reflection — and what came of it. A job asked for before its user was forgotten
 * (a redrive, a late duplicate) writes nothing. The reflector's record handler
 * (functions/reflector/job-record-handler.ts) and the fuzzer (bench/fuzz-targets.ts) both call it;
 * the handler writes the outcome's counts in its log line, the fuzzer into its outcomes.
 */
import type { Job } from '../../events/job.js';
import type { ErasureLog, ForgetLog } from '../forget/forget.port.js';
import type { LanguageModel } from '../model/language-model.port.js';
import type { Log } from '../kernel/runtime.port.js';
import { askedBefore, type ForgetDeps, forgetUser, forgottenBefore } from '../forget/forget-user.js';
import { modelWithDeadline } from '../kernel/deadline.js';
import { type JobUsage, runUsage, usageOf } from '../costs/job-cost.js';
import type { ReflectionDeps } from '../batches/reflection-deps.js';
import { releaseBatch } from '../batches/batch-counters.js';
import { runReflection } from '../batches/run-reflection.js';
import { ReflectionDeferred, reflectEarlierFirst } from '../batch-inference/routine-batch.js';
import { runSleepTime, type SleepTimeDeps } from '../sleep-time/run-sleep-time.js';
import { runSummary, SUMMARY_KINDS, type SummaryDeps } from '../summaries/run-summary.js';

/** The use cases' dependencies, over one set of stores. */
export interface JobDeps {
  reflection: ReflectionDeps;
  summary: SummaryDeps;
  sleepTime: SleepTimeDeps;
  forgets: Pick<ForgetLog, 'latest'>;
  /** The turns forgotten by provenance (req R-DEL-4): a batch or summary job citing one writes nothing. */
  erasures: Pick<ErasureLog, 'forgottenTurns'>;
  /** The forget's dependencies, given the time the invocation has left. */
  forget: (remainingMs: () => number) => ForgetDeps;
  log: Log;
}

/** Which use case ran the job. */
export type JobFamily = 'forget' | 'nightly' | 'weekly' | 'summary' | 'batch';

/** What counts the job adds to the reflector's log line (functions/reflector/job-record-handler.ts reportJob). */
export type JobCounts = Partial<
  Record<'ItemsStaged' | 'GateRejections' | 'ItemsPromoted' | 'ModelInputTokens' | 'ModelOutputTokens', number>
>;

export interface JobOutcome {
  family: JobFamily;
  /** The use case's status (`dropped` for a job asked for before its user was forgotten). */
  status: string;
  /** The job did its work (the `done` field of the reflector's log line). */
  done: boolean;
  /** What its model calls cost (null: no model call, or the job did not run). */
  usage: JobUsage | null;
  counts: JobCounts;
}

export interface RunJobOptions {
  /** An unusable model answer is asked again on the next delivery (req R-ERR-1, R-ERR-2, "retry once"). */
  retryUnusableOutput: boolean;
  /** The time the invocation has left (the forget stops in time and goes on later). */
  remainingMs: () => number;
  /**
   * Aborts the job's model calls (batch, summary, nightly, weekly) while the invocation can
   * still record their failure (lib/kernel/deadline.ts). Absent: no deadline.
   */
  signal?: AbortSignal;
}

export const familyOf = (kind: Job['kind']): JobFamily =>
  kind === 'forget' || kind === 'nightly' || kind === 'weekly' ? kind : SUMMARY_KINDS.has(kind) ? 'summary' : 'batch';

/** Run the job with the use case of its kind. Errors are the use cases' own (the handler decides on retries). */
export async function runJob(job: Job, deps: JobDeps, options: RunJobOptions): Promise<JobOutcome> {
  const family = familyOf(job.kind);
  if (family === 'forget') return forget(job, deps, options.remainingMs);
  if (await askedBeforeForget(job, deps)) return { family, status: 'dropped', done: false, usage: null, counts: {} };
  if ((family === 'batch' || family === 'summary') && (await citesForgottenTurns(job, family, deps)))
    return { family, status: 'dropped', done: false, usage: null, counts: {} };
  const { retryUnusableOutput, signal } = options;
  if (family === 'nightly' || family === 'weekly')
    return sleepTime(job, family, deps, {
      retryUnusableOutput,
      model: modelWithDeadline(deps.sleepTime.model, signal),
    });
  if (family === 'summary')
    return summary(job, deps, { retryUnusableOutput, model: modelWithDeadline(deps.summary.model, signal) });
  return batch(job, deps, { retryUnusableOutput, model: modelWithDeadline(deps.reflection.model, signal) }, options);
}

/** What a job's use case is given besides its dependencies: its retry rule and its model, bound to the job's deadline. */
type CallOptions = { retryUnusableOutput: boolean; model: LanguageModel };

/** The forget job (one that stops with more to erase enqueues its continuation; with nothing erased, it throws ForgetContinuesError). */
async function forget(job: Job, deps: JobDeps, remainingMs: () => number): Promise<JobOutcome> {
  const outcome = await forgetUser(job, deps.forget(remainingMs));
  if (outcome.status === 'skipped')
    deps.log.info('forget skipped', { jobId: job.jobId, userId: job.userId, reason: outcome.reason });
  return { family: 'forget', status: outcome.status, done: outcome.status === 'forgotten', usage: null, counts: {} };
}

/** A job asked for before its user was forgotten (a redrive, a late duplicate) writes nothing. */
async function askedBeforeForget(job: Job, deps: JobDeps): Promise<boolean> {
  const before = await forgottenBefore(deps.forgets, job.userId);
  if (!askedBefore(job, before)) return false;
  deps.log.info('job dropped: its user was forgotten after it was asked for', {
    jobId: job.jobId,
    userId: job.userId,
    kind: job.kind,
    forgottenAt: before,
  });
  return true;
}

/**
 * Req R-DEL-4: a batch or summary job citing a turn forgotten by provenance (queued before the
 * forget, redriven, a late duplicate) writes nothing; a batch's counters are released as a
 * completed batch's are, so the user's next batch is not held back by it. A nightly or weekly
 * run reads its turns when it runs, and the forgotten ones are gone by then.
 */
async function citesForgottenTurns(job: Job, family: 'batch' | 'summary', deps: JobDeps): Promise<boolean> {
  if (job.turnIds.length === 0) return false;
  const forgotten = await deps.erasures.forgottenTurns(job.userId);
  const cited = job.turnIds.filter((t) => forgotten.has(t));
  if (cited.length === 0) return false;
  if (family === 'batch') await releaseBatch(job, deps.reflection);
  deps.log.info('job dropped: it cites turns forgotten by provenance', {
    jobId: job.jobId,
    userId: job.userId,
    kind: job.kind,
    forgottenTurns: cited.length,
  });
  return true;
}

async function sleepTime(
  job: Job,
  family: 'nightly' | 'weekly',
  deps: JobDeps,
  call: CallOptions,
): Promise<JobOutcome> {
  const out = await runSleepTime(job, { ...deps.sleepTime, ...call });
  const done = out.status === 'completed';
  deps.log.info('sleep-time run done', {
    jobId: job.jobId,
    userId: job.userId,
    kind: job.kind,
    status: out.status,
    ...(out.status === 'completed' ? { memoriesStored: out.run.memoriesStored } : {}),
  });
  const usage = out.status === 'completed' ? runUsage(out.run) : null;
  const counts: JobCounts = usage ? { ModelInputTokens: usage.inputTokens, ModelOutputTokens: usage.outputTokens } : {};
  return { family, status: out.status, done, usage, counts };
}

async function summary(job: Job, deps: JobDeps, call: CallOptions): Promise<JobOutcome> {
  const out = await runSummary(job, { ...deps.summary, ...call });
  if (out.status !== 'written') {
    deps.log.info('summary not written', {
      jobId: job.jobId,
      userId: job.userId,
      status: out.status,
      reason: out.reason,
    });
    return { family: 'summary', status: out.status, done: false, usage: null, counts: {} };
  }
  return { family: 'summary', status: out.status, done: true, usage: out.usage, counts: {} };
}

/** A batch reflection; a routine one whose request is kept for the nightly batch inference job is `deferred`. */
async function batch(job: Job, deps: JobDeps, call: CallOptions, options: RunJobOptions): Promise<JobOutcome> {
  let outcome: Awaited<ReturnType<typeof runReflection>>;
  const reflection = { ...deps.reflection, ...call };
  try {
    if (reflection.deferred) {
      // Each earlier batch passes the same forget checks as a job of its own.
      const reflectEarlier = async (j: Job) =>
        (await askedBeforeForget(j, deps)) || (await citesForgottenTurns(j, 'batch', deps))
          ? undefined
          : runReflection(j, reflection);
      const earlier = await reflectEarlierFirst(job, reflection.deferred, reflectEarlier, options.remainingMs);
      if (earlier > 0) deps.log.info('earlier kept batches reflected first', { jobId: job.jobId, earlier });
    }
    outcome = await runReflection(job, reflection);
  } catch (error) {
    if (!(error instanceof ReflectionDeferred)) throw error;
    deps.log.info('batch deferred to batch inference', { jobId: job.jobId, userId: job.userId });
    return { family: 'batch', status: 'deferred', done: false, usage: null, counts: {} };
  }
  const done = outcome.status === 'completed';
  if (!('log' in outcome)) {
    deps.log.info('job not run', {
      jobId: job.jobId,
      userId: job.userId,
      kind: job.kind,
      status: outcome.status,
      reason: outcome.reason,
    });
    return { family: 'batch', status: outcome.status, done, usage: null, counts: {} };
  }
  const { log } = outcome;
  const counts: JobCounts = {
    ItemsStaged: log.staged_files.length,
    GateRejections: log.quality_gate_results.rejections.length,
    ItemsPromoted: log.promoted_files.length,
  };
  const model = log.model;
  if (!model) return { family: 'batch', status: outcome.status, done, usage: null, counts };
  if (!model.reused)
    Object.assign(counts, { ModelInputTokens: model.inputTokens, ModelOutputTokens: model.outputTokens });
  return { family: 'batch', status: outcome.status, done, usage: usageOf(model), counts };
}
