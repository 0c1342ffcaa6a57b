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
import type { TurnQueueMessage } from '../../events/index.js';
import type { Job } from '../../events/job.js';
import type { AccumulateResult } from '../signals/signal-accumulator.js';
import { observationsOf } from '../sources/source-reliability.js';
import { closeSessionEphemera } from '../tiers/tier-review.js';
import type { FieldError } from '../kernel/parse-or-keep.js';
import type { IngestDeps } from './ingest-deps.js';
import { type Fold, foldUser, type UserMessage } from './fold-user.js';
import { parseRecord, redactParsed, redactText } from './parse-record.js';
import type { IngestRecord, IngestResult } from './ingest-deps.js';

const MAX_STATE_ATTEMPTS = 5;

export async function ingestTurns(records: readonly IngestRecord[], deps: IngestDeps): Promise<IngestResult> {
  const result: IngestResult = {
    failedMessageIds: [],
    accepted: 0,
    duplicates: 0,
    late: 0,
    rejected: 0,
    controlEvents: 0,
    alreadyApplied: 0,
    jobs: [],
    redacted: {},
    forgotten: 0,
  };
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
async function groupByUser(
  records: readonly IngestRecord[],
  deps: IngestDeps,
  result: IngestResult,
): Promise<Map<string, UserItems>> {
  const byUser = new Map<string, UserItems>();
  // Secrets (and, by stage, personal identifiers) are gone before anything is
  // stored — the turn, its episode, a kept reject — and so before any prompt is built from it.
  const parsed = await Promise.all(
    records.map(async (r) => ({
      record: r,
      parsed: redactParsed(await parseRecord(r.body, deps.claims), deps.redaction, result.redacted),
    })),
  );
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
      deps.log.error('record goes back to the queue', {
        messageId: record.messageId,
        userId,
        errors: p.ok ? [] : p.errors,
      });
      result.failedMessageIds.push(record.messageId);
      continue;
    }
    await keepRejected(record, p.errors, deps, result);
  }
  return byUser;
}

/** An invalid record is kept (redacted) for a person to look at; if that fails, it goes back to the queue. */
async function keepRejected(
  record: IngestRecord,
  errors: FieldError[],
  deps: IngestDeps,
  result: IngestResult,
): Promise<void> {
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
    deps.log.error('could not keep a rejected record; it goes back to the queue', {
      messageId: record.messageId,
      error: String(error),
    });
    result.failedMessageIds.push(record.messageId);
  }
}

/**
 * Every user's records ingested. Fast path: all users' turns stored together (one
 * BatchWriteItem per 25 index entries). If anything in it fails, each user is retried on its
 * own, so one user's failure never sinks another's records.
 */
async function ingestByUser(
  byUser: ReadonlyMap<string, UserItems>,
  deps: IngestDeps,
  result: IngestResult,
): Promise<void> {
  const users = [...byUser.entries()];
  let batched: Map<string, UserOutcome> | null = null;
  if (users.length > 1) {
    try {
      batched = await ingestUsersTogether(users, deps);
    } catch (error) {
      deps.log.warn('batched ingestion failed; retrying user by user', {
        error: error instanceof Error ? error.message : String(error),
      });
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

/** A fold's turns and marks, then its TURNLOG if this cycle records it (before the state put that says it is recorded). */
async function storeTurns(folds: readonly Fold[], deps: IngestDeps): Promise<void> {
  const toStore = folds.flatMap((f) => f.toStore);
  const marked = folds.flatMap((f) => f.marked);
  if (toStore.length > 0 || marked.length > 0) await deps.turns.saveTurns(toStore, marked);
  await Promise.all(folds.flatMap((f) => (f.openLog === null ? [] : [deps.turns.openTurnLog(f.userId, f.openLog)])));
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
  const marks = folds.flatMap((f) =>
    f.alreadyApplied ? [] : f.folded.newActiveDays.map((day) => ({ userId: f.userId, day })),
  );
  if (marks.length > 0) await deps.signalState.markActive(marks);
}

/**
 * Jobs and the idle check of a fold, if it sends one, and the closed sessions' ephemeral
 * entries promoted when they matter and cleared otherwise (req R-TIER-11; after its turns are
 * stored, before its state: a crash between redoes them, and a moved entry stays moved).
 */
async function announce(f: Fold, deps: IngestDeps): Promise<void> {
  for (const c of f.closed) {
    const done = await closeSessionEphemera(deps.items, f.userId, c.sessionId, new Date(c.at), deps.tierPolicy);
    if (done.promoted + done.cleared > 0)
      deps.log.info('ephemeral entries closed at session close', { userId: f.userId, sessionId: c.sessionId, ...done });
  }
  for (const job of f.jobs) await deps.jobs.enqueue(job);
  if (f.idleCheck) {
    const { dueAt, delaySeconds } = f.idleCheck;
    await deps.idle.schedule(
      {
        type: 'idle.check',
        version: 1,
        userId: f.userId,
        lastTurnId: f.folded.state.lastTurnId,
        enqueuedAt: deps.clock.now().toISOString(),
        dueAt,
      },
      delaySeconds,
    );
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
    deps.log.debug('turn signals', {
      userId: f.userId,
      turnId: o.turnId,
      disposition: o.disposition,
      signals: o.signals,
    });
  }
  for (const job of [...f.jobs, ...f.after]) {
    deps.log.info('job enqueued', {
      userId: f.userId,
      jobId: job.jobId,
      kind: job.kind,
      trigger: job.trigger,
      urgency: job.urgency,
    });
  }
  // Req R-EVT: no agent.event passes silently — one reflecting on itself says so, one that fired nothing says why.
  for (const t of f.folded.triggers) {
    if (t.noTurns)
      deps.log.info('agent.event reflects on its own detail', {
        userId: f.userId,
        jobId: t.jobId,
        trigger: t.trigger,
        reason: t.noTurns,
        detail: t.eventDetail !== undefined,
        episodes: t.episodeIds.length,
      });
  }
  for (const e of f.folded.eventsNotReflected)
    deps.log.warn('agent.event fired no reflection', {
      userId: f.userId,
      trigger: `event:${e.trigger}`,
      reason: e.reason,
    });
}

/**
 * Several users at once: folds in parallel, one saveTurns for everybody, then each user's
 * jobs and conditional state write. Users whose state changed meanwhile are redone alone.
 */
async function ingestUsersTogether(
  users: ReadonlyArray<readonly [string, UserMessage[]]>,
  deps: IngestDeps,
): Promise<Map<string, UserOutcome>> {
  const folds = await Promise.all(users.map(([userId, items]) => foldUser(userId, items, deps)));
  await storeTurns(folds, deps);
  const episodes = folds.flatMap((f) => f.episodes);
  if (episodes.length > 0) await deps.turns.saveEventEpisodes(episodes);
  await markActivity(folds, deps);
  const out = new Map<string, UserOutcome>();
  await Promise.all(
    folds.map(async (f) => {
      if (f.alreadyApplied) {
        out.set(f.userId, {
          ...f.folded,
          jobs: await announceCommitted(f, deps),
          alreadyApplied: true,
          forgotten: f.forgotten,
        });
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

async function ingestUser(userId: string, items: UserMessage[], deps: IngestDeps): Promise<UserOutcome> {
  for (let attempt = 1; ; attempt++) {
    const f = await foldUser(userId, items, deps);
    if (f.alreadyApplied)
      return { ...f.folded, jobs: await announceCommitted(f, deps), alreadyApplied: true, forgotten: f.forgotten };
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
    if (attempt >= MAX_STATE_ATTEMPTS)
      throw new Error(`signal state of ${userId} kept changing under us (${attempt} attempts)`);
    deps.log.info('signal state changed concurrently; recomputing', { userId, attempt });
  }
}
