/**
 * One user's messages folded into their signal state, without writing anything: which turns
 * to store and mark, which jobs to enqueue before and after the state write, which idle check
 * to send (the order of the writes: lib/turns/ingest-turns.ts).
 */
import type { TurnQueueMessage } from '../../events/index.js';
import type { Job } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { type AccumulateResult, accumulate, type SignalItem } from '../signals/signal-accumulator.js';
import {
  type CloseSummary,
  messageTag,
  parseSignalState,
  type SignalState,
  withAppliedMessages,
} from '../signals/signal-state.js';
import { closeSummaryTrigger, commitCloseSummaries, type JobTrigger } from '../signals/job-triggers.js';
import { type IdleCheckPlan, idleCheckPending, scheduleIdleCheck } from '../signals/idle-rule.js';
import { type EventEpisode, eventEpisodeOf } from './episodes.js';
import { eventId } from '../batches/event-reflection.js';
import { forgottenBefore } from '../forget/forget-user.js';
import { withUserIdle } from '../settings/user-settings.js';
import type { IngestDeps } from './ingest-deps.js';

export interface Fold {
  userId: string;
  version: number | null;
  folded: AccumulateResult;
  toStore: TurnSaved[];
  /** The turns to mark as changed for the search index (`turnChangeMarks`), stored or not. */
  marked: Array<{ userId: string; turnId: number }>;
  /** The first turn id this cycle may leave unmarked, to record in TURNLOG before the state that says so is put; null when recorded. */
  openLog: number | null;
  /** agent.event episodes to store (before the jobs that will write their documents). */
  episodes: EventEpisode[];
  /** Enqueued before the state write (batch and event jobs: the reflector waits for the write that records its batch). */
  jobs: Job[];
  /** Enqueued after it: the session-close summaries it commits (`closeSummaries`), or that the last write committed when these messages come again. */
  after: Job[];
  /** The idle check to send: a turn was counted and none is pending. */
  idleCheck: IdleCheckPlan | null;
  /** Every message is in the state already: nothing to write. */
  alreadyApplied: boolean;
  /** The sessions these messages close, with the time each closed. */
  closed: Array<{ sessionId: string; at: string }>;
  /** Messages from before the user was forgotten: dropped. */
  forgotten: number;
}

export interface UserMessage {
  messageId: string;
  message: TurnQueueMessage;
}

/** Load, fold and decide for one user, without writing anything. */
export async function foldUser(userId: string, items: readonly UserMessage[], deps: IngestDeps): Promise<Fold> {
  const stored = await deps.signalState.load(userId);
  const { state: prior, corrupt, issues } = parseSignalState(stored.raw);
  if (corrupt) deps.log.warn('signal state was corrupt and is reset to defaults', { userId, issues });
  // Messages the state already holds (our own write landed, then its response was lost or
  // the function died): skip them, so a retry never counts them twice.
  const applied = new Set(prior.appliedMessages);
  const unapplied = items.filter((i) => !applied.has(messageTag(i.messageId)));
  // Some of these messages came before, and their write landed: the summaries it committed go out again (same ids).
  const resent: CloseSummary[] = unapplied.length < items.length ? (prior.closeSummaries ?? []) : [];
  const fresh = stored.version === null ? await sinceForgotten(userId, unapplied, deps) : unapplied;
  const forgotten = unapplied.length - fresh.length;
  if (forgotten > 0) deps.log.info('messages from before the user was forgotten dropped', { userId, forgotten });
  if (fresh.length === 0) return appliedFold(userId, stored.version, prior, resent, forgotten);
  return foldFresh(userId, stored.version, prior, fresh, resent, forgotten, deps);
}

/** Every message is in the state already (or from before a forget): nothing to write, the committed summaries sent again. */
function appliedFold(
  userId: string,
  version: number | null,
  prior: SignalState,
  resent: readonly CloseSummary[],
  forgotten: number,
): Fold {
  const after = resent.map((c) => jobOf(userId, closeSummaryTrigger(c), c.requestedAt));
  return {
    userId,
    version,
    folded: { state: prior, outcomes: [], triggers: [], newActiveDays: [], eventsNotReflected: [] },
    toStore: [],
    marked: [],
    openLog: null,
    episodes: [],
    jobs: [],
    after,
    idleCheck: null,
    alreadyApplied: true,
    closed: [],
    forgotten,
  };
}

/** The messages not folded yet, folded: the state to write, the turns to store, the jobs and idle check to send. */
async function foldFresh(
  userId: string,
  version: number | null,
  prior: SignalState,
  fresh: readonly UserMessage[],
  resent: CloseSummary[],
  forgotten: number,
  deps: IngestDeps,
): Promise<Fold> {
  const messages = fresh.map((i) => i.message);
  const turns = messages.filter((m): m is TurnSaved => m.type === 'turn.saved');
  const older = turns.filter((t) => t.turnId <= prior.lastTurnId).map((t) => t.turnId);
  const known = older.length > 0 ? await deps.turns.indexedTurnIds(userId, older) : new Set<number>();
  const now = deps.clock.now();
  const accumulated = accumulate(prior, messages.map(toItem), deps.config, now, (id) => known.has(id));
  const committed = commitCloseSummaries(accumulated.state, accumulated.triggers, resent, now.toISOString());
  const withTags = withAppliedMessages(
    committed,
    fresh.map((i) => i.messageId),
  );
  const counted = accumulated.outcomes.some((o) => o.disposition === 'counted');
  // The user's own inactivity threshold, read only when a check is to be scheduled (once per quiet window).
  const idle =
    counted && !idleCheckPending(withTags, now)
      ? scheduleIdleCheck(withTags, withUserIdle(deps.config, await deps.settings.get(userId)), now)
      : null;
  const folded = { ...accumulated, state: { ...(idle?.state ?? withTags), turnLog: true as const } };
  const keep = new Set(folded.outcomes.filter((o) => o.disposition !== 'duplicate').map((o) => o.turnId));
  const jobs = folded.triggers
    .filter((t) => t.kind !== 'session-close')
    .map((t) => jobOf(userId, t, now.toISOString()));
  const after = (committed.closeSummaries ?? []).map((c) => jobOf(userId, closeSummaryTrigger(c), c.requestedAt));
  const episodes = messages.flatMap((m) => (m.type === 'agent.event' ? (eventEpisodeOf(m) ?? []) : []));
  const closed = messages.flatMap((m) =>
    m.type === 'session.closed' ? [{ sessionId: m.sessionId, at: m.timestamp }] : [],
  );
  const toStore = dedupeByTurnId(turns.filter((t) => keep.has(t.turnId)));
  return {
    userId,
    version,
    folded,
    toStore,
    marked: turnChangeMarks(prior, turns),
    openLog: prior.turnLog ? null : prior.lastTurnId + 1,
    episodes,
    jobs,
    after,
    idleCheck: idle?.plan ?? null,
    alreadyApplied: false,
    closed,
    forgotten,
  };
}

const jobOf = (userId: string, t: JobTrigger, requestedAt: string): Job => ({
  type: 'reflector.job',
  version: 1,
  jobId: t.jobId,
  userId,
  kind: t.kind,
  trigger: t.trigger,
  urgency: t.urgency,
  turnIds: t.turnIds,
  ...(t.episodeIds.length > 0 ? { episodeIds: t.episodeIds } : {}),
  ...(t.eventDetail ? { eventDetail: t.eventDetail } : {}),
  requestedAt,
});

/**
 * The turns of a cycle to mark as changed for the search index (docs/search-index.md
 * "Turns without marks"): a turn above `lastTurnId` as this cycle read it needs none — the
 * search index reads the turns above its turn watermark, which never passes a turn counted by
 * a state put after the compaction read the state. A turn at or below it (redelivered,
 * redriven from the DLQ, out of order, or written unmarked by an attempt whose state put then
 * failed) is marked, stored again or not. Until the user's TURNLOG is recorded (a state
 * without `turnLog`: before the first cycle of this code, or reset), every turn is marked.
 */
export function turnChangeMarks(
  prior: SignalState,
  turns: readonly TurnSaved[],
): Array<{ userId: string; turnId: number }> {
  const ids = new Set(turns.filter((t) => !prior.turnLog || t.turnId <= prior.lastTurnId).map((t) => t.turnId));
  return [...ids].map((turnId) => ({ userId: turns[0]?.userId ?? '', turnId }));
}

/**
 * A user with no signal state is new, or was just forgotten: their messages from before the
 * forget (still queued, or redelivered) are dropped, later ones start their memory afresh.
 */
async function sinceForgotten(userId: string, items: readonly UserMessage[], deps: IngestDeps): Promise<UserMessage[]> {
  const before = await forgottenBefore(deps.forgets, userId);
  if (before === null) return [...items];
  return items.filter((i) => Date.parse(i.message.timestamp) > Date.parse(before));
}

const toItem = (m: TurnQueueMessage): SignalItem => {
  if (m.type === 'turn.saved') return { kind: 'turn', turn: m };
  if (m.type === 'session.closed') return { kind: 'session_closed', sessionId: m.sessionId };
  return {
    kind: 'agent_event',
    trigger: m.trigger,
    eventId: eventId(m),
    ...(m.detail ? { detail: m.detail } : {}),
    ...(m.episode ? { episodeId: eventEpisodeOf(m)?.episodeId } : {}),
  };
};

function dedupeByTurnId(turns: TurnSaved[]): TurnSaved[] {
  const seen = new Set<number>();
  return turns.filter((t) => {
    if (seen.has(t.turnId)) return false;
    seen.add(t.turnId);
    return true;
  });
}
