/**
 * What the use cases do with why the model stopped (Converse `stopReason`,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_ResponseSyntax):
 * - `max_tokens`: the answer was cut at its output budget. It is asked again once, in the same
 *   delivery, with twice the budget (at most the model's limit); cut again, it is unusable.
 * - `malformed_tool_use`: the model's tool call is invalid: unusable.
 * An unusable answer is asked again on the job's next delivery while the caller may still
 * retry it (req R-ERR-1, R-ERR-2: once), and otherwise aborts the batch (or is logged as the run's
 * error), as unparseable output is.
 */
import type { ModelUsage } from '../batches/batch-log.js';
import { BATCH_PRICE_FACTOR, estimateCostUsd } from '../sleep-time/model-prices.js';
import type { Log } from '../kernel/runtime.port.js';

type Usage = Omit<ModelUsage, 'reused'>;

export const CUT_AT_BUDGET = 'max_tokens';
export const MALFORMED_TOOL_USE = 'malformed_tool_use';

/**
 * Call the model with `maxTokens`; when the answer was cut, call once more with a larger
 * budget (double, capped at `limit`, the model's maximum). The answer returned is the last;
 * a retry leaves the cut call's budget and tokens in `usage.budgetRetry`.
 */
export async function callWithBudgetRetry<R extends { usage: Usage }>(
  call: (maxTokens: number) => Promise<R>,
  maxTokens: number,
  limit: number | undefined,
  log: Log,
  context: Record<string, unknown>,
): Promise<R> {
  const first = await call(maxTokens);
  if (first.usage.stopReason !== CUT_AT_BUDGET) return first;
  const larger = Math.min(maxTokens * 2, limit ?? Number.POSITIVE_INFINITY);
  if (larger <= maxTokens) return first;
  log.warn('model answer cut at its output budget; asking again with a larger one', {
    ...context,
    maxTokens,
    retryMaxTokens: larger,
    stopReason: CUT_AT_BUDGET,
  });
  const second = await call(larger);
  return {
    ...second,
    usage: {
      ...second.usage,
      budgetRetry: {
        maxTokens,
        retryMaxTokens: larger,
        inputTokens: first.usage.inputTokens,
        outputTokens: first.usage.outputTokens,
      },
    },
  };
}

/** Why an answer is unusable whatever it holds (it was cut, or its tool call is malformed), or null. */
export function unusableStop(usage: Usage): string | null {
  if (usage.stopReason === CUT_AT_BUDGET) {
    const retry = usage.budgetRetry;
    return retry
      ? `the model's answer was cut at its output budget of ${retry.maxTokens} tokens, and again at ${retry.retryMaxTokens} (stopReason max_tokens)`
      : `the model's answer was cut after ${usage.outputTokens} output tokens, at the model's limit (stopReason max_tokens)`;
  }
  if (usage.stopReason === MALFORMED_TOOL_USE)
    return 'the model produced an invalid tool call (stopReason malformed_tool_use)';
  return null;
}

/**
 * The estimated cost of an answer, the cut call before a budget retry included, at the batch
 * price when a batch inference job answered it; null for an unknown model.
 */
export function costOf(usage: Usage): number | null {
  const onDemand = estimateCostUsd(usage.modelId, usage.inputTokens, usage.outputTokens);
  const cost =
    onDemand !== null && usage.batchInference ? Math.round(onDemand * BATCH_PRICE_FACTOR * 1e6) / 1e6 : onDemand;
  if (cost === null || !usage.budgetRetry) return cost;
  const cut = estimateCostUsd(usage.modelId, usage.budgetRetry.inputTokens, usage.budgetRetry.outputTokens) ?? 0;
  return Math.round((cost + cut) * 1e6) / 1e6;
}
