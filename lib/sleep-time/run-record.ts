/**
 * What a sleep-time run records (req R-SLP): its log record, each model answer before use
 * (so a redelivered job reuses it), the tokens and cost of its calls, and its cost in the ledger.
 */
import type * as z from 'zod';
import type { Job } from '../../events/job.js';
import { costEntry, runUsage } from '../costs/job-cost.js';
import type { CostLedger } from '../costs/cost-ledger.port.js';
import type { Log } from '../kernel/runtime.port.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import { answerValueOf } from '../model/model-answer.js';
import { callWithBudgetRetry, costOf, unusableStop } from '../model/model-call.js';
import {
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  UnusableModelOutputError,
} from '../model/language-model.port.js';
import { type BatchCollector, DeferredToBatch } from '../batch-inference/batch-inference.js';
import type { SleepTimeConfig } from './config.js';
import type { SleepTimeRun } from './run-log.js';

/** What a recorded call needs of the run's dependencies (SleepTimeDeps has them). */
export interface RecordedCallDeps {
  knowledge: Pick<KnowledgeStore, 'getModelOutput' | 'putModelOutput'>;
  model: Pick<LanguageModel, 'maxOutputTokens' | 'reflect'>;
  log: Log;
  config: Pick<SleepTimeConfig, 'maxTokens'>;
  retryUnusableOutput?: boolean;
  /**
   * Collect mode (lib/batch-inference): a call with no recorded answer adds its request to the
   * sweep's batch inference job instead of asking the model, and the run stops (DeferredToBatch).
   */
  collect?: BatchCollector | undefined;
}

/** In collect mode, the run stops here, before its first write: it needed no model call, so it runs on demand. */
export function stopIfCollecting(job: Job, deps: Pick<RecordedCallDeps, 'collect'>): void {
  if (deps.collect) throw new DeferredToBatch(`${job.kind} ${job.jobId}: no model call to collect`);
}

/** The run's model cost into the ledger, when it asked the model. */
export async function recordCost(job: Job, run: SleepTimeRun, deps: { costs: CostLedger }): Promise<void> {
  const usage = runUsage(run);
  if (usage) await deps.costs.record(costEntry(job, usage, job.requestedAt));
}

/**
 * A model call (`ask`: its request for a budget of output tokens) whose answer is recorded
 * before use, so a redelivered job reuses it, or a batch inference job's answer put there
 * before the run (lib/batch-inference); the answer is parsed once with `schema`. A cut answer is asked again once with a larger budget.
 * An unusable fresh answer (cut even so, a malformed tool call, or not matching `schema`) is
 * thrown away (not recorded) when the job will be delivered again; `unusable` says why.
 */
export async function callCached<T>(
  job: Job,
  part: string,
  deps: RecordedCallDeps,
  ask: (maxTokens: number) => Omit<ModelRequest, 'signal'>,
  schema: z.ZodType<T>,
): Promise<ModelResponse & { reused: boolean; parsed: z.ZodSafeParseResult<T>; unusable: string | null }> {
  const judge = (r: ModelResponse) => {
    const parsed = schema.safeParse(answerValueOf(r.output, schema));
    const issue = parsed.success
      ? null
      : `unusable output (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`;
    return { parsed, unusable: unusableStop(r.usage) ?? issue };
  };
  const key = `${job.jobId}-${part}`;
  const cached = await deps.knowledge.getModelOutput(job.userId, key);
  if (cached) return { ...cached, reused: true, ...judge(cached) };
  if (deps.collect) {
    deps.collect.add(job.userId, key, ask(deps.config.maxTokens));
    throw new DeferredToBatch(`${job.kind} ${job.jobId} ${part}: collected for a batch inference job`);
  }
  const call = (maxTokens: number) => deps.model.reflect(ask(maxTokens));
  const fresh = await callWithBudgetRetry(call, deps.config.maxTokens, deps.model.maxOutputTokens, deps.log, {
    userId: job.userId,
    runId: job.jobId,
    part,
  });
  const judged = judge(fresh);
  if (deps.retryUnusableOutput && judged.unusable) {
    throw new UnusableModelOutputError(
      `${job.kind} ${job.jobId} ${part}: ${judged.unusable}; retrying on the next delivery`,
    );
  }
  await deps.knowledge.putModelOutput(job.userId, key, fresh);
  return { ...fresh, reused: false, ...judged };
}

/** A run record with nothing reviewed yet: the run fills it in as it goes. */
export function emptyRun(job: Job, kind: SleepTimeRun['kind'], from: string): SleepTimeRun {
  return {
    runId: job.jobId,
    userId: job.userId,
    kind,
    status: 'completed',
    startedAt: job.requestedAt,
    windowFrom: from,
    windowTo: job.requestedAt,
    sessionsReviewed: 0,
    messagesReviewed: 0,
    summariesReviewed: 0,
    chunks: 0,
    findingsByCategory: {},
    findingsRejected: [],
    memoriesStored: 0,
    stored: [],
    tokens: { input: 0, output: 0 },
    estimatedCostUsd: 0,
    model: null,
    durationMs: 0,
    errors: [],
  };
}

/**
 * Count a call's tokens (the answer's; a cut first call's apart, in budgetRetries) and cost
 * (both calls), and keep why the model stopped. An answer an earlier delivery of the run
 * recorded counts too: that delivery paid for it and logged nothing, so the run's log counts
 * each answer once, whichever delivery completes it.
 */
export function addUsage(run: SleepTimeRun, part: string, r: ModelResponse): void {
  if (r.usage.stopReason) run.stopReasons = { ...run.stopReasons, [part]: r.usage.stopReason };
  run.tokens.input += r.usage.inputTokens;
  run.tokens.output += r.usage.outputTokens;
  const retry = r.usage.budgetRetry;
  if (retry) {
    const before = run.budgetRetries ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
    run.budgetRetries = {
      calls: before.calls + 1,
      inputTokens: before.inputTokens + retry.inputTokens,
      outputTokens: before.outputTokens + retry.outputTokens,
    };
  }
  run.model = r.usage.modelId;
  const cost = costOf(r.usage);
  run.estimatedCostUsd =
    cost === null || run.estimatedCostUsd === null ? null : Math.round((run.estimatedCostUsd + cost) * 1e6) / 1e6;
}
