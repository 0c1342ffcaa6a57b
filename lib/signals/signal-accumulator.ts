/**
 * The signal accumulator of req R-SIG: cheap, code-only signals decide when a user's
 * recent turns deserve a reflection. Pure: state and items in, state and triggers out.
 * It also keeps req R-SUM-1's idle-summary counters and the per-day activity counts.
 * Every list and map in the state is capped (named constants below, or a window of the
 * SignalConfig), so the item stays a few KB however long the user talks.
 */
import * as z from 'zod';
import type { AgentEventTrigger } from '../../events/agent-event.js';
import type { JobKind } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { eventJobId } from '../batches/event-reflection.js';
import type { SignalConfig } from './signal-weights.js';
import { fnv1a32 } from '../kernel/stable-hash.js';
import { topKeywords } from '../kernel/text.js';

const TurnIds = z.array(z.number().int());

/** A session-close summary a signal write committed (see `closeSummaries`). */
const CloseSummarySchema = z.object({ turnIds: TurnIds, urgency: z.number().min(0), requestedAt: z.string() });
export type CloseSummary = z.infer<typeof CloseSummarySchema>;

export const SignalStateSchema = z.object({
  turnsSinceLastBatch: z.number().int().min(0),
  urgencyScore: z.number().min(0),
  lastBatchTurn: z.number().int().min(0),
  lastBatchTimestamp: z.string().nullable(),
  /** Highest turn id counted so far; a turn at or below it is a duplicate or late. */
  lastTurnId: z.number().int().min(0),
  lastTurnTimestamp: z.string().nullable(),
  /** When the service counted the last turn (its clock, not the event's timestamp): the idle rule's "last message". */
  lastSeenAt: z.string().nullable().default(null),
  /**
   * When the user's one pending idle check is due (null: none scheduled yet). A check is
   * pending while this is in the future; once it has come, the check fired or is firing (or
   * was lost), and the next counted turn schedules a new one (see `scheduleIdleCheck`).
   */
  idleCheckDueAt: z.string().nullable().default(null),
  /**
   * The idle summary the last idle-check write committed to (its turns taken out of
   * `summaryTurnIds` by that same write), kept until the next one overwrites it: the check is
   * written first and enqueues after, so a delivery of that check again (same `dueAt`: its
   * identity) after a failed or unknown enqueue enqueues the same job again (same job id, so
   * FIFO deduplication and the reflector's check of the id make it one summary). ≤
   * `summaryMaxTurns` turn ids. Absent in states written before: nothing to send again.
   */
  idleSummary: z.object({ dueAt: z.string(), turnIds: TurnIds, urgency: z.number().min(0) }).optional(),
  /**
   * The session-close summaries the last signal write committed (their turns taken by that
   * write), enqueued after it: a redelivery of that write's messages (`appliedMessages`) sends
   * them again, same job ids. Dropped by the next signal write, which comes after any
   * redelivery of the last one's messages (one FIFO message group per user). Absent: none.
   */
  closeSummaries: z.array(CloseSummarySchema).optional(),
  recentTopics: z.array(z.string()),
  /** Turns counted since the last completed batch, ascending (seed: turns_since_last_batch is its length). */
  unbatchedTurnIds: TurnIds,
  /**
   * The trigger's view: counted turns not yet given to any job, and their urgency. Batches
   * are cut from these, so which turns form a batch depends only on the order of turns,
   * never on how fast the reflector finishes (replays are reproducible).
   */
  unassigned: z
    .object({
      turnIds: TurnIds,
      urgency: z.number().min(0),
      /** agent.event episodes (req R-EPI) waiting for the next batch, which writes their documents. */
      episodeIds: z.array(z.string()).default([]),
    })
    .default({ turnIds: [], urgency: 0, episodeIds: [] }),
  /** Batch jobs enqueued and not yet completed, oldest first. */
  pendingBatches: z.array(z.object({ jobId: z.string(), turnIds: TurnIds, since: z.string(), episodeIds: z.array(z.string()).default([]) })).default([]),
  /** Req R-SUM: messages since the last summary, and which turns it should cover. */
  messagesSinceSummary: z.number().int().min(0).default(0),
  summaryTurnIds: TurnIds.default([]),
  /** Activity index: messages per UTC day (YYYY-MM-DD) of the message timestamps, the `activityDays` most recent only. */
  activity: z.record(z.string(), z.number().int().min(0)).default({}),
  /**
   * Tags of the queue messages the last write folded in (see `messageTag`). A write whose
   * response was lost, or a function that died after it, gets the same messages again:
   * those are already in the state, and folding them again would count them as duplicates.
   */
  appliedMessages: z.array(z.string()).default([]),
  /**
   * The user's TURNLOG is written, so a turn above `lastTurnId` may be stored without
   * a search change mark (docs/search-index.md, "Turns without marks"). Absent: every turn is marked.
   */
  turnLog: z.literal(true).optional(),
  counters: z.object({
    turns: z.number().int().min(0),
    duplicates: z.number().int().min(0),
    late: z.number().int().min(0),
    batchesTriggered: z.number().int().min(0),
    batchesCompleted: z.number().int().min(0),
    summariesTriggered: z.number().int().min(0).default(0),
    /** Turns no batch will reflect on: dropped from `unassigned` at MAX_UNASSIGNED_TURNS (the nightly run still reads them). */
    unassignedDropped: z.number().int().min(0).default(0),
  }),
});
export type SignalState = z.infer<typeof SignalStateSchema>;

export function initialSignalState(): SignalState {
  return {
    turnsSinceLastBatch: 0,
    urgencyScore: 0,
    lastBatchTurn: 0,
    lastBatchTimestamp: null,
    lastTurnId: 0,
    lastTurnTimestamp: null,
    lastSeenAt: null,
    idleCheckDueAt: null,
    recentTopics: [],
    unbatchedTurnIds: [],
    unassigned: { turnIds: [], urgency: 0, episodeIds: [] },
    pendingBatches: [],
    messagesSinceSummary: 0,
    summaryTurnIds: [],
    activity: {},
    appliedMessages: [],
    counters: { turns: 0, duplicates: 0, late: 0, batchesTriggered: 0, batchesCompleted: 0, summariesTriggered: 0, unassignedDropped: 0 },
  };
}

/** A queue message's tag in `appliedMessages`: a short hash of its id (SQS message ids do not change on redelivery). */
export function messageTag(messageId: string): string {
  return fnv1a32(messageId).toString(36);
}

/**
 * Most message tags one write remembers: a write folds one Lambda batch, and Lambda hands a
 * function at most 10 messages of a FIFO queue at once ("For FIFO queues, the maximum is
 * 10": https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html), so the
 * cap never drops a tag of the TurnQueue's batches.
 */
export const MAX_APPLIED_MESSAGES = 10;

/** The state after a write that folds these queue messages: their tags, the newest MAX_APPLIED_MESSAGES. */
export function withAppliedMessages(state: SignalState, messageIds: readonly string[]): SignalState {
  return { ...state, appliedMessages: messageIds.map(messageTag).slice(-MAX_APPLIED_MESSAGES) };
}

/** Parse a stored state; a corrupt one is reported so the caller can reset it with a warning. */
export function parseSignalState(raw: unknown): { state: SignalState; corrupt: boolean; issues?: string } {
  if (raw === undefined || raw === null) return { state: initialSignalState(), corrupt: false };
  const parsed = SignalStateSchema.safeParse(raw);
  if (parsed.success) return { state: parsed.data, corrupt: false };
  return {
    state: initialSignalState(),
    corrupt: true,
    issues: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '),
  };
}

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

/**
 * Longest word kept whole in a topic. A longer one (a pasted key, a base64 blob: the query
 * has no length limit) is kept as its first 32 characters and a hash of the whole, so a
 * topic costs at most a few hundred bytes in `recentTopics` and two different long words
 * still differ (unless their hashes collide, one chance in 2^32).
 */
export const MAX_TOPIC_WORD_CHARS = 40;

/** Most agent.event episodes waiting for a batch; past it the oldest wait no more (they stay stored, without a document). */
export const MAX_WAITING_EPISODES = 50;

export type SignalName =
  | 'topic_repeated'
  | 'user_correction'
  | 'high_confidence_research'
  | 'knowledge_boundary'
  | 'contradiction';

const CORRECTION_PATTERNS: RegExp[] = [
  /\bactually\b/i,
  /\bI meant\b/i,
  /^\s*no\b/i,
  /\bthat(?:'|’)?s (?:not right|wrong|incorrect)\b/i,
  /\bcorrection\b/i,
];

/** The turn's topic for the repetition signal: its three most frequent content words (long ones bounded). */
export function topicOf(turn: Pick<TurnSaved, 'query'>): string {
  return topKeywords(turn.query, 3).map(boundedWord).join(' ');
}

function boundedWord(word: string): string {
  return word.length <= MAX_TOPIC_WORD_CHARS ? word : `${word.slice(0, 32)}~${fnv1a32(word).toString(36)}`;
}

/** Which of the five signals of req R-SIG a turn fires, given the recent topics before it. */
export function detectSignals(
  turn: Pick<TurnSaved, 'query' | 'signals'>,
  recentTopics: readonly string[],
  config: SignalConfig,
): SignalName[] {
  const fired: SignalName[] = [];
  const topic = new Set(topicOf(turn).split(' ').filter(Boolean));
  if (topic.size > 0) {
    const earlier = recentTopics.filter((t) => t.split(' ').some((w) => topic.has(w))).length;
    if (earlier + 1 >= config.topicRepeatCount) fired.push('topic_repeated');
  }
  if (CORRECTION_PATTERNS.some((re) => re.test(turn.query))) fired.push('user_correction');
  const s = turn.signals;
  if (s?.validation === 'APPROVE' && (s.quality ?? 0) >= config.highConfidenceQuality) {
    fired.push('high_confidence_research');
  }
  if (s?.route !== undefined && config.boundaryRoutes.includes(s.route)) fired.push('knowledge_boundary');
  if (s?.contradiction === true) fired.push('contradiction');
  return fired;
}

const WEIGHT_OF: Record<SignalName, keyof SignalConfig['weights']> = {
  topic_repeated: 'topicRepeated',
  user_correction: 'userCorrection',
  high_confidence_research: 'highConfidenceResearch',
  knowledge_boundary: 'knowledgeBoundary',
  contradiction: 'contradiction',
};

/** A reflection the state says is due. */
export interface JobTrigger {
  jobId: string;
  kind: JobKind;
  /** `turn_count`, `urgency`, `pending_timeout`, `session_closed`, `idle`, `event:<trigger>`. */
  trigger: string;
  urgency: number;
  turnIds: number[];
  /** agent.event episodes this batch writes the documents of. */
  episodeIds: string[];
  /** The agent.event's `detail`, for an event batch that has one. */
  eventDetail?: string;
  /** Why an event's job reviews no turn (it reflects on the event's own detail and episodes), for the signal function's log. */
  noTurns?: string;
}

/** One thing arriving on the TurnQueue, as the accumulator sees it. */
export type SignalItem =
  | { kind: 'turn'; turn: Pick<TurnSaved, 'turnId' | 'timestamp' | 'query' | 'signals'> }
  | { kind: 'session_closed'; sessionId: string }
  /** `eventId`: names the job of the event reflected on by itself, when no turn waits (lib/batches/event-reflection.ts). */
  | { kind: 'agent_event'; trigger: AgentEventTrigger; eventId: string; episodeId?: string | undefined; detail?: string | undefined };

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
function agentEvent(state: SignalState, item: Extract<SignalItem, { kind: 'agent_event' }>, config: SignalConfig, now: Date): JobTrigger | { reason: string } {
  // Its episode waits for a batch like a turn (a republished event's only once).
  const id = item.episodeId;
  if (id !== undefined && !state.unassigned.episodeIds.includes(id) && !state.pendingBatches.some((p) => p.episodeIds.includes(id))) {
    state.unassigned.episodeIds = [...state.unassigned.episodeIds, id].slice(-MAX_WAITING_EPISODES);
  }
  const detail = item.detail ? { eventDetail: item.detail } : {};
  if (state.unassigned.turnIds.length === 0) {
    const episodeIds = state.unassigned.episodeIds;
    state.unassigned = { ...state.unassigned, episodeIds: [] };
    return { jobId: eventJobId(item.eventId, state.lastTurnId), kind: 'event', trigger: `event:${item.trigger}`, urgency: 0, turnIds: [], episodeIds, ...detail, noTurns: 'no turn was waiting for a batch' };
  }
  const t = startBatch(state, config, now, `event:${item.trigger}`, 'event');
  if (!t) return { reason: `${state.pendingBatches.length} batches wait for the reflector already (the most there may be): the ${state.unassigned.turnIds.length} waiting turns and any episode go into a later batch; the event's detail is not kept` };
  return { ...t, ...detail };
}

/** A turn seen before (duplicate) or older than the last counted one (late), counted as such; null for a new turn. */
function staleDisposition(state: SignalState, turnId: number, seenHere: Set<number>, known: (turnId: number) => boolean): 'duplicate' | 'late' | null {
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
  state.unassigned = { ...state.unassigned, turnIds: turnIds.slice(dropped), urgency: round2(state.unassigned.urgency + weight) };
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
function startBatch(state: SignalState, config: SignalConfig, now: Date, trigger: string, kind: JobKind): JobTrigger | null {
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
    if (now.getTime() - Date.parse(p.since) < config.pendingBatchTimeoutMs) return p;
    out.push({ jobId: p.jobId, kind: 'batch', trigger: 'pending_timeout', urgency: state.urgencyScore, turnIds: p.turnIds, episodeIds: p.episodeIds });
    return { ...p, since: now.toISOString() };
  });
  return out;
}

/**
 * A summary (req R-SUM) covering the turns since the last one; its counters reset when the
 * job is enqueued, as the seed's trigger does after generating. Null when there is nothing new.
 */
function takeSummary(state: SignalState, kind: 'idle-summary' | 'session-close', trigger: string): JobTrigger | null {
  if (state.summaryTurnIds.length === 0) return null;
  const turnIds = [...state.summaryTurnIds];
  state.summaryTurnIds = [];
  state.messagesSinceSummary = 0;
  state.counters.summariesTriggered += 1;
  return { jobId: summaryJobId(turnIds), kind, trigger, urgency: state.urgencyScore, turnIds, episodeIds: [] };
}

/**
 * The state a signal write puts, with the session-close summaries it commits: `resent` (those
 * of the write before, whose messages came again with these) and those its fold took; none
 * drops the field. Their jobs go out after the write (`closeSummaryTrigger`), so a write that
 * loses to another writer (an idle summary taking the same turns) enqueues none.
 */
export function commitCloseSummaries(state: SignalState, triggers: readonly JobTrigger[], resent: readonly CloseSummary[], requestedAt: string): SignalState {
  const taken = triggers.filter((t) => t.kind === 'session-close').map((t) => ({ turnIds: t.turnIds, urgency: t.urgency, requestedAt }));
  const { closeSummaries: _, ...rest } = state;
  return resent.length + taken.length > 0 ? { ...rest, closeSummaries: [...resent, ...taken] } : rest;
}

/** The job trigger of a committed session-close summary (the same one `takeSummary` made). */
export const closeSummaryTrigger = (s: CloseSummary): JobTrigger => ({ jobId: summaryJobId(s.turnIds), kind: 'session-close', trigger: 'session_closed', urgency: s.urgency, turnIds: s.turnIds, episodeIds: [] });

/** Whether an idle check is on its way (its due time not come yet): a fold schedules none then. */
export const idleCheckPending = (state: Pick<SignalState, 'idleCheckDueAt'>, now: Date): boolean => state.idleCheckDueAt !== null && Date.parse(state.idleCheckDueAt) > now.getTime();

/** The inactivity threshold in milliseconds of the service's clock (`timeScale`: local runs speed it up). */
export const idleThresholdMs = (config: Pick<SignalConfig, 'idleMinutes' | 'timeScale'>): number => (config.idleMinutes * 60_000) / config.timeScale;

/** Clock skew between function instances that the idle rule tolerates: 1 s, or a twentieth of a shorter threshold (local runs speed it up). */
const idleSkewMs = (thresholdMs: number): number => Math.min(1000, thresholdMs / 20);

/** Longest delivery delay SQS allows a message (DelaySeconds 0–900: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html). */
export const MAX_IDLE_CHECK_DELAY_SECONDS = 900;

/** A check to send: its due time (kept in the state) and the delivery delay that gets it there. */
export interface IdleCheckPlan {
  dueAt: string;
  delaySeconds: number;
}

/**
 * The delay that brings a check `waitMs` closer, at most SQS's longest. A local run's `timeScale`
 * shortens that longest delay too, so that a long wait takes as many hops locally as in AWS (each
 * hop is an invocation of the idle function from its own queue: Lambda's recursive loop
 * detection counts them, docs/design.md "Other triggers"). SQS counts whole seconds: at least 1.
 */
const planAt = (now: Date, waitMs: number, config: Pick<SignalConfig, 'timeScale'>): IdleCheckPlan => {
  const longest = Math.max(1, Math.floor(MAX_IDLE_CHECK_DELAY_SECONDS / config.timeScale));
  const delaySeconds = Math.min(longest, Math.max(1, Math.ceil(waitMs / 1000)));
  return { dueAt: new Date(now.getTime() + delaySeconds * 1000).toISOString(), delaySeconds };
};

/**
 * One pending idle check per user, not one per batch of turns. A fold that counted a
 * turn schedules a check only when none is pending — none was ever scheduled, or the pending
 * one's time has come (it fired, is firing, or was lost). The check reschedules itself while the
 * user keeps talking (`idleCheck`), so a quiet window costs one check, plus one per idle
 * threshold the conversation outlasts. Null when a check is pending already.
 */
export function scheduleIdleCheck(state: SignalState, config: SignalConfig, now: Date): { state: SignalState; plan: IdleCheckPlan } | null {
  if (idleCheckPending(state, now)) return null;
  const plan = planAt(now, idleThresholdMs(config), config);
  return { state: { ...state, idleCheckDueAt: plan.dueAt }, plan };
}

export type IdleCheckResult =
  /** A summary to commit: `state` (to write first) takes its turns and records it in `idleSummary`; enqueue `trigger` after the write. */
  | { state: SignalState; trigger: JobTrigger }
  /** This check committed its summary already (a delivery again, after a failed or unknown enqueue): the same job again, nothing written. */
  | { resend: JobTrigger }
  /** The user spoke since the check was sent: the same check again (its `dueAt` kept: that is its identity), delayed until the threshold after their last message passes. */
  | { reschedule: { delaySeconds: number } }
  /** `superseded`: not the user's pending check (a newer one is); `newer_message`: an older check (no `dueAt`) whose turn is not the last. */
  | { skipped: 'newer_message' | 'superseded' | 'not_idle_yet' | 'too_few_messages' };

/**
 * The idle rule of req R-SUM-1, checked when the user's idle check fires: both
 * (1) at least `idleMinutes` since the user's last message (counted by the service's clock), and
 * (2) at least `idleMinMessages` messages since the last summary.
 * A check that is not the pending one stops; the pending one reschedules itself until (1)
 * holds, without a state write (so the state's writes stay one per batch and per summary,
 * however the timing falls). While a put-back check waits, its `dueAt` has passed, so the next
 * counted turn sends a fresh check and the old one stops as superseded when it fires: at most
 * two in flight. A check sent before `dueAt` existed keeps the old rule: its turn must be the last.
 * A summary is committed by the state write before its job is enqueued (`idleSummary`): a check
 * that finds its own summary there (same `dueAt`) was delivered again and sends that job again,
 * whatever happened since; a write that lost to another writer enqueued nothing.
 */
export function idleCheck(prior: SignalState, check: { lastTurnId: number; dueAt?: string }, config: SignalConfig, now: Date): IdleCheckResult {
  const thresholdMs = idleThresholdMs(config);
  const waitMs = Date.parse(prior.lastSeenAt ?? '1970-01-01T00:00:00Z') + thresholdMs - now.getTime();
  const skewMs = idleSkewMs(thresholdMs);
  // Before anything else (a turn since may have superseded this check): the summary it committed.
  const committed = prior.idleSummary;
  if (check.dueAt !== undefined && committed?.dueAt === check.dueAt) return { resend: idleSummaryTrigger(committed.turnIds, committed.urgency) };
  if (check.dueAt === undefined) {
    if (prior.lastTurnId !== check.lastTurnId) return { skipped: 'newer_message' };
    if (waitMs > skewMs) return { skipped: 'not_idle_yet' };
  } else {
    if (prior.idleCheckDueAt !== check.dueAt) return { skipped: 'superseded' };
    // A last message more than a threshold ahead of this clock (clocks that disagree, or a local
    // replay that set its clock back) is not waited for: the check stops, as a stale one did.
    if (waitMs > thresholdMs + skewMs) return { skipped: 'not_idle_yet' };
    if (waitMs > skewMs) return { reschedule: { delaySeconds: planAt(now, waitMs, config).delaySeconds } };
  }
  if (prior.messagesSinceSummary < config.idleMinMessages) return { skipped: 'too_few_messages' };
  const state = structuredClone(prior);
  const trigger = takeSummary(state, 'idle-summary', 'idle');
  if (!trigger) return { skipped: 'too_few_messages' };
  // An older check (no dueAt) has no identity to find its summary by: none recorded.
  if (check.dueAt !== undefined) state.idleSummary = { dueAt: check.dueAt, turnIds: trigger.turnIds, urgency: trigger.urgency };
  return { state, trigger };
}

const idleSummaryTrigger = (turnIds: number[], urgency: number): JobTrigger => ({ jobId: summaryJobId(turnIds), kind: 'idle-summary', trigger: 'idle', urgency, turnIds, episodeIds: [] });

function recordActivity(state: SignalState, timestamp: string, days: number): void {
  const day = timestamp.slice(0, 10);
  state.activity[day] = (state.activity[day] ?? 0) + 1;
  const keep = Object.keys(state.activity).sort().slice(-days);
  state.activity = Object.fromEntries(keep.map((d) => [d, state.activity[d] ?? 0]));
}

/** Deterministic job id of a batch: the turns it covers. */
export function batchJobId(turnIds: readonly number[]): string {
  return `batch-${turnIds[0] ?? 0}-${turnIds[turnIds.length - 1] ?? 0}`;
}

/** Deterministic job id of a summary: the turns it covers. */
export function summaryJobId(turnIds: readonly number[]): string {
  return `summary-${turnIds[0] ?? 0}-${turnIds[turnIds.length - 1] ?? 0}`;
}

/**
 * A batch finished (whatever its items): the seed's counters (turns_since_last_batch,
 * urgency_score) reset as req R-SIG-3 says — after completion, not at enqueue — keeping
 * the turns that arrived while it ran (their count and their urgency). Returns null when the state no longer waits for
 * this job (already completed: a redelivery).
 */
export function completeBatch(prior: SignalState, jobId: string, turnIds: readonly number[], now: Date): SignalState | null {
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
