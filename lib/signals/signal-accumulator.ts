/**
 * The signal accumulator of req R-SIG: cheap, code-only signals decide when a user's
 * recent turns deserve a reflection. Pure: state and items in, state and triggers out.
 * It also keeps req R-SUM-1's idle-summary counters and the per-day activity counts.
 * Every list and map in the state is capped (named constants below, in signal-state.ts and
 * turn-signals.ts, or a window of the SignalConfig), so the item stays a few KB however long
 * the user talks. The state is signal-state.ts; the idle rule, idle-rule.ts.
 */
import type { AgentEventTrigger } from '../../events/agent-event.js';
import type { JobKind } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { eventJobId } from '../batches/event-reflection.js';
import type { SignalConfig } from './signal-weights.js';
import type { SignalState } from './signal-state.js';
import { detectSignals, type SignalName, topicOf, WEIGHT_OF } from './turn-signals.js';
import { batchJobId, type JobTrigger, takeSummary } from './job-triggers.js';

/**
 * Most unbatched turn ids kept in the state. Only reached when batches keep failing;
 * the oldest are then left unreflected rather than letting the item outgrow DynamoDB's
 * 400 KB limit.
 */
export const MAX_UNBATCHED_TURNS = 500;

/** Most batches waiting at once; past it, turns wait unassigned until one completes. */
export const MAX_PENDING_BATCHES = 20;

/**
 * Most turns waiting unassigned (only reached when MAX_PENDING_BATCHES batches wait, i.e.
 * the reflector is down): the oldest are dropped, counted in `counters.unassignedDropped`.
 * They stay in the turn index and the nightly run reads them; no batch will.
 */
export const MAX_UNASSIGNED_TURNS = 500;

/** Most agent.event episodes waiting for a batch; past it the oldest wait no more (they stay stored, without a document). */
export const MAX_WAITING_EPISODES = 50;

/** One thing arriving on the TurnQueue, as the accumulator sees it. */
export type SignalItem =
  | { kind: 'turn'; turn: Pick<TurnSaved, 'turnId' | 'timestamp' | 'query' | 'signals'> }
  | { kind: 'session_closed'; sessionId: string }
  /** `eventId`: names the job of the event reflected on by itself, when no turn waits (lib/batches/event-reflection.ts). */
  | {
      kind: 'agent_event';
      trigger: AgentEventTrigger;
      eventId: string;
      episodeId?: string | undefined;
      detail?: string | undefined;
    };

export type TurnDisposition = 'counted' | 'duplicate' | 'late';

export interface AccumulateResult {
  state: SignalState;
  triggers: JobTrigger[];
  /** Per input turn, in input order. */
  outcomes: Array<{ turnId: number; disposition: TurnDisposition; signals: SignalName[] }>;
  /**
   * Days new to `activity`: each gets its activity marker (the nightly selection's index, one
   * small item per user per active day) before the state that counts it is written.
   */
  newActiveDays: string[];
  /** agent.events that fired no job, and why (the signal function logs them: no event passes silently). */
  eventsNotReflected: Array<{ trigger: AgentEventTrigger; reason: string }>;
}

/**
 * Fold a user's items (in arrival order) into the state. `known(turnId)` tells whether
 * the turn index already held the turn before this batch: a turn at or below
 * `lastTurnId` is a duplicate when known and late otherwise; late turns are stored
 * but move no counter.
 */
export function accumulate(
  prior: SignalState,
  items: ReadonlyArray<SignalItem | SignalItemTurn>,
  config: SignalConfig,
  now: Date,
  known: (turnId: number) => boolean,
): AccumulateResult {
  const state: SignalState = structuredClone(prior);
  const triggers: JobTrigger[] = [];
  const outcomes: AccumulateResult['outcomes'] = [];
  const eventsNotReflected: AccumulateResult['eventsNotReflected'] = [];
  const seenHere = new Set<number>();

  for (const raw of items) {
    const item: SignalItem = 'kind' in raw ? raw : { kind: 'turn', turn: raw };
    if (item.kind === 'session_closed') {
      triggers.push(...closeSession(state, config, now));
      continue;
    }
    if (item.kind === 'agent_event') {
      const t = agentEvent(state, item, config, now);
      // The same event twice in one delivery (a republish): one job.
      if ('reason' in t) eventsNotReflected.push({ trigger: item.trigger, reason: t.reason });
      else if (!triggers.some((x) => x.jobId === t.jobId)) triggers.push(t);
      continue;
    }
    const turn = item.turn;
    const stale = staleDisposition(state, turn.turnId, seenHere, known);
    if (stale) {
      outcomes.push({ turnId: turn.turnId, disposition: stale, signals: [] });
      continue;
    }
    const signals = countTurn(state, turn, config, now);
    outcomes.push({ turnId: turn.turnId, disposition: 'counted', signals });

    triggers.push(...retryTimedOut(state, config, now));
    const fired = shouldTrigger(state, config);
    if (fired) {
      const t = startBatch(state, config, now, fired, 'batch');
      if (t) triggers.push(t);
    }
  }
  return { state, triggers, outcomes, newActiveDays: markActivity(prior, state), eventsNotReflected };
}

type SignalTurn = Extract<SignalItem, { kind: 'turn' }>['turn'];

/**
 * Req R-SIG-6's session-close hook: reflect on the turns no batch has taken yet, and
 * (req R-SUM) summarise the session.
 */
function closeSession(state: SignalState, config: SignalConfig, now: Date): JobTrigger[] {
  const batch = startBatch(state, config, now, 'session_closed', 'batch');
  const summary = takeSummary(state, 'session-close', 'session_closed');
  return [batch, summary].filter((t): t is JobTrigger => t !== null);
}

/**
 * Req R-TIER, R-EVT-1: an agent.event reflects now, over whatever has not been given to a
 * batch yet. With no turn waiting, it reflects on itself: a job over no turns, with its detail
 * and the waiting episodes (lib/batches/event-reflection.ts). Only when MAX_PENDING_BATCHES
 * batches wait already does it fire nothing, and says why: its episode and the waiting turns
 * go into the next batch; its detail is not kept.
 */
function agentEvent(
  state: SignalState,
  item: Extract<SignalItem, { kind: 'agent_event' }>,
  config: SignalConfig,
  now: Date,
): JobTrigger | { reason: string } {
  // Its episode waits for a batch like a turn (a republished event's only once).
  const id = item.episodeId;
  if (
    id !== undefined &&
    !state.unassigned.episodeIds.includes(id) &&
    !state.pendingBatches.some((p) => p.episodeIds.includes(id))
  ) {
    state.unassigned.episodeIds = [...state.unassigned.episodeIds, id].slice(-MAX_WAITING_EPISODES);
  }
  const detail = item.detail ? { eventDetail: item.detail } : {};
  if (state.unassigned.turnIds.length === 0) {
    const episodeIds = state.unassigned.episodeIds;
    state.unassigned = { ...state.unassigned, episodeIds: [] };
    return {
      jobId: eventJobId(item.eventId, state.lastTurnId),
      kind: 'event',
      trigger: `event:${item.trigger}`,
      urgency: 0,
      turnIds: [],
      episodeIds,
      ...detail,
      noTurns: 'no turn was waiting for a batch',
    };
  }
  const t = startBatch(state, config, now, `event:${item.trigger}`, 'event');
  if (!t)
    return {
      reason: `${state.pendingBatches.length} batches wait for the reflector already (the most there may be): the ${state.unassigned.turnIds.length} waiting turns and any episode go into a later batch; the event's detail is not kept`,
    };
  return { ...t, ...detail };
}

/** A turn seen before (duplicate) or older than the last counted one (late), counted as such; null for a new turn. */
function staleDisposition(
  state: SignalState,
  turnId: number,
  seenHere: Set<number>,
  known: (turnId: number) => boolean,
): 'duplicate' | 'late' | null {
  if (seenHere.has(turnId) || (turnId <= state.lastTurnId && known(turnId))) {
    state.counters.duplicates += 1;
    return 'duplicate';
  }
  seenHere.add(turnId);
  if (turnId <= state.lastTurnId) {
    state.counters.late += 1;
    return 'late';
  }
  return null;
}

/** A new turn folded in: its signals move the urgency, it waits for a batch and a summary, its day and topic are recorded. */
function countTurn(state: SignalState, turn: SignalTurn, config: SignalConfig, now: Date): SignalName[] {
  const signals = detectSignals(turn, state.recentTopics, config);
  const weight = signals.reduce((sum, s) => sum + config.weights[WEIGHT_OF[s]], 0);
  state.urgencyScore = round2(state.urgencyScore + weight);
  assign(state, turn.turnId, weight);
  state.turnsSinceLastBatch += 1;
  state.lastTurnId = turn.turnId;
  state.lastTurnTimestamp = turn.timestamp;
  state.lastSeenAt = now.toISOString();
  state.counters.turns += 1;
  state.unbatchedTurnIds = [...state.unbatchedTurnIds, turn.turnId].slice(-MAX_UNBATCHED_TURNS);
  state.messagesSinceSummary += 1;
  state.summaryTurnIds = [...state.summaryTurnIds, turn.turnId].slice(-config.summaryMaxTurns);
  recordActivity(state, turn.timestamp, config.activityDays);
  const topic = topicOf(turn);
  if (topic) state.recentTopics = [...state.recentTopics, topic].slice(-config.topicWindow);
  return signals;
}

/** A counted turn waits for a batch; past MAX_UNASSIGNED_TURNS the oldest waiting one is dropped. */
function assign(state: SignalState, turnId: number, weight: number): void {
  const turnIds = [...state.unassigned.turnIds, turnId];
  const dropped = Math.max(0, turnIds.length - MAX_UNASSIGNED_TURNS);
  state.counters.unassignedDropped += dropped;
  state.unassigned = {
    ...state.unassigned,
    turnIds: turnIds.slice(dropped),
    urgency: round2(state.unassigned.urgency + weight),
  };
}

/** The activity days the prior state did not count yet: their writer writes their markers first. */
function markActivity(prior: SignalState, state: SignalState): string[] {
  const marked = new Set(Object.keys(prior.activity));
  return Object.keys(state.activity)
    .sort()
    .filter((d) => !marked.has(d));
}

/** A bare turn is accepted where an item is expected (the common case). */
type SignalItemTurn = Pick<TurnSaved, 'turnId' | 'timestamp' | 'query' | 'signals'>;

function shouldTrigger(state: SignalState, config: SignalConfig): string | null {
  if (state.unassigned.turnIds.length >= config.turnThreshold) return 'turn_count';
  if (state.unassigned.urgency > config.urgencyThreshold) return 'urgency';
  return null;
}

/**
 * Cut a batch from the unassigned turns (oldest first, at most maxBatchTurns). Nothing
 * fires when there is nothing to reflect on or too many batches already wait.
 */
function startBatch(
  state: SignalState,
  config: SignalConfig,
  now: Date,
  trigger: string,
  kind: JobKind,
): JobTrigger | null {
  if (state.unassigned.turnIds.length === 0 || state.pendingBatches.length >= MAX_PENDING_BATCHES) return null;
  const turnIds = state.unassigned.turnIds.slice(0, config.maxBatchTurns);
  const rest = state.unassigned.turnIds.slice(turnIds.length);
  const urgency = state.unassigned.urgency;
  // Waiting agent.event episodes go with the batch: it writes their documents.
  const episodeIds = state.unassigned.episodeIds;
  state.unassigned = { turnIds: rest, urgency: rest.length > 0 ? urgency : 0, episodeIds: [] };
  const jobId = batchJobId(turnIds);
  state.pendingBatches = [...state.pendingBatches, { jobId, turnIds, since: now.toISOString(), episodeIds }];
  state.counters.batchesTriggered += 1;
  return { jobId, kind, trigger, urgency, turnIds, episodeIds };
}

/**
 * A batch pending longer than the timeout (its job lost, or parked in the DLQ) is enqueued
 * again — the same job id over the same turns, so a late first run and the retry converge.
 */
function retryTimedOut(state: SignalState, config: SignalConfig, now: Date): JobTrigger[] {
  const out: JobTrigger[] = [];
  state.pendingBatches = state.pendingBatches.map((p) => {
    const timeout = p.deferred ? config.deferredBatchTimeoutMs : config.pendingBatchTimeoutMs;
    if (now.getTime() - Date.parse(p.since) < timeout) return p;
    out.push({
      jobId: p.jobId,
      kind: 'batch',
      trigger: 'pending_timeout',
      urgency: state.urgencyScore,
      turnIds: p.turnIds,
      episodeIds: p.episodeIds,
    });
    // Fired again, a deferred batch runs on demand (its trigger is not a routine one): it waits no longer.
    const { deferred: _, ...again } = p;
    return { ...again, since: now.toISOString() };
  });
  return out;
}

/**
 * The reflector deferred the batch to a batch inference job: it is not fired again before
 * `deferredBatchTimeoutMs`. Null when the state no longer waits for it, or knows already.
 */
export function deferBatch(prior: SignalState, jobId: string): SignalState | null {
  const pending = prior.pendingBatches.find((p) => p.jobId === jobId);
  if (!pending || pending.deferred) return null;
  const state = structuredClone(prior);
  state.pendingBatches = state.pendingBatches.map((p) => (p.jobId === jobId ? { ...p, deferred: true as const } : p));
  return state;
}

function recordActivity(state: SignalState, timestamp: string, days: number): void {
  const day = timestamp.slice(0, 10);
  state.activity[day] = (state.activity[day] ?? 0) + 1;
  const keep = Object.keys(state.activity).sort().slice(-days);
  state.activity = Object.fromEntries(keep.map((d) => [d, state.activity[d] ?? 0]));
}

/**
 * A batch finished (whatever its items): the seed's counters (turns_since_last_batch,
 * urgency_score) reset as req R-SIG-3 says — after completion, not at enqueue — keeping
 * the turns that arrived while it ran (their count and their urgency). Returns null when the state no longer waits for
 * this job (already completed: a redelivery).
 */
export function completeBatch(
  prior: SignalState,
  jobId: string,
  turnIds: readonly number[],
  now: Date,
): SignalState | null {
  if (!prior.pendingBatches.some((p) => p.jobId === jobId)) return null;
  const done = new Set(turnIds);
  const state = structuredClone(prior);
  state.pendingBatches = state.pendingBatches.filter((p) => p.jobId !== jobId);
  state.unbatchedTurnIds = state.unbatchedTurnIds.filter((t) => !done.has(t));
  state.turnsSinceLastBatch = state.unbatchedTurnIds.length;
  // The urgency of turns not cut into a batch yet stays, like their count: resetting to 0
  // would drop what arrived while the batch ran, and make the score depend on timing.
  state.urgencyScore = state.unassigned.urgency;
  state.lastBatchTurn = Math.max(state.lastBatchTurn, ...turnIds);
  state.lastBatchTimestamp = now.toISOString();
  state.counters.batchesCompleted += 1;
  return state;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
