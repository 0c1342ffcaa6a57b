/**
 * Write a context summary (req R-SUM) for an idle-summary, session-close or manual job:
 * the job's turns as the current context, the configured instruction, one Converse call
 * answered in text, stored as a system + assistant turn pair. Idempotent by job id.
 */
import type { Job } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { type CarriedSummary, type SummarySettings, summaryContext, summaryPair } from './summary.js';
import { CUT_AT_BUDGET, callWithBudgetRetry, unusableStop } from '../model/model-call.js';
import { costEntry, type JobUsage, usageOf } from '../costs/job-cost.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { CostLedger } from '../costs/cost-ledger.port.js';
import type { UserSettingsStore } from '../settings/user-settings.port.js';
import type { TurnStore } from '../turns/turn.port.js';
import { type LanguageModel, type SummaryResponse, UnusableModelOutputError } from '../model/language-model.port.js';
import type { SummaryStore } from './summary.port.js';

export interface SummaryDeps {
  turns: TurnStore;
  summaries: SummaryStore;
  /** What the summary's model call cost, recorded before the summary (its commit record). */
  costs: CostLedger;
  settings: UserSettingsStore;
  model: LanguageModel;
  clock: Clock;
  log: Log;
  /** The stage's defaults; a user's own settings override them. */
  defaults: SummarySettings;
  temperature: number;
  budgetTokens: number;
  /** As ReflectionDeps.retryUnusableOutput: an empty answer is retried, not written. @default false */
  retryUnusableOutput?: boolean;
}

export type SummaryOutcome =
  | { status: 'written'; id: string; text: string; sourceTurns: number[]; usage: JobUsage }
  | { status: 'already_done' | 'disabled' | 'nothing_to_summarise'; reason: string };

export const SUMMARY_KINDS = new Set<Job['kind']>(['idle-summary', 'session-close', 'manual']);

export async function runSummary(job: Job, deps: SummaryDeps): Promise<SummaryOutcome> {
  if (await deps.summaries.exists(job.userId, job.jobId))
    return { status: 'already_done', reason: `summary ${job.jobId} exists` };
  const { idleMinutes: _, ...own } = await deps.settings.get(job.userId);
  // A manual job's prompt is the instruction this once; the user's or the stage's otherwise.
  const settings = { ...deps.defaults, ...own, ...(job.prompt ? { prompt: job.prompt } : {}) };
  if (!settings.enabled) return { status: 'disabled', reason: 'summaries are switched off for this user or stage' };
  const { turns, missing } = await deps.turns.getTurns(job.userId, job.turnIds);
  for (const m of missing) deps.log.warn('turn unreadable; summarising without it', { userId: job.userId, ...m });
  if (turns.length === 0) return { status: 'nothing_to_summarise', reason: "none of the job's turns could be read" };

  const session = newestTurn(turns).sessionId;
  const carried = await previousSummary(job, turns, session, deps);
  const context = summaryContext(turns, deps.budgetTokens, carried);
  const { answer, text } = await askForSummary(job, deps, context.system, settings);
  const pair = summaryPair({
    userId: job.userId,
    id: job.jobId,
    kind: job.kind,
    trigger: job.trigger,
    // Input time: when the summary was asked for, the same on every delivery.
    createdAt: job.requestedAt,
    sourceTurns: context.sourceTurns,
    sessionId: session,
    ...(carried ? { carried: carried.id } : {}),
    prompt: settings.prompt,
    text,
    modelId: answer.usage.modelId,
    inputTokens: answer.usage.inputTokens,
    outputTokens: answer.usage.outputTokens,
    deleted: false,
  });
  const usage = usageOf(answer.usage);
  await deps.costs.record(costEntry(job, usage, job.requestedAt));
  await deps.summaries.write(pair);
  deps.log.info('summary written', {
    userId: job.userId,
    id: job.jobId,
    kind: job.kind,
    turns: context.included.length,
    ...(carried ? { carried: carried.id } : {}),
    inputTokens: answer.usage.inputTokens,
    outputTokens: answer.usage.outputTokens,
    stopReason: answer.usage.stopReason,
  });
  return { status: 'written', id: job.jobId, text: pair.text, sourceTurns: context.sourceTurns, usage };
}

/**
 * The summary's one model call (asked again once with a larger budget when cut) and the text
 * to write. Nothing, or an answer cut at its budget even after a larger one: asked again on the
 * next delivery; on the last, written as it is (a cut one saying so).
 */
async function askForSummary(
  job: Job,
  deps: SummaryDeps,
  system: string,
  settings: SummarySettings,
): Promise<{ answer: SummaryResponse; text: string }> {
  const answer = await callWithBudgetRetry(
    (maxTokens) => deps.model.summarize({ system, prompt: settings.prompt, temperature: deps.temperature, maxTokens }),
    settings.maxTokens,
    deps.model.maxOutputTokens,
    deps.log,
    { userId: job.userId, id: job.jobId },
  );
  const stop = unusableStop(answer.usage);
  if (deps.retryUnusableOutput && (answer.text.trim() === '' || stop)) {
    throw new UnusableModelOutputError(
      `summary ${job.jobId}: ${stop ?? 'the model answered nothing'}; retrying on the next delivery`,
    );
  }
  if (stop)
    deps.log.warn('summary unusable and not to be asked again; written as it is', {
      userId: job.userId,
      id: job.jobId,
      reason: stop,
    });
  const text =
    stop && answer.usage.stopReason === CUT_AT_BUDGET
      ? `${answer.text}… [summary cut at the model's output budget]`
      : answer.text;
  return { answer, text };
}

const newestTurn = (turns: readonly TurnSaved[]): TurnSaved => turns.reduce((a, b) => (b.turnId > a.turnId ? b : a));

/** How many of the newest live summaries are looked at for the session's previous one (sessions of one user seldom interleave). */
const PREVIOUS_LOOKBACK = 3;

/**
 * The session's previous summary, carried forward into this one (seed 003: the whole working
 * context, not only the turns since): the newest live summary — a deleted one never comes back
 * (req R-SUM-7), an edited one comes with its edit — of the session of the job's newest turn
 * that ends before the job's first turn (a manual summary of the same turns again carries none).
 * A summary written before summaries recorded their session is placed by its newest turn.
 */
async function previousSummary(
  job: Job,
  turns: readonly TurnSaved[],
  session: string,
  deps: SummaryDeps,
): Promise<CarriedSummary | null> {
  const first = Math.min(...turns.map((t) => t.turnId));
  const candidates = await deps.summaries.newest(job.userId, { limit: PREVIOUS_LOOKBACK, includeDeleted: false });
  for (const c of candidates) {
    const last = Math.max(...c.sourceTurns);
    if (c.id === job.jobId || c.sourceTurns.length === 0 || last >= first) continue;
    const sessionId = c.sessionId ?? (await deps.turns.getTurns(job.userId, [last])).turns[0]?.sessionId;
    if (sessionId === session) return { id: c.id, sourceTurns: c.sourceTurns, text: c.text };
  }
  return null;
}
