/**
 * The sleep-time reflections (the reflector's nightly and weekly jobs), req R-SLP:
 * nightly over the day's messages in token-budget chunks, merged and gated; weekly over the
 * week's summaries. Every run is recorded in the sleep-time run log with tokens and cost.
 * Idempotent: a run id is recorded once; model outputs are kept per chunk and reused.
 */
import type * as z from 'zod';
import { answerValueOf } from '../model/model-answer.js';
import { modelSchemaOf } from '../model/model-schema.js';
import { FINDING_EDGE_CONFIDENCE } from '../graph/relation-graph.js';
import { maintainFacts } from '../knowledge/maintain-facts.js';
import { callWithBudgetRetry, costOf, unusableStop } from '../model/model-call.js';
import { maintainGraph, recordRelations } from '../graph/graph-use-cases.js';
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
  findingDocument,
  gateFinding,
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
import { computeSelfAssessment, type SelfAssessment } from './self-assessment.js';
import { conversationDays, pickWeekWithinBudget, WEEKLY_SYSTEM_PROMPT, WEEKLY_TOOL, type WeekSummary, weeklyCallCeiling, WeeklyOutputSchema, weeklyPrompt } from './weekly.js';
import { buriedKeyOf, type Tombstone, tombstoneKeys } from '../forget/tombstone.js';
import { topKeywords } from '../kernel/text.js';
import { costEntry, runUsage } from '../costs/job-cost.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { CostLedger } from '../costs/cost-ledger.port.js';
import type { ErasureLog } from '../forget/forget.port.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { KnowledgeEntry, KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { SleepTimeLogStore } from './sleep-time-log.port.js';
import type { TurnStore } from '../turns/turn.port.js';
import { type ModelResponse, type LanguageModel, UnusableModelOutputError } from '../model/language-model.port.js';
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

/** The run's model cost into the ledger, when it asked the model. */
async function recordCost(job: Job, run: SleepTimeRun, deps: Pick<SleepTimeDeps, 'costs'>): Promise<void> {
  const usage = runUsage(run);
  if (usage) await deps.costs.record(costEntry(job, usage, job.requestedAt));
}

export type SleepTimeOutcome = { status: 'completed'; run: SleepTimeRun } | { status: 'already_done'; reason: string };

/** Findings this similar to a Knowledge document are already known (as the batch dedup gate). */
const KNOWN_SIMILARITY = 0.8;

/**
 * A model call whose answer is recorded before use, so a redelivered job reuses it; the
 * answer is parsed once with `schema`. A cut answer is asked again once with a larger budget.
 * An unusable fresh answer (cut even so, a malformed tool call, or not matching `schema`) is
 * thrown away (not recorded) when the job will be delivered again; `unusable` says why.
 */
async function callCached<T>(
  job: Job,
  part: string,
  deps: SleepTimeDeps,
  call: (maxTokens: number) => Promise<ModelResponse>,
  schema: z.ZodType<T>,
): Promise<ModelResponse & { reused: boolean; parsed: z.ZodSafeParseResult<T>; unusable: string | null }> {
  const judge = (r: ModelResponse) => {
    const parsed = schema.safeParse(answerValueOf(r.output, schema));
    const issue = parsed.success ? null : `unusable output (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`;
    return { parsed, unusable: unusableStop(r.usage) ?? issue };
  };
  const key = `${job.jobId}-${part}`;
  const cached = await deps.knowledge.getModelOutput(job.userId, key);
  if (cached) return { ...cached, reused: true, ...judge(cached) };
  const fresh = await callWithBudgetRetry(call, deps.config.maxTokens, deps.model.maxOutputTokens, deps.log, { userId: job.userId, runId: job.jobId, part });
  const judged = judge(fresh);
  if (deps.retryUnusableOutput && judged.unusable) {
    throw new UnusableModelOutputError(`${job.kind} ${job.jobId} ${part}: ${judged.unusable}; retrying on the next delivery`);
  }
  await deps.knowledge.putModelOutput(job.userId, key, fresh);
  return { ...fresh, reused: false, ...judged };
}

function emptyRun(job: Job, kind: SleepTimeRun['kind'], from: string): SleepTimeRun {
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
function addUsage(run: SleepTimeRun, part: string, r: ModelResponse): void {
  if (r.usage.stopReason) run.stopReasons = { ...run.stopReasons, [part]: r.usage.stopReason };
  run.tokens.input += r.usage.inputTokens;
  run.tokens.output += r.usage.outputTokens;
  const retry = r.usage.budgetRetry;
  if (retry) {
    const before = run.budgetRetries ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
    run.budgetRetries = { calls: before.calls + 1, inputTokens: before.inputTokens + retry.inputTokens, outputTokens: before.outputTokens + retry.outputTokens };
  }
  run.model = r.usage.modelId;
  const cost = costOf(r.usage);
  run.estimatedCostUsd = cost === null || run.estimatedCostUsd === null ? null : Math.round((run.estimatedCostUsd + cost) * 1e6) / 1e6;
}

/**
 * The day's chunks a run reflects on (at most `maxNightlyChunks`, spread over the day) and,
 * in the run, what they hold and what was left out. `units`: the day as the nightly reads it
 * (dayUnits: summaries for the turns they cover, but those of aborted batches, the other turns as said).
 */
function chooseChunks(units: Parameters<typeof chunkDay>[0], config: SleepTimeConfig, run: SleepTimeRun): Array<{ index: number; chunk: TurnChunk }> {
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
      callCached(job, `chunk-${index}`, deps, (maxTokens) =>
        deps.model.reflect({
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
 * Gate the merged findings; returns those that pass and are new, as Knowledge to store, and
 * the Knowledge facts found already known, which the run verifies as of its schedule time
 * (both in the run's one change of the index: maintainFacts).
 */
function gateFindings(job: Job, merged: readonly Finding[], knowledge: KnowledgeSearch<KnowledgeDoc>, run: SleepTimeRun, buried: ReadonlyMap<string, Tombstone>) {
  const seen = new Map<string, { at: string; by: string }>();
  const stored: KnowledgeEntry[] = [];
  for (const f of merged) {
    const gate = gateFinding(f);
    if (gate) {
      run.findingsRejected.push({ category: f.category, statement: f.statement, reason: gate });
      continue;
    }
    if (isBuried(f, job, buried)) {
      run.findingsRejected.push({ category: f.category, statement: f.statement, reason: 'deleted: repeats a finding a person deleted (req R-DEL-2)' });
      continue;
    }
    const known = knowledge.similar(f.statement)[0];
    if (known && known.similarity > KNOWN_SIMILARITY) {
      run.findingsRejected.push({ category: f.category, statement: f.statement, reason: `already known: ${known.doc.id}` });
      seen.set(known.doc.id, { at: job.requestedAt, by: `nightly run ${job.jobId}` });
      continue;
    }
    const doc = findingDocument(f, job.jobId, job.requestedAt);
    stored.push({ path: doc.path, markdown: doc.markdown, doc: doc.doc });
    knowledge.add(doc.doc);
    run.stored.push({ path: `Knowledge/${doc.path}`, statement: f.statement });
  }
  run.memoriesStored = run.stored.length;
  return { seen, stored };
}

/** Whether the finding, as the document it would be, repeats a deleted one (its tombstone: lib/forget/tombstone.ts). */
const isBuried = (f: Finding, job: Job, buried: ReadonlyMap<string, Tombstone>) => buried.size > 0 && buriedKeyOf(findingDocument(f, job.jobId, job.requestedAt).doc, buried) !== null;

/** The tombstones among the findings' keys (one read for the run). */
async function buriedFindings(job: Job, deps: SleepTimeDeps, merged: readonly Finding[]): Promise<ReadonlyMap<string, Tombstone>> {
  if (!deps.erasures || merged.length === 0) return new Map();
  return deps.erasures.buried(job.userId, merged.flatMap((f) => tombstoneKeys(findingDocument(f, job.jobId, job.requestedAt).doc)));
}

/** Req R-GRAPH-1's (subject, relationship, object) triples that passed the gates join the relation graph; returns how many edges they name (added or reinforced by this run, on whichever delivery). */
async function relateFindings(job: Job, deps: SleepTimeDeps, merged: readonly Finding[], buried: ReadonlyMap<string, Tombstone>): Promise<number> {
  const triples = merged.filter((f) => f.category === 'relationship' && f.subject && f.relationship && f.object && !gateFinding(f) && !isBuried(f, job, buried));
  const edges = await recordRelations(
    job.userId,
    triples.map((f) => ({
      from: f.subject ?? '',
      relation: f.relationship ?? '',
      to: f.object ?? '',
      confidence: FINDING_EDGE_CONFIDENCE[f.confidence],
      provenance: { source: 'nightly' as const, id: job.jobId, turns: f.evidence_turns, at: job.requestedAt },
    })),
    job.requestedAt,
    deps.graph,
  );
  return edges.length;
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
    job.turnIds.length === 0 ? [[], []] : await Promise.all([deps.summaries.batchLogs(job.userId, window), deps.summaries.summaries(job.userId, window)]);
  const mined = new Set(batchLogs.filter((b) => b.status === 'completed').flatMap((b) => b.turns_reviewed));
  const abandoned = new Set(batchLogs.filter((b) => b.status !== 'completed').flatMap((b) => b.turns_reviewed.filter((t) => !mined.has(t))));
  const units = dayUnits(turns, summaries.map((s) => ({ id: s.id, text: s.text, sourceTurns: s.sourceTurns ?? [] })), abandoned);
  const read = units.filter((u) => u.summary);
  run.summariesReviewed = read.length;
  run.turnsSummarised = read.reduce((n, u) => n + u.turns.length, 0);
  return units;
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
  if (run.truncated) deps.log.warn('nightly run over its chunk cap or token budget: chunks left out', { userId: job.userId, runId: job.jobId, ...run.truncated, budget: run.budget });

  // Existing memories, for contradiction detection: the Knowledge the reviewed messages' words find.
  // Findings an earlier delivery of this run stored are left out, so this delivery gates and
  // stores them (again, the same documents) as the first did, and logs the same run.
  const knowledgeDocs = await deps.knowledge.loadKnowledge(job.userId);
  const knowledge = new KnowledgeSearch<KnowledgeDoc>(knowledgeDocs.filter((d) => !isFindingOf(d, job.jobId)));
  const reviewed = kept.flatMap((k) => k.chunk.turns);
  const memories = knowledge
    .search(topKeywords(reviewed.map((t) => t.query).join(' '), 10).join(' '), NIGHTLY_MEMORIES)
    .map((h) => ({ path: h.doc.id, summary: h.doc.summary }));

  const merged = mergeFindings(await reflectChunks(job, deps, kept, memories, run));
  for (const f of merged) run.findingsByCategory[f.category] = (run.findingsByCategory[f.category] ?? 0) + 1;
  const buried = await buriedFindings(job, deps, merged);
  const { seen, stored } = gateFindings(job, merged, knowledge, run, buried);
  // The graph's and the facts' hygiene (req R-GRAPH) at the run's scheduled time, so a retried run does the same.
  run.graph = { edges: await relateFindings(job, deps, merged, buried), ...(await maintainGraph(job.userId, new Date(job.requestedAt), deps.graph)) };
  // Counts what the run saw again (not what changed), so a redelivered run logs the same.
  // The findings join Knowledge in the same change of the index as the facts' sweep: one snapshot per run.
  run.facts = { verified: seen.size, ...(await maintainFacts(job.userId, new Date(job.requestedAt), deps, seen, stored)) };
  // The tier entries' review (req R-TIER-6, R-TIER-7's promotion, decay and garbage collection), each move in the audit trail.
  const tiers = await reviewTiers(deps.items, job.userId, new Date(job.requestedAt), deps.tierPolicy);
  if (Object.values(tiers).some((n) => n > 0)) deps.log.info('tier entries reviewed', { userId: job.userId, runId: job.jobId, ...tiers });

  run.durationMs = deps.clock.now().getTime() - started.getTime();
  await recordCost(job, run, deps);
  await deps.runs.put(run);
  deps.log.info('nightly reflection', { userId: job.userId, runId: run.runId, messages: run.messagesReviewed, chunks: run.chunks, stored: run.memoriesStored, stopReasons: run.stopReasons });
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
  run.budget = { tokens: config.weeklyTokenBudget, ceiling: kept.length > 0 ? ceilingOf(weeklyPrompt(kept)) : 0, chunksOverBudget: 0 };
  if (leftOut.length > 0) {
    const bySource: NonNullable<SleepTimeRun['weeklyLeftOut']>['bySource'] = {};
    for (const s of leftOut) bySource[s.source] = (bySource[s.source] ?? 0) + 1;
    run.weeklyLeftOut = { summaries: leftOut.length, bySource, newestAt: leftOut[0]?.at ?? '' };
  }
  return kept;
}

/** Req R-SLP-9 for one user: over the week's summaries, never raw messages. */
export async function runWeekly(job: Job, deps: SleepTimeDeps): Promise<SleepTimeOutcome> {
  const from = new Date(Date.parse(job.requestedAt) - deps.config.weeklyLookbackDays * 86_400_000).toISOString();
  const to = job.requestedAt;
  const run = emptyRun(job, 'weekly', from);
  if (await deps.runs.exists(run)) return { status: 'already_done', reason: `run ${job.jobId} is logged` };
  const started = deps.clock.now();

  const [batchLogs, nightly, summaries] = await Promise.all([
    deps.summaries.batchLogs(job.userId, { fromIso: from, toIso: to }),
    deps.runs.list(job.userId, 'nightly', from, to),
    deps.summaries.summaries(job.userId, { fromIso: from, toIso: to }),
  ]);
  const whole: WeekSummary[] = [
    ...batchLogs
      .filter((b) => b.status === 'completed')
      .map((b) => ({ source: 'batch' as const, at: b.input_at ?? b.timestamp, text: `Staged: ${b.staged_files.map((f) => f.split('/').pop()?.replace(/--.*$/, '')).join(', ') || 'nothing'}; promoted: ${b.promoted_files.join(', ') || 'nothing'}.` })),
    ...nightly.flatMap((r) => r.stored.map((s) => ({ source: 'nightly' as const, at: r.startedAt, text: s.statement }))),
    ...summaries.map((s) => ({ source: 'summary' as const, at: s.createdAt, text: s.text })),
  ];
  const week = weekWithinBudget(whole, deps.config, run);
  run.summariesReviewed = week.length;
  run.sessionsReviewed = new Set(summaries.map((s) => s.id)).size;
  const days = conversationDays(whole);
  if (week.length > 0 && days < deps.config.weeklyMinDays) {
    run.skipped = `the week's conversation fell on ${days} day${days === 1 ? '' : 's'} (weeklyMinDays ${deps.config.weeklyMinDays}): its nightly run has reflected on it`;
    if (run.budget) run.budget.ceiling = 0;
  } else if (week.length > 0) {
    const r = await callCached(job, 'week', deps, (maxTokens) =>
      deps.model.reflect({
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
  run.durationMs = deps.clock.now().getTime() - started.getTime();
  await recordCost(job, run, deps);
  await deps.runs.put(run);
  if (run.weeklyLeftOut) deps.log.warn('weekly run over its token budget: the oldest summaries left out', { userId: job.userId, runId: job.jobId, ...run.weeklyLeftOut, budget: run.budget });
  deps.log.info('weekly reflection', { userId: job.userId, runId: run.runId, summaries: run.summariesReviewed, stopReasons: run.stopReasons, ...(run.skipped ? { skipped: run.skipped } : {}) });
  return { status: 'completed', run };
}

/** Req R-SLP-10: the user's self-assessment over the nightly runs of the last `days` days. */
export async function selfAssessment(userId: string, runs: SleepTimeLogStore, now: Date, days = 30): Promise<SelfAssessment> {
  const history = await runs.list(userId, 'nightly', new Date(now.getTime() - days * 86_400_000).toISOString(), now.toISOString());
  return computeSelfAssessment(history);
}
