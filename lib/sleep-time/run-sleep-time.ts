/**
 * The sleep-time reflections (the reflector's nightly and weekly jobs), req R-SLP:
 * nightly over the day's messages in token-budget chunks, merged and gated; weekly over the
 * week's summaries. Every run is recorded in the sleep-time run log with tokens and cost.
 * Idempotent: a run id is recorded once; model outputs are kept per chunk and reused.
 */
import { modelSchemaOf } from '../model/model-schema.js';
import { maintainFacts } from '../knowledge/maintain-facts.js';
import { maintainGraph } from '../graph/graph-use-cases.js';
import { reviewTiers } from '../tiers/tier-review.js';
import type { TierPolicy } from '../tiers/tier-settings.js';
import type { Job } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import { KnowledgeSearch } from '../knowledge/knowledge-search.js';
import type { SleepTimeConfig } from './config.js';
import {
  chunkDay,
  dayUnits,
  type Finding,
  isFindingOf,
  leftOut,
  mergeFindings,
  NIGHTLY_MEMORIES,
  NIGHTLY_SYSTEM_PROMPT,
  NIGHTLY_TOOL,
  NightlyOutputSchema,
  nightlyCallCeiling,
  nightlyPrompt,
  pickWithinBudget,
  type TurnChunk,
} from './nightly.js';
import type { SleepTimeRun } from './run-log.js';
import { buriedFindings, gateFindings, relateFindings } from './nightly-findings.js';
import { addUsage, callCached, emptyRun, type RecordedCallDeps, recordCost, stopIfCollecting } from './run-record.js';
import { computeSelfAssessment, type SelfAssessment } from './self-assessment.js';
import {
  conversationDays,
  pickWeekWithinBudget,
  WEEKLY_SYSTEM_PROMPT,
  WEEKLY_TOOL,
  type WeekSummary,
  weeklyCallCeiling,
  WeeklyOutputSchema,
  weeklyPrompt,
} from './weekly.js';
import { topKeywords } from '../kernel/text.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { CostLedger } from '../costs/cost-ledger.port.js';
import type { ErasureLog } from '../forget/forget.port.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { SleepTimeLogStore } from './sleep-time-log.port.js';
import type { TurnStore } from '../turns/turn.port.js';
import type { LanguageModel } from '../model/language-model.port.js';
import type { SummarySource } from '../summaries/summary.port.js';

export interface SleepTimeDeps {
  turns: TurnStore;
  knowledge: KnowledgeStore;
  runs: SleepTimeLogStore;
  summaries: SummarySource;
  model: LanguageModel;
  clock: Clock;
  log: Log;
  config: SleepTimeConfig;
  /** As ReflectionDeps.retryUnusableOutput: an unusable answer is retried, not recorded. @default false */
  retryUnusableOutput?: boolean;
  /** Collect mode (RecordedCallDeps.collect): the run's model requests go to a batch inference job. */
  collect?: RecordedCallDeps['collect'];
  /** The user's relation graph: triples become edges; the nightly run sweeps it. */
  graph: GraphStore;
  /** What the run's model calls cost, recorded before the run's record (its commit record). */
  costs: CostLedger;
  /** Tombstones of deleted facts and findings (req R-DEL-2): a finding repeating one is rejected, and its edge not made. Absent: none. */
  erasures?: Pick<ErasureLog, 'buried'>;
  /** The user's tier entries: the nightly run reviews them (lib/tiers/tier-review.ts). */
  items: Pick<MemoryItemStore, 'get' | 'move' | 'list'>;
  /** The stage's tier policy (lib/tiers/tier-settings.ts) that review applies; unset: the defaults. */
  tierPolicy?: TierPolicy | undefined;
}

export type SleepTimeOutcome = { status: 'completed'; run: SleepTimeRun } | { status: 'already_done'; reason: string };

/**
 * The day's chunks a run reflects on (at most `maxNightlyChunks`, spread over the day) and,
 * in the run, what they hold and what was left out. `units`: the day as the nightly reads it
 * (dayUnits: summaries for the turns they cover, but those of aborted batches, the other turns as said).
 */
function chooseChunks(
  units: Parameters<typeof chunkDay>[0],
  config: SleepTimeConfig,
  run: SleepTimeRun,
): Array<{ index: number; chunk: TurnChunk }> {
  const all = chunkDay(units, config.chunkTokens);
  const schema = modelSchemaOf(NightlyOutputSchema);
  const ceilings = all.map((c) => nightlyCallCeiling(c.text, schema, config.maxTokens));
  const picked = new Set(pickWithinBudget(ceilings, config.maxNightlyChunks, config.nightlyTokenBudget));
  const kept = all.flatMap((chunk, index) => (picked.has(index) ? [{ index, chunk }] : []));
  run.budget = {
    tokens: config.nightlyTokenBudget,
    ceiling: kept.reduce((sum, k) => sum + (ceilings[k.index] ?? 0), 0),
    chunksOverBudget: Math.max(0, Math.min(all.length, config.maxNightlyChunks) - kept.length),
  };
  const reviewed = kept.flatMap((k) => k.chunk.turns);
  run.chunks = kept.length;
  run.messagesReviewed = reviewed.length;
  run.sessionsReviewed = new Set(reviewed.map((t) => t.sessionId)).size;
  if (kept.length < all.length) run.truncated = leftOut(all, picked);
  return kept;
}

/**
 * One model call per kept chunk, all at once: the job then takes about as long as its
 * slowest call, not the sum, and fits the reflector's timeout. Each answer is recorded as
 * it arrives, so a delivery that fails part-way (a throttled call) keeps the others for the
 * next. Answers are used in chunk order, so merging does not depend on which came first.
 */
async function reflectChunks(
  job: Job,
  deps: SleepTimeDeps,
  kept: ReadonlyArray<{ index: number; chunk: TurnChunk }>,
  memories: ReadonlyArray<{ path: string; summary: string }>,
  run: SleepTimeRun,
): Promise<Finding[]> {
  const settled = await Promise.allSettled(
    kept.map(({ index, chunk }) =>
      callCached(
        job,
        `chunk-${index}`,
        deps,
        (maxTokens) => ({
          system: NIGHTLY_SYSTEM_PROMPT,
          prompt: nightlyPrompt(chunk.text, memories),
          toolName: NIGHTLY_TOOL.name,
          toolDescription: NIGHTLY_TOOL.description,
          toolInputSchema: modelSchemaOf(NightlyOutputSchema),
          temperature: deps.config.temperature,
          maxTokens,
        }),
        NightlyOutputSchema,
      ),
    ),
  );
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const found: Finding[] = [];
  for (const [i, result] of settled.entries()) {
    if (result.status !== 'fulfilled') continue;
    const r = result.value;
    addUsage(run, `chunk-${kept[i]?.index}`, r);
    const { parsed } = r;
    if (r.unusable || !parsed.success) {
      run.errors.push(`chunk ${kept[i]?.index}: ${r.unusable}`);
      continue;
    }
    found.push(...parsed.data.findings);
  }
  return found;
}

/**
 * The day as the nightly reads it: the turns a context summary of the window covers
 * are read through that summary, but those of an aborted batch; the rest as said.
 * Logs how many summaries stand for how many turns.
 */
async function readDay(job: Job, from: string, turns: readonly TurnSaved[], deps: SleepTimeDeps, run: SleepTimeRun) {
  // Only batches and summaries over the day's turns change how the day is read: none below its first turn is read.
  const window = { fromIso: from, toIso: job.requestedAt, sinceTurn: Math.min(...job.turnIds) };
  const [batchLogs, summaries] =
    job.turnIds.length === 0
      ? [[], []]
      : await Promise.all([deps.summaries.batchLogs(job.userId, window), deps.summaries.summaries(job.userId, window)]);
  const mined = new Set(batchLogs.filter((b) => b.status === 'completed').flatMap((b) => b.turns_reviewed));
  const abandoned = new Set(
    batchLogs.filter((b) => b.status !== 'completed').flatMap((b) => b.turns_reviewed.filter((t) => !mined.has(t))),
  );
  const units = dayUnits(
    turns,
    summaries.map((s) => ({ id: s.id, text: s.text, sourceTurns: s.sourceTurns ?? [] })),
    abandoned,
  );
  const read = units.filter((u) => u.summary);
  run.summariesReviewed = read.length;
  run.turnsSummarised = read.reduce((n, u) => n + u.turns.length, 0);
  return units;
}

/**
 * Existing memories, for contradiction detection: the Knowledge the reviewed messages' words find,
 * and the search over the user's Knowledge the findings are gated against. Findings an earlier
 * delivery of this run stored are left out, so this delivery gates and stores them (again, the
 * same documents) as the first did, and logs the same run.
 */
async function existingMemories(job: Job, deps: SleepTimeDeps, kept: ReadonlyArray<{ chunk: TurnChunk }>) {
  const knowledgeDocs = await deps.knowledge.loadKnowledge(job.userId);
  const knowledge = new KnowledgeSearch<KnowledgeDoc>(knowledgeDocs.filter((d) => !isFindingOf(d, job.jobId)));
  const reviewed = kept.flatMap((k) => k.chunk.turns);
  const memories = knowledge
    .search(topKeywords(reviewed.map((t) => t.query).join(' '), 10).join(' '), NIGHTLY_MEMORIES)
    .map((h) => ({ path: h.doc.id, summary: h.doc.summary }));
  return { knowledge, memories };
}

/** Req R-SLP-1 to R-SLP-8 for one user. */
export async function runNightly(job: Job, deps: SleepTimeDeps): Promise<SleepTimeOutcome> {
  const from = new Date(Date.parse(job.requestedAt) - deps.config.nightlyLookbackHours * 3_600_000).toISOString();
  const run = emptyRun(job, 'nightly', from);
  if (await deps.runs.exists(run)) return { status: 'already_done', reason: `run ${job.jobId} is logged` };
  const started = deps.clock.now();
  const { turns, missing } = await deps.turns.getTurns(job.userId, job.turnIds);
  for (const m of missing) run.errors.push(`turn ${m.turnId}: ${m.reason}`);
  const kept = chooseChunks(await readDay(job, from, turns, deps, run), deps.config, run);
  if (run.truncated)
    deps.log.warn('nightly run over its chunk cap or token budget: chunks left out', {
      userId: job.userId,
      runId: job.jobId,
      ...run.truncated,
      budget: run.budget,
    });

  const { knowledge, memories } = await existingMemories(job, deps, kept);

  const merged = mergeFindings(await reflectChunks(job, deps, kept, memories, run));
  stopIfCollecting(job, deps);
  for (const f of merged) run.findingsByCategory[f.category] = (run.findingsByCategory[f.category] ?? 0) + 1;
  const buried = await buriedFindings(job, deps, merged);
  const { seen, stored } = gateFindings(job, merged, knowledge, run, buried);
  // The graph's and the facts' hygiene (req R-GRAPH) at the run's scheduled time, so a retried run does the same.
  run.graph = {
    edges: await relateFindings(job, deps, merged, buried),
    ...(await maintainGraph(job.userId, new Date(job.requestedAt), deps.graph)),
  };
  // Counts what the run saw again (not what changed), so a redelivered run logs the same.
  // The findings join Knowledge in the same change of the index as the facts' sweep: one snapshot per run.
  run.facts = {
    verified: seen.size,
    ...(await maintainFacts(job.userId, new Date(job.requestedAt), deps, seen, stored)),
  };
  // The tier entries' review (req R-TIER-6, R-TIER-7's promotion, decay and garbage collection), each move in the audit trail.
  const tiers = await reviewTiers(deps.items, job.userId, new Date(job.requestedAt), deps.tierPolicy);
  if (Object.values(tiers).some((n) => n > 0))
    deps.log.info('tier entries reviewed', { userId: job.userId, runId: job.jobId, ...tiers });

  run.durationMs = deps.clock.now().getTime() - started.getTime();
  await recordCost(job, run, deps);
  await deps.runs.put(run);
  deps.log.info('nightly reflection', {
    userId: job.userId,
    runId: run.runId,
    messages: run.messagesReviewed,
    chunks: run.chunks,
    stored: run.memoriesStored,
    stopReasons: run.stopReasons,
  });
  return { status: 'completed', run };
}

/**
 * Req R-SLP-13 for the weekly run: the week's summaries its token budget allows, newest first
 * (`pickWeekWithinBudget`); the budget and the call's ceiling go in the run, and what was left
 * out in `weeklyLeftOut`.
 */
function weekWithinBudget(whole: readonly WeekSummary[], config: SleepTimeConfig, run: SleepTimeRun): WeekSummary[] {
  const schema = modelSchemaOf(WeeklyOutputSchema);
  const ceilingOf = (prompt: string) => weeklyCallCeiling(prompt, schema, config.maxTokens);
  const { kept, leftOut } = pickWeekWithinBudget(whole, config.weeklyTokenBudget, ceilingOf);
  run.budget = {
    tokens: config.weeklyTokenBudget,
    ceiling: kept.length > 0 ? ceilingOf(weeklyPrompt(kept)) : 0,
    chunksOverBudget: 0,
  };
  if (leftOut.length > 0) {
    const bySource: NonNullable<SleepTimeRun['weeklyLeftOut']>['bySource'] = {};
    for (const s of leftOut) bySource[s.source] = (bySource[s.source] ?? 0) + 1;
    run.weeklyLeftOut = { summaries: leftOut.length, bySource, newestAt: leftOut[0]?.at ?? '' };
  }
  return kept;
}

/**
 * What the weekly run reads of the week from `from`: the completed batches, the findings its
 * nightly runs stored and the context summaries, and how many sessions the summaries cover.
 */
async function readWeek(
  job: Job,
  from: string,
  deps: SleepTimeDeps,
): Promise<{ whole: WeekSummary[]; sessions: number }> {
  const to = job.requestedAt;
  const [batchLogs, nightly, summaries] = await Promise.all([
    deps.summaries.batchLogs(job.userId, { fromIso: from, toIso: to }),
    deps.runs.list(job.userId, 'nightly', from, to),
    deps.summaries.summaries(job.userId, { fromIso: from, toIso: to }),
  ]);
  const whole: WeekSummary[] = [
    ...batchLogs
      .filter((b) => b.status === 'completed')
      .map((b) => ({
        source: 'batch' as const,
        at: b.input_at ?? b.timestamp,
        text: `Staged: ${b.staged_files.map((f) => f.split('/').pop()?.replace(/--.*$/, '')).join(', ') || 'nothing'}; promoted: ${b.promoted_files.join(', ') || 'nothing'}.`,
      })),
    ...nightly.flatMap((r) =>
      r.stored.map((s) => ({ source: 'nightly' as const, at: r.startedAt, text: s.statement })),
    ),
    ...summaries.map((s) => ({ source: 'summary' as const, at: s.createdAt, text: s.text })),
  ];
  return { whole, sessions: new Set(summaries.map((s) => s.id)).size };
}

/** The weekly run's one model call over `week`; its answer, or why it is unusable, goes in the run. */
async function reflectWeek(
  job: Job,
  deps: SleepTimeDeps,
  week: readonly WeekSummary[],
  run: SleepTimeRun,
): Promise<void> {
  const r = await callCached(
    job,
    'week',
    deps,
    (maxTokens) => ({
      system: WEEKLY_SYSTEM_PROMPT,
      prompt: weeklyPrompt(week),
      toolName: WEEKLY_TOOL.name,
      toolDescription: WEEKLY_TOOL.description,
      toolInputSchema: modelSchemaOf(WeeklyOutputSchema),
      temperature: deps.config.temperature,
      maxTokens,
    }),
    WeeklyOutputSchema,
  );
  addUsage(run, 'week', r);
  const { parsed } = r;
  if (!r.unusable && parsed.success) {
    run.weekly = parsed.data;
    run.findingsByCategory = {
      topic_drift: parsed.data.topic_drift.length,
      weekly_pattern: parsed.data.weekly_patterns.length,
      unresolved: parsed.data.unresolved_arcs.length,
    };
  } else run.errors.push(r.unusable ?? 'unusable output');
}

/** Req R-SLP-9 for one user: over the week's summaries, never raw messages. */
export async function runWeekly(job: Job, deps: SleepTimeDeps): Promise<SleepTimeOutcome> {
  const from = new Date(Date.parse(job.requestedAt) - deps.config.weeklyLookbackDays * 86_400_000).toISOString();
  const run = emptyRun(job, 'weekly', from);
  if (await deps.runs.exists(run)) return { status: 'already_done', reason: `run ${job.jobId} is logged` };
  const started = deps.clock.now();

  const { whole, sessions } = await readWeek(job, from, deps);
  const week = weekWithinBudget(whole, deps.config, run);
  run.summariesReviewed = week.length;
  run.sessionsReviewed = sessions;
  const days = conversationDays(whole);
  if (week.length > 0 && days < deps.config.weeklyMinDays) {
    run.skipped = `the week's conversation fell on ${days} day${days === 1 ? '' : 's'} (weeklyMinDays ${deps.config.weeklyMinDays}): its nightly run has reflected on it`;
    if (run.budget) run.budget.ceiling = 0;
  } else if (week.length > 0) await reflectWeek(job, deps, week, run);
  stopIfCollecting(job, deps);
  run.durationMs = deps.clock.now().getTime() - started.getTime();
  await recordCost(job, run, deps);
  await deps.runs.put(run);
  if (run.weeklyLeftOut)
    deps.log.warn('weekly run over its token budget: the oldest summaries left out', {
      userId: job.userId,
      runId: job.jobId,
      ...run.weeklyLeftOut,
      budget: run.budget,
    });
  deps.log.info('weekly reflection', {
    userId: job.userId,
    runId: run.runId,
    summaries: run.summariesReviewed,
    stopReasons: run.stopReasons,
    ...(run.skipped ? { skipped: run.skipped } : {}),
  });
  return { status: 'completed', run };
}

/** Req R-SLP-10: the user's self-assessment over the nightly runs of the last `days` days. */
/** A sleep-time job's run: the nightly run for a nightly job, else the weekly run. */
export function runSleepTime(job: Job, deps: SleepTimeDeps): Promise<SleepTimeOutcome> {
  return (job.kind === 'nightly' ? runNightly : runWeekly)(job, deps);
}

export async function selfAssessment(
  userId: string,
  runs: SleepTimeLogStore,
  now: Date,
  days = 30,
): Promise<SelfAssessment> {
  const history = await runs.list(
    userId,
    'nightly',
    new Date(now.getTime() - days * 86_400_000).toISOString(),
    now.toISOString(),
  );
  return computeSelfAssessment(history);
}
