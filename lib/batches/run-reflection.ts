/**
 * Run one batch job (the reflector's batch reflection), req R-ASM to R-LOG:
 * assemble the batch → one model call → parse and cap → quality gates → stage →
 * batch log → reset the user's counters.
 *
 * Redelivery is safe: the model's output is recorded before anything is staged and reused
 * on a second delivery; staged keys, the log and the counter reset are deterministic and
 * conditional, so a job run twice leaves the state of a job run once.
 */
import type { Job } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { assembleBatch, buildReflectorPrompt, EARLIER_REFLECTIONS_SHOWN, type EarlierReflection, occasionOf, REFLECTOR_SYSTEM_PROMPT } from './batch-assembly.js';
import type { BatchLog } from './batch-log.js';
import { applyQualityGates } from './quality-gates.js';
import { userPrefix } from '../kernel/memory-paths.js';
import { parseReflectionOutput, ReflectionOutputError, reflectionToolInputSchema } from './reflection-output.js';
import { KnowledgeSearch } from '../knowledge/knowledge-search.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import { findRecurrences, PROMOTIONS_TO_KNOWLEDGE } from '../knowledge/promotion.js';
import { promoteStaged } from '../knowledge/promote-staged.js';
import { costEntry, usageOf } from '../costs/job-cost.js';
import { completeBatch, parseSignalState } from '../signals/signal-accumulator.js';
import { domainsRead, type StagedDocument, stagedDocuments } from '../knowledge/staging.js';
import { buriedKeyOf, tombstoneKeys } from '../forget/tombstone.js';
import { reliabilityOf } from '../sources/source-reliability.js';
import { episodeDocument, type EventEpisode } from '../turns/episodes.js';
import { eventMaterial, NO_TURN_WAITING, NOTHING_TO_REFLECT_ON } from './event-reflection.js';
import { type DiaryInput, decideDiaryEntry, diaryPath, diaryRecord, diaryVisible } from '../diary/diary.js';
import { verifySeenFacts } from '../knowledge/maintain-facts.js';
import { callWithBudgetRetry, costOf, unusableStop } from '../model/model-call.js';
import { recordRelations } from '../graph/graph-use-cases.js';
import { topKeywords } from '../kernel/text.js';
import { BatchNotRecordedError, type BatchLogStore } from './batch-log.port.js';
import type { CostLedger } from '../costs/cost-ledger.port.js';
import type { DiaryStore } from '../diary/diary.port.js';
import type { ErasureLog } from '../forget/forget.port.js';
import type { SourceReliabilityStore } from '../sources/source-reliability.port.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { TurnStore } from '../turns/turn.port.js';
import type { SignalStateStore } from '../signals/signal-state.port.js';
import { type ModelResponse, type LanguageModel, UnusableModelOutputError } from '../model/language-model.port.js';
import type { Clock, Log } from '../kernel/runtime.port.js';

export interface ReflectionDeps {
  turns: TurnStore;
  signalState: SignalStateStore;
  knowledge: KnowledgeStore;
  batchLogs: BatchLogStore;
  /** Per-domain source outcomes (read only here). */
  sources: Pick<SourceReliabilityStore, 'stats'>;
  /** The user's relation graph: connections become edges. */
  graph: GraphStore;
  /** What the batch's model call cost, recorded before the batch log (its commit record). */
  costs: CostLedger;
  /** The diary's entries: every batch's decision; an event's batch reads the latest reflections first. */
  diary: DiaryStore;
  model: LanguageModel;
  clock: Clock;
  log: Log;
  settings: { temperature: number; maxTokens: number; budgetTokens: number };
  /**
   * The job will be delivered again if this attempt fails: an unusable answer throws
   * UnusableModelOutputError (and is not kept) instead of aborting the batch. @default false
   */
  retryUnusableOutput?: boolean;
  /**
   * Tombstones of deleted facts (req R-DEL-2): an item repeating one is rejected by the
   * `deleted` gate, not staged. Absent: no fact was ever deleted (tests of other concerns).
   */
  erasures?: Pick<ErasureLog, 'buried'>;
  /** Waits between looks for a batch the signal state does not record yet. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

export type ReflectionOutcome =
  | { status: 'completed' | 'aborted'; log: BatchLog; logKey: string }
  | { status: 'already_done' | 'superseded'; reason: string };

/** Kinds reflected like a batch: the job's turns through the req R-ASM to R-LOG pipeline. */
const BATCH_LIKE = new Set<Job['kind']>(['batch', 'event']);

/** How many of the batch's top keywords search Knowledge, and how many hits the model sees. */
const EXISTING_KEYWORDS = 10;
const EXISTING_SHOWN = 10;

const round2 = (n: number) => Math.round(n * 100) / 100;

export const REFLECTION_TOOL = {
  name: 'record_reflection',
  description: 'Record what is new, corrected, connected or unresolved in the reviewed turns.',
};

export async function runReflection(job: Job, deps: ReflectionDeps): Promise<ReflectionOutcome> {
  const started = deps.clock.now();
  if (!BATCH_LIKE.has(job.kind)) throw new TypeError(`runReflection runs batch and event jobs, not "${job.kind}"`);
  if (await deps.batchLogs.exists(job.userId, job.jobId)) {
    await finishCounters(job, deps);
    return { status: 'already_done', reason: `batch ${job.jobId} is logged already` };
  }
  // An event's job over no turns is no batch of the signal state: nothing to wait for (its batch log is its commit record).
  if (job.turnIds.length > 0) {
    const recorded = await waitUntilRecorded(job, deps);
    if (recorded.superseded) return { status: 'superseded', reason: `turns up to ${recorded.lastBatchTurn} are reflected already` };
  }

  const input = await readBatch(job, started, deps);
  const { asked, model } = await consultModel(job, input, deps);
  const duration = () => deps.clock.now().getTime() - started.getTime();
  let parsed: Parsed | null = null;
  if (asked) {
    if ('error' in asked.outcome) return finish(job, abortedLog(job, input, asked, asked.outcome.error, model, duration(), deps), deps);
    parsed = asked.outcome.parsed;
    if (parsed.assessmentInvalid) deps.log.warn('model assessment malformed; dropped', { userId: job.userId, batchId: job.jobId });
  }
  const gated = await gateOutput(job, input, parsed, deps);
  const staged = await stageAndReinforce(job, input, gated, deps);
  const episodes = await linkEpisodes(job, input, staged, deps);
  const edges = await connectionEdges(job, input.batchAt, gated, deps);
  const diary = await writeDiary(job, diaryInput(job, input, parsed, gated, staged), input.batchAt, deps);
  const log: BatchLog = {
    ...input.base,
    status: 'completed',
    quality_gate_results: {
      items_proposed: Object.values(gated.output).reduce((n, items) => n + (items as unknown[]).length, 0),
      items_passed: gated.docs.length - staged.suppressed.length - staged.buried,
      truncated_by_caps: parsed?.truncated ?? emptyGates().truncated_by_caps,
      rejections: gated.rejections,
    },
    staged_files: staged.stagedFiles,
    promoted_files: staged.promotedFiles,
    ...(episodes.length > 0 ? { episodes } : {}),
    ...(gated.verified.length > 0 ? { verified: gated.verified } : {}),
    ...(edges.length > 0 ? { edges: edges.map((e) => e.id) } : {}),
    diary,
    reinforced: staged.reinforced,
    model,
    assessment: parsed?.assessment ?? null,
    error: null,
    duration_ms: duration(),
  };
  return finish(job, log, deps);
}

type Parsed = ReturnType<typeof parseReflectionOutput>;
type LogBase = Omit<BatchLog, 'status' | 'quality_gate_results' | 'staged_files' | 'promoted_files' | 'reinforced' | 'model' | 'error' | 'duration_ms'>;

const emptyGates = (): BatchLog['quality_gate_results'] => ({ items_proposed: 0, items_passed: 0, truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 }, rejections: [] });

/** What a batch reads before the model is asked: its turns, the user's Knowledge, and the log's common fields. */
interface BatchInput {
  turns: TurnSaved[];
  /** Input time of the batch (see readBatch). */
  batchAt: string;
  batch: ReturnType<typeof assembleBatch>;
  knowledgeDocs: KnowledgeDoc[];
  knowledge: KnowledgeSearch<KnowledgeDoc>;
  /** The Knowledge documents the batch's top keywords find, shown to the model. */
  existing: Array<{ path: string; summary: string }>;
  /** The agent.event episodes whose documents this batch writes. */
  eventEpisodes: EventEpisode[];
  /** An event's batch with no turn: the event's own words it reviews instead ('' for any other batch, or nothing to review). */
  material: string;
  base: LogBase;
}

async function readBatch(job: Job, started: Date, deps: ReflectionDeps): Promise<BatchInput> {
  const { turns, missing } = job.turnIds.length > 0 ? await deps.turns.getTurns(job.userId, job.turnIds) : { turns: [], missing: [] };
  const eventEpisodes = job.episodeIds?.length ? await deps.turns.eventEpisodes(job.userId, job.episodeIds) : [];
  const occasion = occasionOf(job);
  const material = occasion && job.turnIds.length === 0 ? eventMaterial(occasion, eventEpisodes) : '';
  for (const m of missing) deps.log.warn('turn unreadable; continuing without it', { userId: job.userId, ...m });
  // Input time of the batch (its last turn's; the job's when none was read), for when its items
  // were staged (the expiry sweep's cutoff and day index), what it verifies, the edges it adds,
  // its cost entry's day and the weekly run's window: replays and redeliveries agree.
  const batchAt = new Date(Math.max(...turns.map((t) => Date.parse(t.timestamp)), 0) || Date.parse(job.requestedAt)).toISOString();
  const batch = assembleBatch(turns, deps.settings.budgetTokens);
  // Req R-ASM: search the user's Knowledge with the batch's top keywords, so the model knows what exists.
  const knowledgeDocs = await deps.knowledge.loadKnowledge(job.userId);
  const knowledge = new KnowledgeSearch(knowledgeDocs);
  const existing = knowledge
    .search(topKeywords(`${batch.document}\n${material}`, EXISTING_KEYWORDS).join(' '), EXISTING_SHOWN)
    .map((h) => ({ path: h.doc.id, summary: h.doc.summary }));
  const base: LogBase = {
    batch_id: job.jobId,
    user_id: job.userId,
    timestamp: started.toISOString(),
    input_at: batchAt,
    turns_reviewed: batch.included,
    turns_missing: missing.map((m) => m.turnId),
    turns_omitted_for_budget: batch.omitted,
    trigger: job.trigger,
    kind: job.kind,
    urgency_score: job.urgency,
    ...(occasion && job.turnIds.length === 0 ? { event_only: eventOnlyLog(job, eventEpisodes, material, deps) } : {}),
  };
  return { turns, batchAt, batch, knowledgeDocs, knowledge, existing, eventEpisodes, material, base };
}

/** Req R-EVT: an event's batch with no turn says what it reflected on instead, or why nothing (and logs that). */
function eventOnlyLog(job: Job, episodes: readonly EventEpisode[], material: string, deps: ReflectionDeps): NonNullable<BatchLog['event_only']> {
  const kinds = [...(job.eventDetail?.trim() ? ['detail' as const] : []), ...(episodes.length > 0 ? ['episodes' as const] : [])];
  if (material) return { reason: NO_TURN_WAITING, material: kinds };
  deps.log.info('agent.event not reflected on', { userId: job.userId, batchId: job.jobId, trigger: job.trigger, reason: NOTHING_TO_REFLECT_ON });
  return { reason: NO_TURN_WAITING, material: kinds, not_reflected: NOTHING_TO_REFLECT_ON };
}

type Asked = Awaited<ReturnType<typeof askModel>>;

/** The model's answer for a batch with turns (with the earlier reflections when an occasion fired it), and its usage for the log. */
async function consultModel(job: Job, input: BatchInput, deps: ReflectionDeps): Promise<{ asked: Asked | null; model: BatchLog['model'] }> {
  const { batch, existing, material } = input;
  const occasion = occasionOf(job);
  const something = batch.included.length > 0 || material !== '';
  const earlier = occasion && something ? await earlierReflections(job, deps) : [];
  const asked = something ? await askModel(job, buildReflectorPrompt(batch, existing, occasion, earlier, material), deps, occasion !== null) : null;
  const model = asked ? { ...asked.response.usage, reused: asked.reused, estimatedCostUsd: asked.reused ? 0 : costOf(asked.response.usage) } : null;
  return { asked, model };
}

/** The log of a batch whose answer was unusable: nothing staged, the raw answer kept in the log. */
function abortedLog(job: Job, input: BatchInput, asked: Asked, error: ReflectionOutputError, model: BatchLog['model'], durationMs: number, deps: ReflectionDeps): BatchLog {
  // The raw answer may quote the user's turns: it goes to the batch log, not the logs.
  deps.log.error('model output unusable; batch aborted', { userId: job.userId, batchId: job.jobId, error: error.message, stopReason: asked.response.usage.stopReason });
  return {
    ...input.base,
    status: 'aborted',
    quality_gate_results: emptyGates(),
    staged_files: [],
    promoted_files: [],
    reinforced: [],
    model,
    error: { message: error.message, raw: error.raw },
    duration_ms: durationMs,
  };
}

/** The model's output through the quality gates, as staged documents, with the facts it saw again verified. */
interface Gated {
  output: Parsed['output'];
  passed: ReturnType<typeof applyQualityGates>['passed'];
  rejections: ReturnType<typeof applyQualityGates>['rejections'];
  docs: ReturnType<typeof stagedDocuments>;
  verified: string[];
}

async function gateOutput(job: Job, input: BatchInput, parsed: Parsed | null, deps: ReflectionDeps): Promise<Gated> {
  const { turns, knowledge, knowledgeDocs, batchAt } = input;
  const turnMap = new Map<number, TurnSaved>(turns.map((t) => [t.turnId, t]));
  const output = parsed?.output ?? { new_facts: [], corrections: [], connections: [], open_questions: [] };
  const cited = [...new Set(Object.values(output).flatMap((items) => (items as Array<{ source_turns: number[] }>).flatMap((i) => i.source_turns)))];
  const outside = cited.filter((t) => !turnMap.has(t));
  if (outside.length > 0) {
    const extra = await deps.turns.getTurns(job.userId, outside);
    for (const t of extra.turns) turnMap.set(t.turnId, t);
  }
  const { passed, rejections } = applyQualityGates(output, {
    turns: turnMap,
    knowledge,
    knowledgeDocs: new Map(knowledgeDocs.map((d) => [d.id, d])),
  });
  // Req R-SRC: the reliability of the sites the turns read, blended into the documents' confidence.
  const domains = [...new Set([...turnMap.values()].flatMap(domainsRead))];
  const sourceReliability = new Map(domains.length > 0 ? (await deps.sources.stats(domains)).map((s) => [s.domain, reliabilityOf(s).reliability] as const) : []);
  const docs = stagedDocuments(passed, { batchId: job.jobId, stagedAt: stagedAtOf(batchAt, job), turns: turnMap, sourceReliability });
  // Fact hygiene: a new fact the dedup gate found in Knowledge is that fact seen again.
  const seen = new Map(rejections.flatMap((r) => (r.gate === 'dedup' && r.existing ? [[r.existing, { at: batchAt, by: `batch ${job.jobId}` }] as const] : [])));
  // Verified on the index as it is now: the API may have written it since the batch read it.
  await verifySeenFacts(job.userId, seen, deps);
  // The log lists what the batch saw, not what changed: a redelivery (nothing left to change) logs the same.
  return { output, passed, rejections, docs, verified: [...seen.keys()] };
}

type Recurrences = ReturnType<typeof findRecurrences>;

/** What the batch staged, the staged items it reinforced and those it promoted to Knowledge. */
interface Staged {
  toStage: Recurrences['toStage'];
  reinforcements: Recurrences['reinforcements'];
  suppressed: Recurrences['suppressed'];
  /** Items the `deleted` gate rejected. */
  buried: number;
  stagedFiles: string[];
  promotedFiles: string[];
  reinforced: BatchLog['reinforced'];
}

/**
 * Req R-PRO-1: outputs that recur in an earlier batch's staged item promote it; the rest are
 * staged. An output repeating a discarded item is a dedup rejection (added to `gated.rejections`).
 */
async function stageAndReinforce(job: Job, input: BatchInput, gated: Gated, deps: ReflectionDeps): Promise<Staged> {
  const alive = await withoutDeleted(job, gated, deps);
  const { reinforcements, toStage, suppressed } = findRecurrences(await deps.knowledge.listStaged(job.userId), alive, job.jobId);
  for (const s of suppressed) {
    gated.rejections.push({
      category: categoryOf(s.doc.kind),
      item: s.doc.title,
      gate: 'dedup',
      reason: `repeats Knowledge_staging/${s.discarded.path}, which a reviewer discarded (similarity ${round2(s.similarity)})`,
    });
  }
  const stagedFiles = await deps.knowledge.putStaged(job.userId, toStage, job.jobId);
  const promotedFiles: string[] = [];
  const reinforced: BatchLog['reinforced'] = [];
  const taken = new Set(input.knowledgeDocs.map((d) => d.id));
  for (const r of reinforcements) {
    const record = await deps.knowledge.reinforce(job.userId, r.staged.path, job.jobId);
    reinforced.push({ item: r.doc.title, staged_file: `Knowledge_staging/${r.staged.path}`, similarity: round2(r.similarity), promotion_count: record.promotedBy.length });
    if (record.status === 'promoted' || record.promotedBy.length < PROMOTIONS_TO_KNOWLEDGE) continue;
    const { knowledgePath: path } = await promoteStaged(deps, job.userId, record, taken, input.batchAt);
    taken.add(path);
    promotedFiles.push(`Knowledge/${path}`);
  }
  return { toStage, reinforcements, suppressed, buried: gated.docs.length - alive.length, stagedFiles, promotedFiles, reinforced };
}

const categoryOf = (kind: StagedDocument['kind']) => (kind === 'fact' ? 'new_facts' : kind === 'correction' ? 'corrections' : kind === 'connection' ? 'connections' : 'open_questions');

/**
 * Req R-DEL-2: the passed items that repeat a deleted fact (its title, or its text's words:
 * lib/forget/tombstone.ts) are rejected by the `deleted` gate and logged with the batch's other
 * rejections; the rest go on to be staged or to reinforce.
 */
async function withoutDeleted(job: Job, gated: Gated, deps: ReflectionDeps): Promise<StagedDocument[]> {
  if (!deps.erasures || gated.docs.length === 0) return gated.docs;
  const buried = await deps.erasures.buried(job.userId, gated.docs.flatMap((d) => tombstoneKeys(d)));
  if (buried.size === 0) return gated.docs;
  return gated.docs.filter((d) => {
    const key = buriedKeyOf(d, buried);
    if (key) gated.rejections.push({ category: categoryOf(d.kind), item: d.title, gate: 'deleted', reason: `repeats a fact a person deleted (tombstone ${key.slice(0, key.indexOf(':'))})` });
    return key === null;
  });
}

/**
 * Req R-EPI: each reviewed turn's episode gets its document, linked to this batch and
 * to what the batch learned from that turn; so do the agent.event episodes that waited for
 * this batch (linked to what it learned from the event's turn, or from the whole batch when
 * the event named none). Returns their keys under the user's prefix.
 */
async function linkEpisodes(job: Job, input: Pick<BatchInput, 'turns' | 'eventEpisodes'>, staged: Staged, deps: ReflectionDeps): Promise<string[]> {
  const episodes: string[] = [];
  const learnedFrom = (turnId: number | undefined) => [
    ...staged.toStage.filter((d) => turnId === undefined || d.sourceTurns.includes(turnId)).map((d) => `Knowledge_staging/${d.path}`),
    ...staged.reinforcements.filter((r) => turnId === undefined || r.doc.sourceTurns.includes(turnId)).map((r) => `Knowledge_staging/${r.staged.path}`),
  ];
  for (const t of input.turns) {
    if (!t.episode) continue;
    const key = await deps.knowledge.putEpisode(job.userId, t.turnId, episodeDocument({ ...t, episode: t.episode }, job.jobId, learnedFrom(t.turnId)));
    episodes.push(key.slice(userPrefix(job.userId).length));
  }
  for (const e of input.eventEpisodes) {
    const key = await deps.knowledge.putEventEpisode(job.userId, e.episodeId, episodeDocument(e, job.jobId, learnedFrom(e.turnId)));
    episodes.push(key.slice(userPrefix(job.userId).length));
  }
  return episodes;
}

/** Req R-LLM-2's connections join the relation graph, at the time of the batch's last turn. */
async function connectionEdges(job: Job, batchAt: string, gated: Gated, deps: ReflectionDeps) {
  return recordRelations(
    job.userId,
    gated.passed.connections.map((c) => ({
      from: c.file_a,
      to: c.file_b,
      relation: 'related_to',
      note: c.relationship,
      confidence: gated.docs.find((d) => d.kind === 'connection' && d.meta.file_a === c.file_a && d.meta.file_b === c.file_b)?.confidence ?? 0.6,
      provenance: { source: 'batch' as const, id: job.jobId, turns: c.source_turns, at: batchAt },
    })),
    batchAt,
    deps.graph,
  );
}

/** Oldest a staged time may be before its job was asked for: the expiry sweep looks 14 days past its cutoff. */
const MAX_STAGED_LAG_MS = 7 * 86_400_000;

/**
 * When a batch's items were staged: its last turn's time (an input time, the same on every
 * delivery), but no more than a week before the job was asked for — turns imported months
 * late would otherwise be staged on a day the expiry sweep no longer reads, or expire at once.
 */
function stagedAtOf(batchAt: string, job: Job): string {
  const floor = Date.parse(job.requestedAt) - MAX_STAGED_LAG_MS;
  return Date.parse(batchAt) < floor ? new Date(floor).toISOString() : batchAt;
}

/** What the diary decides on: the batch's turns, what passed, was staged, reinforced and promoted, and the model's own entry. */
function diaryInput(job: Job, input: BatchInput, parsed: Parsed | null, gated: Gated, staged: Staged): DiaryInput {
  return {
    batchId: job.jobId,
    trigger: job.trigger,
    turns: input.turns,
    passed: gated.passed,
    staged: staged.toStage.map((d) => ({ path: d.path, title: d.title, category: d.category, text: d.text })),
    promoted: staged.promotedFiles,
    reinforced: staged.reinforced,
    assessment: parsed?.assessment ?? null,
    reflection: parsed?.entry ?? null,
  };
}

/**
 * Req R-DIARY: a diary entry only when the batch mattered (or the model reflected on the
 * event that fired it); otherwise the reason is logged. The record of either is kept, at the
 * batch's input time, before the batch log.
 */
async function writeDiary(job: Job, input: DiaryInput, at: string, deps: ReflectionDeps): Promise<NonNullable<BatchLog['diary']>> {
  const decision = decideDiaryEntry(input);
  await deps.diary.put(diaryRecord(job.userId, input, decision, at));
  // The record is the entry (its markdown is rendered from it when read: diaryMarkdown), no S3 object.
  if (decision.write) return { written: true, path: diaryPath(job.jobId), criteria: decision.criteria };
  deps.log.info('diary entry not written', { userId: job.userId, batchId: job.jobId, reason: decision.reason });
  return { written: false, criteria: decision.criteria, ...(decision.reason ? { reason: decision.reason } : {}) };
}

/** The agent's latest reflection entries (req R-EVT-2: a reflection consults the earlier ones), newest first; this batch's own left out. */
async function earlierReflections(job: Job, deps: ReflectionDeps): Promise<EarlierReflection[]> {
  // Enough to leave this batch's own and any dropped ones out and still show three.
  const { entries } = await deps.diary.page(job.userId, { limit: 10, type: 'reflection' });
  return entries
    .filter((e) => e.id !== job.jobId && diaryVisible(e) && e.reflection)
    .slice(0, EARLIER_REFLECTIONS_SHOWN)
    .map((e) => ({ at: e.at, trigger: e.trigger, insight: e.reflection?.insight ?? '', recommendation: e.reflection?.recommendation ?? '', confidence: e.reflection?.confidence ?? 0 }));
}

/**
 * The model's answer for the batch: the one an earlier delivery recorded, or a fresh call
 * (asked again once with a larger budget when cut), recorded before use. A fresh unusable
 * answer is not recorded when the job will be delivered again: it throws instead.
 */
async function askModel(job: Job, prompt: string, deps: ReflectionDeps, withEntry: boolean): Promise<{ response: ModelResponse; reused: boolean; outcome: Judged }> {
  const recorded = await deps.knowledge.getModelOutput(job.userId, job.jobId);
  if (recorded) return { response: recorded, reused: true, outcome: judge(recorded) };
  const response = await callWithBudgetRetry(
    (maxTokens) =>
      deps.model.reflect({
        system: REFLECTOR_SYSTEM_PROMPT,
        prompt,
        toolName: REFLECTION_TOOL.name,
        toolDescription: REFLECTION_TOOL.description,
        toolInputSchema: reflectionToolInputSchema(withEntry),
        temperature: deps.settings.temperature,
        maxTokens,
      }),
    deps.settings.maxTokens,
    deps.model.maxOutputTokens,
    deps.log,
    { userId: job.userId, batchId: job.jobId },
  );
  const outcome = judge(response);
  if (deps.retryUnusableOutput && 'error' in outcome) {
    throw new UnusableModelOutputError(`batch ${job.jobId}: model output unusable (${outcome.error.message}); retrying on the next delivery`);
  }
  await deps.knowledge.putModelOutput(job.userId, job.jobId, response);
  return { response, reused: false, outcome };
}

type Judged = ReturnType<typeof parseOutput>;

/** A cut answer or a malformed tool call is unusable whatever it holds; otherwise it is parsed. */
function judge(response: ModelResponse): Judged {
  const stop = unusableStop(response.usage);
  if (stop) return { error: new ReflectionOutputError(stop, typeof response.output === 'string' ? response.output : JSON.stringify(response.output) ?? '') };
  return parseOutput(response.output);
}

async function finish(job: Job, log: BatchLog, deps: ReflectionDeps): Promise<ReflectionOutcome> {
  if (log.model) await deps.costs.record(costEntry(job, usageOf(log.model), log.input_at ?? log.timestamp));
  const logKey = await deps.batchLogs.write(log);
  await finishCounters(job, deps);
  deps.log.info('batch reflected', {
    userId: job.userId,
    batchId: job.jobId,
    status: log.status,
    proposed: log.quality_gate_results.items_proposed,
    passed: log.quality_gate_results.items_passed,
    rejections: log.quality_gate_results.rejections.length,
    staged: log.staged_files.length,
    stopReason: log.model?.stopReason,
  });
  return { status: log.status, log, logKey };
}

/** The model's answer parsed, or why it is unusable (other errors propagate). */
function parseOutput(output: unknown): { parsed: ReturnType<typeof parseReflectionOutput> } | { error: ReflectionOutputError } {
  try {
    return { parsed: parseReflectionOutput(output) };
  } catch (error) {
    if (error instanceof ReflectionOutputError) return { error };
    throw error;
  }
}

/** How long a job waits, in-process, for the state write that records its batch. */
const RECORDED_WAITS_MS = [200, 400, 800];
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The signal state must record the job's batch (pending) unless a later batch covered its
 * turns (superseded). Ingestion enqueues a job just before its state write, so a job can
 * arrive first: wait a little (the write usually follows within milliseconds), then throw
 * BatchNotRecordedError so the queue delivers the job again after the write landed.
 */
async function waitUntilRecorded(job: Job, deps: ReflectionDeps): Promise<{ superseded: boolean; lastBatchTurn: number }> {
  const sleep = deps.sleep ?? defaultSleep;
  for (let look = 0; ; look++) {
    const { state } = parseSignalState((await deps.signalState.load(job.userId)).raw);
    if (state.pendingBatches.some((p) => p.jobId === job.jobId)) return { superseded: false, lastBatchTurn: state.lastBatchTurn };
    if (job.turnIds.every((t) => t <= state.lastBatchTurn)) return { superseded: true, lastBatchTurn: state.lastBatchTurn };
    const wait = RECORDED_WAITS_MS[look];
    if (wait === undefined) {
      throw new BatchNotRecordedError(
        `the signal state of ${job.userId} does not record batch ${job.jobId} (its ingestion has not written the state yet); retry later`,
      );
    }
    await sleep(wait);
  }
}

/** Reset the counters (req R-SIG-3: after the batch completes), once, if still waiting for this job. */
/** A batch's counters released as on completion, without reflecting (a job dropped for forgotten turns: run-job.ts). */
export const releaseBatch = (job: Job, deps: ReflectionDeps): Promise<void> => finishCounters(job, deps);

async function finishCounters(job: Job, deps: ReflectionDeps): Promise<void> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const stored = await deps.signalState.load(job.userId);
    const { state } = parseSignalState(stored.raw);
    const next = completeBatch(state, job.jobId, job.turnIds, deps.clock.now());
    if (next === null) return;
    if (await deps.signalState.save(job.userId, next, stored.version)) return;
  }
  throw new Error(`could not reset the signal state of ${job.userId} after batch ${job.jobId}`);
}

/**
 * A job failed on its last delivery (the model stayed unavailable): keep an aborted log
 * under Logs/reflector/failed/ — not the batch's commit record, so a redrive from the DLQ
 * still runs it — and leave the counters waiting (the batch did not complete).
 */
export async function recordFailedAttempt(job: Job, error: Error, deps: Pick<ReflectionDeps, 'batchLogs' | 'clock' | 'log'>): Promise<void> {
  const log: BatchLog = {
    batch_id: job.jobId,
    user_id: job.userId,
    status: 'aborted',
    timestamp: deps.clock.now().toISOString(),
    turns_reviewed: job.turnIds,
    turns_missing: [],
    turns_omitted_for_budget: [],
    trigger: job.trigger,
    kind: job.kind,
    urgency_score: job.urgency,
    quality_gate_results: { items_proposed: 0, items_passed: 0, truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 }, rejections: [] },
    staged_files: [],
    promoted_files: [],
    reinforced: [],
    model: null,
    error: { message: `${error.name}: ${error.message}; the job is parked in the dead-letter queue` },
    duration_ms: 0,
  };
  const key = await deps.batchLogs.writeFailure(log);
  deps.log.error('batch job failed its last try; parked in the DLQ', { userId: job.userId, jobId: job.jobId, log: key, error: error.message });
}
