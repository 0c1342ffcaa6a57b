/**
 * Ingest a batch of TurnQueue records (the signal function's use case):
 * validate (resolving claim checks) → keep rejects → per user: store turns, fold signals
 * and control events, enqueue the jobs that fire, schedule an idle check when
 * none is pending, and write the user's signal state once.
 *
 * Order per user, chosen for crash safety: documents and index first (idempotent; with the
 * search change marks of the turns at or below the state's lastTurnId only, then the user's
 * TURNLOG once: `turnChangeMarks`), then batch and event jobs (FIFO dedup id = job id, so a
 * retry cannot enqueue twice within SQS's 5-minute window), then the state (conditional on its
 * version), then the session-close summaries that write committed (`closeSummaries`: a write
 * that lost to an idle summary of the same turns enqueues none; a redelivery of its messages
 * sends them again). A crash anywhere replays cleanly.
 */
import { type TurnQueueMessage, TurnQueueMessageSchema } from '../../events/index.js';
import type { Job } from '../../events/job.js';
import { TurnClaimCheckSchema } from '../../events/turn-claim-check.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import {
  type AccumulateResult,
  accumulate,
  type CloseSummary,
  closeSummaryTrigger,
  commitCloseSummaries,
  type IdleCheckPlan,
  idleCheckPending,
  type JobTrigger,
  messageTag,
  parseSignalState,
  scheduleIdleCheck,
  type SignalItem,
  type SignalState,
  withAppliedMessages,
} from '../signals/signal-accumulator.js';
import type { SignalConfig } from '../signals/signal-weights.js';
import { type EventEpisode, eventEpisodeOf } from './episodes.js';
import { eventId } from '../batches/event-reflection.js';
import { observationsOf } from '../sources/source-reliability.js';
import { addCounts, type RedactionCounts, type RedactionPolicy, redact, redactFields } from './redaction.js';
import type { ClaimCheckStore, RejectedEventLog, TurnStore } from './turn.port.js';
import type { ForgetLog } from '../forget/forget.port.js';
import type { UserSettingsStore } from '../settings/user-settings.port.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';
import type { SourceReliabilityStore } from '../sources/source-reliability.port.js';
import type { JobQueue } from '../jobs/job-queue.port.js';
import type { IdleScheduler, SignalStateStore } from '../signals/signal-state.port.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import { forgottenBefore } from '../forget/forget-user.js';
import { clearSessionEphemera } from '../tiers/tier-review.js';
import { withUserIdle } from '../settings/user-settings.js';
import { type FieldError, fieldErrors } from '../kernel/parse-or-keep.js';

export interface IngestRecord {
  messageId: string;
  body: string;
}

export interface IngestDeps {
  turns: TurnStore;
  signalState: SignalStateStore;
  jobs: JobQueue;
  idle: IdleScheduler;
  claims: ClaimCheckStore;
  rejected: RejectedEventLog;
  /** Where the sources turns report are counted (req R-SRC). */
  sources: SourceReliabilityStore;
  /** The user's own settings: their inactivity threshold (lib/settings/user-settings.ts). */
  settings: Pick<UserSettingsStore, 'get'>;
  /** Tier entries: a session's close clears its ephemeral ones (lib/tiers/tier-review.ts). */
  items: Pick<MemoryItemStore, 'get' | 'move' | 'sessionEphemera'>;
  clock: Clock;
  log: Log;
  config: SignalConfig;
  /** What is redacted before a turn is stored or sent to a model (lib/turns/redaction.ts). */
  redaction: RedactionPolicy;
  /** Name of the source, recorded with rejects (e.g. the queue name). */
  source: string;
  /** Users' erasures (lib/forget/forget-user.ts): read only for a user with no signal state. */
  forgets: Pick<ForgetLog, 'latest'>;
}

export interface IngestResult {
  /** Records to hand back to the queue (their user's processing failed). */
  failedMessageIds: string[];
  accepted: number;
  duplicates: number;
  late: number;
  rejected: number;
  controlEvents: number;
  /** Messages the signal state had folded in already (their earlier delivery's write landed): nothing done. */
  alreadyApplied: number;
  jobs: Job[];
  /** Secrets and personal identifiers redacted, by kind (never their values). */
  redacted: RedactionCounts;
  /** Messages from before their user was forgotten, arriving after: dropped. */
  forgotten: number;
}

const MAX_STATE_ATTEMPTS = 5;

export async function ingestTurns(records: readonly IngestRecord[], deps: IngestDeps): Promise<IngestResult> {
  const result: IngestResult = { failedMessageIds: [], accepted: 0, duplicates: 0, late: 0, rejected: 0, controlEvents: 0, alreadyApplied: 0, jobs: [], redacted: {}, forgotten: 0 };
  const byUser = await groupByUser(records, deps, result);
  await ingestByUser(byUser, deps, result);
  return result;
}

type UserItems = Array<{ messageId: string; message: TurnQueueMessage }>;

/**
 * The records parsed and redacted, grouped by user in arrival order. A record that must be
 * retried goes back to the queue (in `result.failedMessageIds`) with its user's whole group;
 * an invalid one is kept as rejected.
 */
async function groupByUser(records: readonly IngestRecord[], deps: IngestDeps, result: IngestResult): Promise<Map<string, UserItems>> {
  const byUser = new Map<string, UserItems>();
  // Secrets (and, by stage, personal identifiers) are gone before anything is
  // stored — the turn, its episode, a kept reject — and so before any prompt is built from it.
  const parsed = await Promise.all(records.map(async (r) => ({ record: r, parsed: redactParsed(await parseRecord(r.body, deps.claims), deps.redaction, result.redacted) })));
  // FIFO: a record that must be retried sends its user's whole group back, or the later
  // turns would overtake it (and it would come back "late").
  const retryUsers = new Set<string>();
  for (const { parsed: p } of parsed) if (!p.ok && p.retryable && p.userId) retryUsers.add(p.userId);
  for (const { record, parsed: p } of parsed) {
    const userId = p.ok ? p.message.userId : p.userId;
    if (p.ok && !retryUsers.has(p.message.userId)) {
      const list = byUser.get(p.message.userId) ?? [];
      list.push({ messageId: record.messageId, message: p.message });
      byUser.set(p.message.userId, list);
      continue;
    }
    if (p.ok || p.retryable || (userId !== undefined && retryUsers.has(userId))) {
      deps.log.error('record goes back to the queue', { messageId: record.messageId, userId, errors: p.ok ? [] : p.errors });
      result.failedMessageIds.push(record.messageId);
      continue;
    }
    await keepRejected(record, p.errors, deps, result);
  }
  return byUser;
}

/** An invalid record is kept (redacted) for a person to look at; if that fails, it goes back to the queue. */
async function keepRejected(record: IngestRecord, errors: FieldError[], deps: IngestDeps, result: IngestResult): Promise<void> {
  try {
    await deps.rejected.keep({
      source: deps.source,
      messageId: record.messageId,
      receivedAt: deps.clock.now().toISOString(),
      errors,
      body: redactText(record.body, deps.redaction, result.redacted),
    });
    result.rejected += 1;
    deps.log.warn('record rejected', { messageId: record.messageId, errors });
  } catch (error) {
    deps.log.error('could not keep a rejected record; it goes back to the queue', { messageId: record.messageId, error: String(error) });
    result.failedMessageIds.push(record.messageId);
  }
}

/**
 * Every user's records ingested. Fast path: all users' turns stored together (one
 * BatchWriteItem per 25 index entries). If anything in it fails, each user is retried on its
 * own, so one user's failure never sinks another's records.
 */
async function ingestByUser(byUser: ReadonlyMap<string, UserItems>, deps: IngestDeps, result: IngestResult): Promise<void> {
  const users = [...byUser.entries()];
  let batched: Map<string, UserOutcome> | null = null;
  if (users.length > 1) {
    try {
      batched = await ingestUsersTogether(users, deps);
    } catch (error) {
      deps.log.warn('batched ingestion failed; retrying user by user', { error: error instanceof Error ? error.message : String(error) });
    }
  }
  await Promise.all(
    users.map(async ([userId, items]) => {
      const done = batched?.get(userId);
      if (done) return tally(result, items, done);
      try {
        tally(result, items, await ingestUser(userId, items, deps));
      } catch (error) {
        // FIFO: every message of this user goes back, so their order is kept.
        deps.log.error('ingestion failed for a user; their records go back to the queue', {
          userId,
          records: items.length,
          error: error instanceof Error ? error.message : String(error),
        });
        result.failedMessageIds.push(...items.map((i) => i.messageId));
      }
    }),
  );
}

/** One user's outcome counted into the result. */
function tally(result: IngestResult, items: ReadonlyArray<{ messageId: string }>, outcome: UserOutcome): void {
  for (const o of outcome.outcomes) {
    if (o.disposition === 'counted') result.accepted += 1;
    else if (o.disposition === 'duplicate') result.duplicates += 1;
    else result.late += 1;
  }
  result.forgotten += outcome.forgotten ?? 0;
  if (outcome.alreadyApplied) result.alreadyApplied += items.length - (outcome.forgotten ?? 0);
  else result.controlEvents += items.length - outcome.outcomes.length - (outcome.forgotten ?? 0);
  result.jobs.push(...outcome.jobs);
}

type UserOutcome = AccumulateResult & { jobs: Job[]; alreadyApplied?: boolean; forgotten?: number };

interface Fold {
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

interface UserMessage {
  messageId: string;
  message: TurnQueueMessage;
}

/** Load, fold and decide for one user, without writing anything. */
async function foldUser(userId: string, items: readonly UserMessage[], deps: IngestDeps): Promise<Fold> {
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
  if (fresh.length === 0) {
    const after = resent.map((c) => jobOf(userId, closeSummaryTrigger(c), c.requestedAt));
    return { userId, version: stored.version, folded: { state: prior, outcomes: [], triggers: [], newActiveDays: [], eventsNotReflected: [] }, toStore: [], marked: [], openLog: null, episodes: [], jobs: [], after, idleCheck: null, alreadyApplied: true, closed: [], forgotten };
  }
  const messages = fresh.map((i) => i.message);
  const turns = messages.filter((m): m is TurnSaved => m.type === 'turn.saved');
  const older = turns.filter((t) => t.turnId <= prior.lastTurnId).map((t) => t.turnId);
  const known = older.length > 0 ? await deps.turns.indexedTurnIds(userId, older) : new Set<number>();
  const now = deps.clock.now();
  const accumulated = accumulate(prior, messages.map(toItem), deps.config, now, (id) => known.has(id));
  const committed = commitCloseSummaries(accumulated.state, accumulated.triggers, resent, now.toISOString());
  const withTags = withAppliedMessages(committed, fresh.map((i) => i.messageId));
  const counted = accumulated.outcomes.some((o) => o.disposition === 'counted');
  // The user's own inactivity threshold, read only when a check is to be scheduled (once per quiet window).
  const idle = counted && !idleCheckPending(withTags, now) ? scheduleIdleCheck(withTags, withUserIdle(deps.config, await deps.settings.get(userId)), now) : null;
  const folded = { ...accumulated, state: { ...(idle?.state ?? withTags), turnLog: true as const } };
  const keep = new Set(folded.outcomes.filter((o) => o.disposition !== 'duplicate').map((o) => o.turnId));
  const jobs = folded.triggers.filter((t) => t.kind !== 'session-close').map((t) => jobOf(userId, t, now.toISOString()));
  const after = (committed.closeSummaries ?? []).map((c) => jobOf(userId, closeSummaryTrigger(c), c.requestedAt));
  const episodes = messages.flatMap((m) => (m.type === 'agent.event' ? (eventEpisodeOf(m) ?? []) : []));
  const closed = messages.flatMap((m) => (m.type === 'session.closed' ? [{ sessionId: m.sessionId, at: m.timestamp }] : []));
  const toStore = dedupeByTurnId(turns.filter((t) => keep.has(t.turnId)));
  return { userId, version: stored.version, folded, toStore, marked: turnChangeMarks(prior, turns), openLog: prior.turnLog ? null : prior.lastTurnId + 1, episodes, jobs, after, idleCheck: idle?.plan ?? null, alreadyApplied: false, closed, forgotten };
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
function turnChangeMarks(prior: SignalState, turns: readonly TurnSaved[]): Array<{ userId: string; turnId: number }> {
  const ids = new Set(turns.filter((t) => !prior.turnLog || t.turnId <= prior.lastTurnId).map((t) => t.turnId));
  return [...ids].map((turnId) => ({ userId: turns[0]?.userId ?? '', turnId }));
}

/** A fold's turns and marks, then its TURNLOG if this cycle records it (before the state put that says it is recorded). */
async function storeTurns(folds: readonly Fold[], deps: IngestDeps): Promise<void> {
  const toStore = folds.flatMap((f) => f.toStore);
  const marked = folds.flatMap((f) => f.marked);
  if (toStore.length > 0 || marked.length > 0) await deps.turns.saveTurns(toStore, marked);
  await Promise.all(folds.flatMap((f) => (f.openLog === null ? [] : [deps.turns.openTurnLog(f.userId, f.openLog)])));
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

/** The sources a fold's new turns report, counted once per turn and position (after the turns are stored). */
async function recordSources(f: Fold, deps: IngestDeps): Promise<void> {
  const observations = f.toStore.flatMap(observationsOf);
  if (observations.length > 0) await deps.sources.record(f.userId, observations);
}

/**
 * The activity markers of the folds' new days, all users' in one request, before their
 * states: a state written first and a crash after it would leave them unwritten, since the
 * redelivered messages are then already applied.
 */
async function markActivity(folds: readonly Fold[], deps: IngestDeps): Promise<void> {
  const marks = folds.flatMap((f) => (f.alreadyApplied ? [] : f.folded.newActiveDays.map((day) => ({ userId: f.userId, day }))));
  if (marks.length > 0) await deps.signalState.markActive(marks);
}

/**
 * Jobs and the idle check of a fold, if it sends one, and the closed sessions' ephemeral
 * entries cleared (after its turns are stored, before its state: a crash between redoes them,
 * and a cleared entry stays cleared).
 */
async function announce(f: Fold, deps: IngestDeps): Promise<void> {
  for (const c of f.closed) {
    const cleared = await clearSessionEphemera(deps.items, f.userId, c.sessionId, new Date(c.at));
    if (cleared > 0) deps.log.info('ephemeral entries cleared at session close', { userId: f.userId, sessionId: c.sessionId, cleared });
  }
  for (const job of f.jobs) await deps.jobs.enqueue(job);
  if (f.idleCheck) {
    const { dueAt, delaySeconds } = f.idleCheck;
    await deps.idle.schedule({ type: 'idle.check', version: 1, userId: f.userId, lastTurnId: f.folded.state.lastTurnId, enqueuedAt: deps.clock.now().toISOString(), dueAt }, delaySeconds);
  }
}

/**
 * The summaries a fold commits, after its state write (or, for messages already applied, those
 * their write committed): FIFO deduplication by job id drops a copy sent again within 5 minutes
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html),
 * and the reflector skips a summary whose id exists.
 */
async function announceCommitted(f: Fold, deps: IngestDeps): Promise<Job[]> {
  for (const job of f.after) await deps.jobs.enqueue(job);
  return [...f.jobs, ...f.after];
}

function logCommitted(f: Fold, deps: IngestDeps): void {
  for (const o of f.folded.outcomes) {
    deps.log.debug('turn signals', { userId: f.userId, turnId: o.turnId, disposition: o.disposition, signals: o.signals });
  }
  for (const job of [...f.jobs, ...f.after]) {
    deps.log.info('job enqueued', { userId: f.userId, jobId: job.jobId, kind: job.kind, trigger: job.trigger, urgency: job.urgency });
  }
  // Req R-EVT: no agent.event passes silently — one reflecting on itself says so, one that fired nothing says why.
  for (const t of f.folded.triggers) {
    if (t.noTurns) deps.log.info('agent.event reflects on its own detail', { userId: f.userId, jobId: t.jobId, trigger: t.trigger, reason: t.noTurns, detail: t.eventDetail !== undefined, episodes: t.episodeIds.length });
  }
  for (const e of f.folded.eventsNotReflected) deps.log.warn('agent.event fired no reflection', { userId: f.userId, trigger: `event:${e.trigger}`, reason: e.reason });
}

/**
 * Several users at once: folds in parallel, one saveTurns for everybody, then each user's
 * jobs and conditional state write. Users whose state changed meanwhile are redone alone.
 */
async function ingestUsersTogether(users: ReadonlyArray<readonly [string, UserMessage[]]>, deps: IngestDeps): Promise<Map<string, UserOutcome>> {
  const folds = await Promise.all(users.map(([userId, items]) => foldUser(userId, items, deps)));
  await storeTurns(folds, deps);
  const episodes = folds.flatMap((f) => f.episodes);
  if (episodes.length > 0) await deps.turns.saveEventEpisodes(episodes);
  await markActivity(folds, deps);
  const out = new Map<string, UserOutcome>();
  await Promise.all(
    folds.map(async (f) => {
      if (f.alreadyApplied) {
        out.set(f.userId, { ...f.folded, jobs: await announceCommitted(f, deps), alreadyApplied: true, forgotten: f.forgotten });
        return;
      }
      await recordSources(f, deps);
      await announce(f, deps);
      if (await deps.signalState.save(f.userId, f.folded.state, f.version)) {
        const jobs = await announceCommitted(f, deps);
        logCommitted(f, deps);
        out.set(f.userId, { ...f.folded, jobs, forgotten: f.forgotten });
      }
    }),
  );
  return out;
}

const toItem = (m: TurnQueueMessage): SignalItem => {
  if (m.type === 'turn.saved') return { kind: 'turn', turn: m };
  if (m.type === 'session.closed') return { kind: 'session_closed', sessionId: m.sessionId };
  return { kind: 'agent_event', trigger: m.trigger, eventId: eventId(m), ...(m.detail ? { detail: m.detail } : {}), ...(m.episode ? { episodeId: eventEpisodeOf(m)?.episodeId } : {}) };
};

async function ingestUser(userId: string, items: UserMessage[], deps: IngestDeps): Promise<UserOutcome> {
  for (let attempt = 1; ; attempt++) {
    const f = await foldUser(userId, items, deps);
    if (f.alreadyApplied) return { ...f.folded, jobs: await announceCommitted(f, deps), alreadyApplied: true, forgotten: f.forgotten };
    await storeTurns([f], deps);
    if (f.episodes.length > 0) await deps.turns.saveEventEpisodes(f.episodes);
    await markActivity([f], deps);
    await recordSources(f, deps);
    await announce(f, deps);
    if (await deps.signalState.save(userId, f.folded.state, f.version)) {
      const jobs = await announceCommitted(f, deps);
      logCommitted(f, deps);
      return { ...f.folded, jobs, forgotten: f.forgotten };
    }
    if (attempt >= MAX_STATE_ATTEMPTS) throw new Error(`signal state of ${userId} kept changing under us (${attempt} attempts)`);
    deps.log.info('signal state changed concurrently; recomputing', { userId, attempt });
  }
}

function dedupeByTurnId(turns: TurnSaved[]): TurnSaved[] {
  const seen = new Set<number>();
  return turns.filter((t) => {
    if (seen.has(t.turnId)) return false;
    seen.add(t.turnId);
    return true;
  });
}

export type ParsedRecord =
  | { ok: true; message: TurnQueueMessage }
  /** `userId` when it could be read (a claim check names its user before its payload is fetched). */
  | { ok: false; retryable: boolean; errors: FieldError[]; userId?: string };

/** A parsed message with its free text redacted (counted into `counts`). */
function redactParsed(p: ParsedRecord, policy: RedactionPolicy, counts: RedactionCounts): ParsedRecord {
  if (!p.ok) return p;
  const r = redactFields(p.message, policy);
  addCounts(counts, r.counts);
  return { ...p, message: r.value };
}

function redactText(text: string, policy: RedactionPolicy, counts: RedactionCounts): string {
  const r = redact(text, policy);
  addCounts(counts, r.counts);
  return r.text;
}

/**
 * JSON + schema validation with errors that name the failing field. A claim check is
 * resolved first; its payload must be the same user's same turn. A claim that cannot be
 * fetched for a transient reason is retryable; a missing one is rejected.
 */
export async function parseRecord(body: string, claims: ClaimCheckStore): Promise<ParsedRecord> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, retryable: false, errors: [{ path: '(body)', message: `not JSON: ${(error as Error).message}` }] };
  }
  if (typeof value === 'object' && value !== null && 'payloadRef' in value) {
    const claim = TurnClaimCheckSchema.safeParse(value);
    if (!claim.success) return { ok: false, retryable: false, errors: fieldErrors(claim.error.issues) };
    let text: string;
    try {
      text = await claims.fetch(claim.data.payloadRef.key);
    } catch (error) {
      // Gone for good: rejected and kept. Anything else — throttling, a timeout, or AccessDenied,
      // which is what S3 answers for a missing key to a caller that may not list the bucket (the
      // signal function may not) — is retried, then parked in the DLQ with this reason.
      const name = (error as Error).name;
      const missing = name === 'NoSuchKey';
      const reason = name === 'AccessDenied' ? 'not readable by this function (AccessDenied: missing, or not allowed)' : `unreadable: ${name}`;
      return { ok: false, retryable: !missing, userId: claim.data.userId, errors: [{ path: 'payloadRef.key', message: `claim check ${reason}` }] };
    }
    const inner = await parseRecord(text, claims);
    if (!inner.ok) return { ok: false, retryable: inner.retryable, errors: inner.errors.map((e) => ({ ...e, path: `payloadRef:${e.path}` })) };
    const m = inner.message;
    if (m.type !== 'turn.saved' || m.userId !== claim.data.userId || m.turnId !== claim.data.turnId) {
      // Name the claim's fields the payload contradicts, not only the reference.
      const contradicted: FieldError[] = [];
      if (m.type !== 'turn.saved') contradicted.push({ path: 'type', message: `the claimed payload is a ${m.type}, not a turn.saved` });
      if (m.userId !== claim.data.userId) contradicted.push({ path: 'userId', message: 'the claimed payload is another user\'s' });
      if (m.type === 'turn.saved' && m.turnId !== claim.data.turnId) contradicted.push({ path: 'turnId', message: `the claimed payload is turn ${m.turnId}, not ${claim.data.turnId}` });
      return { ok: false, retryable: false, errors: [{ path: 'payloadRef.key', message: 'the claimed payload is not this user\'s turn' }, ...contradicted] };
    }
    return inner;
  }
  const parsed = TurnQueueMessageSchema.safeParse(value);
  if (parsed.success) return { ok: true, message: parsed.data };
  return { ok: false, retryable: false, errors: fieldErrors(parsed.error.issues) };
}
