/**
 * The all-in bill of a stage: a steady 1M turns and 1M searches a month, priced at month 1 and
 * at month N of doing so. Storage is a stock: each month's 1M turns leave items and documents
 * that are billed again every month they are held, so month N holds N months of them. The
 * model is priced per job kind with the models the stage invokes (its `modelId` and
 * `jobModels`, through its inference profile). AgentCore Memory for the same work beside it.
 */
import type { StageConfig } from '../infra/config/stages.js';
import { type Bill, modelUsdByJob } from './bill.js';
import { BATCH_PRICE_FACTOR } from '../lib/sleep-time/model-prices.js';
import { AGENTCORE } from './cost.js';

/** The job kinds of the bill (bench/bill.ts `tokensByJob`) and the model id each invokes on a stage; other kinds run on `modelId`. */
export function invokedModels(
  config: Pick<StageConfig, 'modelId' | 'inferenceScope' | 'jobModels'>,
  geography = 'us',
): Record<string, string> {
  const prefix =
    config.inferenceScope === 'geo' ? `${geography}.` : config.inferenceScope === 'global' ? 'global.' : '';
  const sleepTime = config.jobModels?.sleepTime ?? config.modelId;
  return {
    default: prefix + config.modelId,
    batch: prefix + config.modelId,
    summary: prefix + (config.jobModels?.summary ?? config.modelId),
    nightly: prefix + sleepTime,
    weekly: prefix + sleepTime,
  };
}

export interface AllIn {
  /** USD per 1M turns by job kind, each kind at its own model and profile (sleep-time at batch prices when on). */
  modelUsdByJob: Record<string, number>;
  /** What batch inference takes off the on-demand price: the routine reflections' it answered, and the nightly and weekly runs' when on. */
  batchInferenceSavingsUsd: number;
  modelUsd: number;
  /** Infrastructure that does not pile up (requests, compute, the wait on Bedrock, logs, KMS requests). */
  flowUsd: number;
  /** Holding what turns leave at month `month`: `month` × a month's holding of 1M turns. */
  storageUsd: number;
  fixedUsd: number;
  retrievalUsd: number;
  total: number;
}

/**
 * USD per 1M turns by job kind, each at its model and profile. The answers batch inference jobs
 * gave in the replay (routine reflections: `batchInferenceTokens`) at the batch price. With
 * `batchSleepTime` (the stage's `sleepTimeInference.batch`) the nightly and weekly runs at batch
 * prices too: at 1M turns a month a night's runs are far more than a job's minimum of records
 * (lib/batch-inference/batch-inference.ts BATCH_RECORD_LIMITS), so every sweep batches, where the
 * replay's few users never reach it. Also what batch prices take off the on-demand price.
 */
export function modelUsdAt(
  bill: Pick<Bill, 'tokens' | 'batchInferenceTokens'>,
  models: Record<string, string>,
  batchSleepTime = false,
): { byJob: Record<string, number>; savings: number } {
  const onDemand = modelUsdByJob(bill.tokens, models);
  const answered = modelUsdByJob(bill.batchInferenceTokens, models);
  const sleepTime = new Set(batchSleepTime ? ['nightly', 'weekly'] : []);
  const byJob: Record<string, number> = {};
  let savings = 0;
  for (const job of new Set([...Object.keys(onDemand), ...Object.keys(answered)])) {
    // What a batch inference job answers: the replay's answers, and the sleep-time runs at this scale.
    const atBatch = (answered[job] ?? 0) + (sleepTime.has(job) ? (onDemand[job] ?? 0) : 0);
    const asked = sleepTime.has(job) ? 0 : (onDemand[job] ?? 0);
    byJob[job] = asked + atBatch * BATCH_PRICE_FACTOR;
    savings += atBatch * (1 - BATCH_PRICE_FACTOR);
  }
  return { byJob, savings };
}

/** Month `month` of 1M turns and 1M searches a month; `bill.fixed` must be priced at that month (modelUsdAt for the options). */
export function allInAt(
  bill: Bill,
  models: Record<string, string>,
  month: number,
  options: { batchSleepTime?: boolean } = {},
): AllIn {
  const { byJob, savings } = modelUsdAt(bill, models, options.batchSleepTime);
  const modelUsd = Object.values(byJob).reduce((n, v) => n + v, 0);
  const flowUsd = bill.infraUsdPer1MTurns - bill.storageUsdPer1MTurns;
  const storageUsd = bill.storageUsdPer1MTurns * month;
  const parts = {
    flowUsd,
    storageUsd,
    fixedUsd: bill.fixedUsdPerMonth,
    retrievalUsd: bill.retrievalUsdPer1MSearches,
    modelUsd,
  };
  return {
    modelUsdByJob: byJob,
    batchInferenceSavingsUsd: savings,
    ...parts,
    total: Object.values(parts).reduce((n, v) => n + v, 0),
  };
}

/**
 * AgentCore Memory for month `month`: an event per turn, a retrieval per search, and the
 * long-term records of `month` months held. Built-in strategies include extraction; self-managed
 * ones leave the team its own model tokens (`modelUsd`, ours).
 */
export function agentCoreAt(
  recordsPer1MTurns: number,
  month: number,
  modelUsd: number,
): { builtIn: number; selfManaged: number } {
  const common = 1e6 * AGENTCORE.event + 1e6 * AGENTCORE.retrieval;
  const records = recordsPer1MTurns * month;
  return {
    builtIn: common + records * AGENTCORE.recordMonth,
    selfManaged: common + records * AGENTCORE.selfManagedRecordMonth + modelUsd,
  };
}
