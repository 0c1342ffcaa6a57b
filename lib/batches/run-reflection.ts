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
import {
  buildReflectorPrompt,
  EARLIER_REFLECTIONS_SHOWN,
  type EarlierReflection,
  occasionOf,
  REFLECTOR_SYSTEM_PROMPT,
} from './batch-assembly.js';
import type { BatchLog } from './batch-log.js';
import { parseBatchAnswer, BatchAnswerError, reflectionToolInputSchema } from './batch-answer.js';
import { costEntry, usageOf } from '../costs/job-cost.js';
import { type DiaryInput, decideDiaryEntry, diaryPath, diaryRecord, diaryVisible } from '../diary/diary.js';
import { callWithBudgetRetry, costOf, unusableStop } from '../model/model-call.js';
import { type ModelResponse, UnusableModelOutputError } from '../model/language-model.port.js';
import type { ReflectionDeps } from './reflection-deps.js';
import { type BatchInput, readBatch } from './batch-input.js';
import {
  connectionEdges,
  gateOutput,
  type Gated,
  linkEpisodes,
  type Parsed,
  type Staged,
  stageAndReinforce,
} from './batch-staging.js';
import { finishCounters, waitUntilRecorded } from './batch-counters.js';
import { feedShortTerm } from './batch-tier-entries.js';
import { contradictCorrected } from './batch-contradictions.js';
import { deferReflection, defersToBatch } from '../batch-inference/routine-batch.js';

export type ReflectionOutcome =
  | { status: 'completed' | 'aborted'; log: BatchLog; logKey: string }
  | { status: 'already_done' | 'superseded'; reason: string };

/** Kinds reflected like a batch: the job's turns through the req R-ASM to R-LOG pipeline. */
const BATCH_LIKE = new Set<Job['kind']>(['batch', 'event']);

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
    if (recorded.superseded)
      return { status: 'superseded', reason: `turns up to ${recorded.lastBatchTurn} are reflected already` };
  }

  const input = await readBatch(job, started, deps);
  const { asked, model } = await consultModel(job, input, deps);
  const duration = () => deps.clock.now().getTime() - started.getTime();
  let parsed: Parsed | null = null;
  if (asked) {
    if ('error' in asked.outcome)
      return finish(job, abortedLog(job, input, asked, asked.outcome.error, model, duration(), deps), deps);
    parsed = asked.outcome.parsed;
    if (parsed.assessmentInvalid)
      deps.log.warn('model assessment malformed; dropped', { userId: job.userId, batchId: job.jobId });
  }
  const gated = await gateOutput(job, input, parsed, deps);
  const staged = await stageAndReinforce(job, input, gated, deps);
  const tierEntries = await feedShortTerm(job, gated, staged, deps);
  const contradicted = await contradictCorrected(job, input, staged, deps);
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
    ...(tierEntries.length > 0 ? { tier_entries: tierEntries } : {}),
    ...(contradicted.length > 0 ? { contradicted } : {}),
    diary,
    reinforced: staged.reinforced,
    model,
    assessment: parsed?.assessment ?? null,
    error: null,
    duration_ms: duration(),
  };
  return finish(job, log, deps);
}

const emptyGates = (): BatchLog['quality_gate_results'] => ({
  items_proposed: 0,
  items_passed: 0,
  truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 },
  rejections: [],
});

type Asked = Awaited<ReturnType<typeof askModel>>;

/** The model's answer for a batch with turns (with the earlier reflections when an occasion fired it), and its usage for the log. */
async function consultModel(
  job: Job,
  input: BatchInput,
  deps: ReflectionDeps,
): Promise<{ asked: Asked | null; model: BatchLog['model'] }> {
  const { batch, existing, material, context } = input;
  const occasion = occasionOf(job);
  const something = batch.included.length > 0 || material !== '';
  const earlier = occasion && something ? await earlierReflections(job, deps) : [];
  const asked = something
    ? await askModel(
        job,
        buildReflectorPrompt(batch, existing, occasion, earlier, material, context),
        deps,
        occasion !== null,
      )
    : null;
  const model = asked
    ? {
        ...asked.response.usage,
        reused: asked.reused,
        estimatedCostUsd: asked.reused ? 0 : costOf(asked.response.usage),
      }
    : null;
  return { asked, model };
}

/** The log of a batch whose answer was unusable: nothing staged, the raw answer kept in the log. */
function abortedLog(
  job: Job,
  input: BatchInput,
  asked: Asked,
  error: BatchAnswerError,
  model: BatchLog['model'],
  durationMs: number,
  deps: ReflectionDeps,
): BatchLog {
  // The raw answer may quote the user's turns: it goes to the batch log, not the logs.
  deps.log.error('model output unusable; batch aborted', {
    userId: job.userId,
    batchId: job.jobId,
    error: error.message,
    stopReason: asked.response.usage.stopReason,
  });
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
async function writeDiary(
  job: Job,
  input: DiaryInput,
  at: string,
  deps: ReflectionDeps,
): Promise<NonNullable<BatchLog['diary']>> {
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
    .map((e) => ({
      at: e.at,
      trigger: e.trigger,
      insight: e.reflection?.insight ?? '',
      recommendation: e.reflection?.recommendation ?? '',
      confidence: e.reflection?.confidence ?? 0,
    }));
}

/**
 * The model's answer for the batch: the one an earlier delivery or a batch inference job
 * recorded, a routine batch's request kept for the nightly batch inference job (deferReflection
 * throws: the job is done for now), or a fresh call
 * (asked again once with a larger budget when cut), recorded before use. A fresh unusable
 * answer is not recorded when the job will be delivered again: it throws instead.
 */
async function askModel(
  job: Job,
  prompt: string,
  deps: ReflectionDeps,
  withEntry: boolean,
): Promise<{ response: ModelResponse; reused: boolean; outcome: Judged }> {
  const recorded = await deps.knowledge.getModelOutput(job.userId, job.jobId);
  if (recorded) {
    const outcome = judge(recorded);
    // A batch inference job's answer was paid for by no delivery yet: this one reports its cost.
    if (!recorded.usage.batchInference) return { response: recorded, reused: true, outcome };
    if (!('error' in outcome)) return { response: recorded, reused: false, outcome };
    // One the job answered unusably (its text held no valid answer) is asked on demand, as a cut one is.
    deps.log.warn('batch inference answer unusable: asked on demand', {
      userId: job.userId,
      batchId: job.jobId,
      error: outcome.error.message,
    });
  }
  const request = (maxTokens: number) => ({
    system: REFLECTOR_SYSTEM_PROMPT,
    prompt,
    toolName: REFLECTION_TOOL.name,
    toolDescription: REFLECTION_TOOL.description,
    toolInputSchema: reflectionToolInputSchema(withEntry),
    temperature: deps.settings.temperature,
    maxTokens,
  });
  if (deps.deferred && defersToBatch(job) && !recorded)
    await deferReflection(job, request(deps.settings.maxTokens), { ...deps, deferred: deps.deferred });
  const response = await callWithBudgetRetry(
    (maxTokens) => deps.model.reflect(request(maxTokens)),
    deps.settings.maxTokens,
    deps.model.maxOutputTokens,
    deps.log,
    { userId: job.userId, batchId: job.jobId },
  );
  const outcome = judge(response);
  if (deps.retryUnusableOutput && 'error' in outcome) {
    throw new UnusableModelOutputError(
      `batch ${job.jobId}: model output unusable (${outcome.error.message}); retrying on the next delivery`,
    );
  }
  await deps.knowledge.putModelOutput(job.userId, job.jobId, response);
  return { response, reused: false, outcome };
}

type Judged = ReturnType<typeof parseOutput>;

/** A cut answer or a malformed tool call is unusable whatever it holds; otherwise it is parsed. */
function judge(response: ModelResponse): Judged {
  const stop = unusableStop(response.usage);
  if (stop)
    return {
      error: new BatchAnswerError(
        stop,
        typeof response.output === 'string' ? response.output : (JSON.stringify(response.output) ?? ''),
      ),
    };
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
function parseOutput(output: unknown): { parsed: ReturnType<typeof parseBatchAnswer> } | { error: BatchAnswerError } {
  try {
    return { parsed: parseBatchAnswer(output) };
  } catch (error) {
    if (error instanceof BatchAnswerError) return { error };
    throw error;
  }
}

/**
 * A job failed on its last delivery (the model stayed unavailable): keep an aborted log
 * under Logs/reflector/failed/ — not the batch's commit record, so a redrive from the DLQ
 * still runs it — and leave the counters waiting (the batch did not complete).
 */
export async function recordFailedAttempt(
  job: Job,
  error: Error,
  deps: Pick<ReflectionDeps, 'batchLogs' | 'clock' | 'log'>,
): Promise<void> {
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
    quality_gate_results: {
      items_proposed: 0,
      items_passed: 0,
      truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 },
      rejections: [],
    },
    staged_files: [],
    promoted_files: [],
    reinforced: [],
    model: null,
    error: { message: `${error.name}: ${error.message}; the job is parked in the dead-letter queue` },
    duration_ms: 0,
  };
  const key = await deps.batchLogs.writeFailure(log);
  deps.log.error('batch job failed its last try; parked in the DLQ', {
    userId: job.userId,
    jobId: job.jobId,
    log: key,
    error: error.message,
  });
}
