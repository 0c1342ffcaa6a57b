/**
 * A job's model cost as an entry of the cost ledger (lib/costs/daily-cost.ts). Each job
 * records its entry just before its commit record (the batch log, the summary record, the
 * run record): a delivery that dies before the marker is redelivered and records it then
 * (the ledger keeps the first entry), and a finished job has its entry.
 */
import type { Job } from '../../events/job.js';
import type { ModelUsage } from '../batches/batch-log.js';
import type { CostEntry } from './daily-cost.js';
import type { SleepTimeRun } from '../sleep-time/run-log.js';
import { costOf } from '../model/model-call.js';

export interface JobUsage {
  modelId: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  /** The answer an earlier delivery recorded was used: no model call in this delivery. */
  reused?: boolean;
}

/**
 * `at` is the job's time, never when a delivery ran it: a batch's last
 * turn's, a summary's or a sleep-time run's `requestedAt` (the schedule's time, the end of
 * the quiet window; for a summary the signal function asked for, its clock then). It names
 * the entry's day, so every delivery files the entry under the same key; a job that runs
 * minutes after midnight is counted on the day it was asked for.
 */
export function costEntry(job: Pick<Job, 'userId' | 'jobId' | 'kind'>, usage: JobUsage, at: string): CostEntry {
  const { reused: _, ...cost } = usage;
  return { userId: job.userId, jobId: job.jobId, kind: job.kind, day: at.slice(0, 10), at, ...cost };
}

/**
 * What a call cost, the tokens of a call cut at its budget and asked again included, priced
 * as the batch log prices them (model-call.ts `costOf`). Priced even when this delivery reused
 * the recorded answer (the batch log says $0 then): the entry is the job's, and a delivery
 * that reuses an answer may be the first to record it, when the one that paid for it died
 * before its commit record.
 */
export function usageOf(usage: Omit<ModelUsage, 'reused'> & { reused?: boolean }): JobUsage {
  const retry = usage.budgetRetry;
  return {
    modelId: usage.modelId,
    inputTokens: usage.inputTokens + (retry?.inputTokens ?? 0),
    outputTokens: usage.outputTokens + (retry?.outputTokens ?? 0),
    costUsd: costOf(usage),
    ...(usage.reused !== undefined ? { reused: usage.reused } : {}),
  };
}

/** A sleep-time run's usage (its tokens and cost are summed over its calls already); null when it asked no model. */
export function runUsage(run: Pick<SleepTimeRun, 'model' | 'tokens' | 'estimatedCostUsd'>): JobUsage | null {
  return run.model === null
    ? null
    : {
        modelId: run.model,
        inputTokens: run.tokens.input,
        outputTokens: run.tokens.output,
        costUsd: run.estimatedCostUsd,
      };
}
