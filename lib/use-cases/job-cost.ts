/**
 * A job's model cost as an entry of the cost ledger (lib/domain/daily-cost.ts). Each job
 * records its entry just before its commit marker (the batch log, the summary record, the
 * run record): a delivery that dies before the marker is redelivered and records it then
 * (the ledger keeps the first entry), and a finished job has its entry.
 */
import type { ReflectionJob } from '../../events/reflection-job.js';
import type { ModelUsage } from '../domain/batch-log.js';
import type { CostEntry } from '../domain/daily-cost.js';
import { estimateCostUsd } from '../domain/sleep-time/model-prices.js';

export interface JobUsage {
  modelId: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  /** The answer an earlier delivery recorded was used: no model call in this delivery. */
  reused?: boolean;
}

export function costEntry(job: Pick<ReflectionJob, 'userId' | 'jobId' | 'kind'>, usage: JobUsage, ranAt: Date): CostEntry {
  const at = ranAt.toISOString();
  const { reused: _, ...cost } = usage;
  return { userId: job.userId, jobId: job.jobId, kind: job.kind, day: at.slice(0, 10), at, ...cost };
}

/**
 * A batch's model usage, the tokens of a call cut at its budget and asked again included.
 * Priced from the tokens even when this delivery reused the recorded answer (the batch log
 * says $0 then): the entry is the job's, and a delivery that reuses an answer may be the
 * first to record it, when the one that paid for it died before its commit marker.
 */
export function batchUsage(model: ModelUsage): JobUsage {
  const retry = model.budgetRetry;
  const inputTokens = model.inputTokens + (retry?.inputTokens ?? 0);
  const outputTokens = model.outputTokens + (retry?.outputTokens ?? 0);
  return { modelId: model.modelId, inputTokens, outputTokens, costUsd: estimateCostUsd(model.modelId, inputTokens, outputTokens), reused: model.reused };
}
