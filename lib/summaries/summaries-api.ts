/** Sleep-time runs and summaries (req R-SLP, R-SUM): the run log, the self-assessment, summaries listed, edited, asked for and deleted, and how they fare. */
import { summaryMessages } from '../items/source-items.js';
import type { SleepTimeRun } from '../sleep-time/run-log.js';
import { weeklyMarkdown } from '../sleep-time/weekly.js';
import { capSummaryText } from './summary.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import { computeSelfAssessment } from '../sleep-time/self-assessment.js';
import { summaryQuality } from './summary-quality.js';
import { MAX_PENDING_BATCHES } from '../signals/signal-accumulator.js';
import { parseSignalState, type SignalState } from '../signals/signal-state.js';
import { fnv1a32 } from '../kernel/stable-hash.js';
import { type MemoryApiDeps, notFound } from '../memory-api/deps.js';

/** How summaries fare (req R-SUM-10): deletions, resurrections, topics (lib/summaries/summary-quality.ts). */
export async function summaryQualityOf(deps: MemoryApiDeps, userId: string) {
  return { quality: summaryQuality(await deps.summaries.list(userId)) };
}

/** The newest `limit` runs, nightly and weekly together: the newest `limit` of each kind read (a page each, not every run), merged. */
export async function sleepTimeRuns(deps: MemoryApiDeps, userId: string, limit: number) {
  const [nightly, weekly] = await Promise.all([
    deps.runs.newest(userId, 'nightly', limit),
    deps.runs.newest(userId, 'weekly', limit),
  ]);
  const runs = [...nightly, ...weekly].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, limit);
  return { runs: runs.map(withMarkdown) };
}

/** A weekly run with its reflection as markdown, rendered from the record (not an S3 object). */
const withMarkdown = (run: SleepTimeRun): SleepTimeRun & { markdown?: string } =>
  run.weekly ? { ...run, markdown: weeklyMarkdown(run.windowTo, run.weekly) } : run;

export async function latestSleepTimeRun(deps: MemoryApiDeps, userId: string) {
  const [nightly, weekly] = await Promise.all([
    deps.runs.latest(userId, 'nightly'),
    deps.runs.latest(userId, 'weekly'),
  ]);
  const run = [nightly, weekly].filter((r) => r !== null).sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
  if (!run) throw notFound(`a sleep-time run of ${userId}`);
  return { run: withMarkdown(run) };
}

/** Req R-SLP-10, plus the per-run points the console charts. */
export async function assessment(deps: MemoryApiDeps, userId: string, days: number) {
  const now = deps.clock.now();
  const runs = await deps.runs.list(
    userId,
    'nightly',
    new Date(now.getTime() - days * 86_400_000).toISOString(),
    now.toISOString(),
  );
  const points = runs.map((r) => {
    const issues =
      (r.findingsByCategory.correction ?? 0) +
      (r.findingsByCategory.unresolved ?? 0) +
      (r.findingsByCategory.contradiction ?? 0);
    return {
      startedAt: r.startedAt,
      sessionsReviewed: r.sessionsReviewed,
      issuesPerSession: r.sessionsReviewed > 0 ? Math.round((issues / r.sessionsReviewed) * 1000) / 1000 : 0,
    };
  });
  return { days, assessment: computeSelfAssessment(runs), points };
}

/**
 * The newest `limit` summaries by the turns they cover (last turn, then id; a page read, not the
 * history), each with its turn pair (req R-SUM-5): the place after its last turn, the system
 * and assistant messages.
 */
export async function listSummaries(
  deps: MemoryApiDeps,
  userId: string,
  q: { includeDeleted: boolean; limit: number },
) {
  const summaries = (await deps.summaries.newest(userId, q)).map((s) => ({ ...s, ...summaryMessages(s) }));
  return { summaries };
}

/** A person corrects a summary's text (POST …/summaries/{id}); the old text stays in its record, the change in the audit trail. */
export async function editSummary(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
  req: { text: string; reason?: string | undefined },
) {
  const at = deps.clock.now().toISOString();
  const edited = await deps.summaries.edit(userId, id, {
    text: capSummaryText(req.text),
    by: actor,
    at,
    reason: req.reason,
  });
  if (!edited) {
    if (await deps.summaries.exists(userId, id))
      throw new MemoryApiError('conflict', `summary ${id} is deleted, or was edited at the same time: read it again`);
    throw notFound(`summary ${id}`);
  }
  await deps.audit.append([
    {
      userId,
      itemId: `summary:${id}`,
      action: 'summary_edit',
      actor,
      at,
      ...(req.reason ? { reason: req.reason } : {}),
    },
  ]);
  return { summary: { ...edited, ...summaryMessages(edited) } };
}

/**
 * Req R-SUM-9's manual summary: a summary now, with the caller's own instruction if given.
 * It covers the turns since the user's last summary (as the idle rule would), or, when there
 * are none, the turns the last summary covered (summarised again, e.g. with another prompt);
 * it does not reset the idle rule's count. The job id is derived from its turns and prompt,
 * so the same request twice makes one summary (FIFO deduplication, then the reflector's
 * check of the id); the summary appears in GET …/summaries once the reflector has run.
 * With `reflect`, also a batch reflection over the turns no batch has taken yet: an
 * `agent.event` (trigger `user_request`) on the TurnQueue, so the signal function assigns
 * those turns to the batch in the user's signal state, as for an agent's own request. When
 * there are none (or too many batches wait already), no event is sent and the answer says
 * so — `reflect: false` and the reason — rather than promising a reflection (req R-SUM-9).
 * "The last summary" is the first live one by key (`summaries.newest`, one item read unless
 * deleted ones sit above it): summaries take the turns not yet summarised, so the newest
 * covers the highest turns, and a manual one asked for again shares its source's turns.
 */
export async function requestSummary(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: { prompt?: string | undefined; reflect?: boolean | undefined },
) {
  const { state } = parseSignalState((await deps.signalState.load(userId)).raw);
  const turnIds =
    state.summaryTurnIds.length > 0
      ? state.summaryTurnIds
      : ((await deps.summaries.newest(userId, { limit: 1, includeDeleted: false }))[0]?.sourceTurns ?? []);
  if (turnIds.length === 0) throw new MemoryApiError('conflict', `user ${userId} has no turns to summarise yet`);
  const prompt = req.prompt?.trim() || undefined;
  const jobId = `manual-${turnIds[0]}-${turnIds.at(-1)}-${fnv1a32(prompt ?? '')
    .toString(16)
    .padStart(8, '0')}`;
  const requestedAt = deps.clock.now().toISOString();
  await deps.jobs.enqueue({
    type: 'reflector.job',
    version: 1,
    jobId,
    userId,
    kind: 'manual',
    trigger: 'manual',
    urgency: 0,
    turnIds: [...turnIds],
    ...(prompt ? { prompt } : {}),
    requestedAt,
  });
  const noReflection = req.reflect ? whyNoReflection(state) : null;
  const reflecting = req.reflect === true && noReflection === null;
  if (reflecting) {
    await deps.events.publish([
      {
        type: 'agent.event',
        version: 1,
        userId,
        timestamp: requestedAt,
        trigger: 'user_request',
        detail: prompt ?? `reflection asked for by ${actor} through the API`,
      },
    ]);
  }
  const also = reflecting ? ', and a batch reflection' : noReflection ? `; no reflection: ${noReflection}` : '';
  await deps.audit.append([
    {
      userId,
      itemId: `summary:${jobId}`,
      action: 'summary_request',
      actor,
      at: requestedAt,
      reason: `${prompt ? 'manual summary with its own prompt' : 'manual summary'}${also}`,
    },
  ]);
  const reflected = reflecting ? { reflect: true } : noReflection ? { reflect: false, reason: noReflection } : {};
  return { jobId, turnIds: [...turnIds], ...reflected };
}

/**
 * Why a reflection asked for with a summary would reflect on nothing, as the user's signal
 * state says now (null: turns wait for a batch and one can start). Its event would cut a
 * batch from the turns no batch has taken; with none, the agent.event would reflect on its
 * detail alone — here the summary's instruction or a stock note, no material — so none is sent.
 */
export function whyNoReflection(
  state: Pick<SignalState, 'unassigned' | 'pendingBatches' | 'lastTurnId'>,
): string | null {
  const waiting = state.pendingBatches.length;
  if (state.unassigned.turnIds.length === 0) {
    const batches =
      waiting > 0 ? `, or are in the ${waiting} batch${waiting === 1 ? '' : 'es'} waiting for the reflector` : '';
    return `no turn is waiting for a reflection: the turns up to ${state.lastTurnId} are reflected already${batches}`;
  }
  if (waiting >= MAX_PENDING_BATCHES)
    return `${waiting} batches wait for the reflector already (the most there may be): the ${state.unassigned.turnIds.length} waiting turns go into a batch once one completes`;
  return null;
}

export async function deleteSummary(deps: MemoryApiDeps, actor: string, userId: string, id: string) {
  if (!(await deps.summaries.softDelete(userId, id))) throw notFound(`summary ${id}`);
  await deps.audit.append([
    {
      userId,
      itemId: `summary:${id}`,
      action: 'summary_delete',
      actor,
      at: deps.clock.now().toISOString(),
      reason: 'deleted by a person (req R-SUM-6, R-SUM-7: never shown again)',
    },
  ]);
  return { id, deleted: true };
}
