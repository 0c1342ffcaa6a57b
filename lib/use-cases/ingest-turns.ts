/**
 * Ingest a batch of turn.saved records (the signal function's use case):
 * validate → keep rejects → per user: store turns, fold signals, enqueue triggered
 * reflection jobs, write the user's signal state once.
 *
 * Order per user, chosen for crash safety: documents and index first (idempotent), then
 * jobs (FIFO dedup id = job id, so a retry cannot enqueue twice within SQS's 5-minute
 * window), then the state (conditional on its version). A crash anywhere replays cleanly.
 */
import type { ReflectionJob } from '../../events/reflection-job.js';
import { type TurnSaved, TurnSavedSchema } from '../../events/turn-saved.js';
import { accumulate, type AccumulateResult, parseSignalState } from '../domain/signal-accumulator.js';
import type { SignalConfig } from '../domain/signal-weights.js';
import type { Clock, JobQueue, Log, RejectedEventLog, SignalStateStore, TurnStore } from '../ports.js';

export interface IngestRecord {
  messageId: string;
  body: string;
}

export interface IngestDeps {
  turns: TurnStore;
  signalState: SignalStateStore;
  jobs: JobQueue;
  rejected: RejectedEventLog;
  clock: Clock;
  log: Log;
  config: SignalConfig;
  /** Name of the source, recorded with rejects (e.g. the queue name). */
  source: string;
}

export interface IngestResult {
  /** Records to hand back to the queue (their user's processing failed). */
  failedMessageIds: string[];
  accepted: number;
  duplicates: number;
  late: number;
  rejected: number;
  jobs: ReflectionJob[];
}

const MAX_STATE_ATTEMPTS = 5;

export async function ingestTurns(records: readonly IngestRecord[], deps: IngestDeps): Promise<IngestResult> {
  const result: IngestResult = { failedMessageIds: [], accepted: 0, duplicates: 0, late: 0, rejected: 0, jobs: [] };
  const byUser = new Map<string, Array<{ messageId: string; turn: TurnSaved }>>();

  for (const record of records) {
    const parsed = parseTurnRecord(record.body);
    if (parsed.ok) {
      const list = byUser.get(parsed.turn.userId) ?? [];
      list.push({ messageId: record.messageId, turn: parsed.turn });
      byUser.set(parsed.turn.userId, list);
      continue;
    }
    try {
      await deps.rejected.keep({
        source: deps.source,
        messageId: record.messageId,
        receivedAt: deps.clock.now().toISOString(),
        errors: parsed.errors,
        body: record.body,
      });
      result.rejected += 1;
      deps.log.warn('turn rejected', { messageId: record.messageId, errors: parsed.errors });
    } catch (error) {
      deps.log.error('could not keep a rejected turn; it goes back to the queue', { messageId: record.messageId, error: String(error) });
      result.failedMessageIds.push(record.messageId);
    }
  }

  await Promise.all(
    [...byUser.entries()].map(async ([userId, items]) => {
      try {
        const outcome = await ingestUser(userId, items.map((i) => i.turn), deps);
        for (const o of outcome.outcomes) {
          if (o.disposition === 'counted') result.accepted += 1;
          else if (o.disposition === 'duplicate') result.duplicates += 1;
          else result.late += 1;
        }
        result.jobs.push(...outcome.jobs);
      } catch (error) {
        // FIFO: every message of this user goes back, so their order is kept.
        deps.log.error('turn ingestion failed for a user; their records go back to the queue', {
          userId,
          records: items.length,
          error: error instanceof Error ? error.message : String(error),
        });
        result.failedMessageIds.push(...items.map((i) => i.messageId));
      }
    }),
  );
  return result;
}

async function ingestUser(userId: string, turns: TurnSaved[], deps: IngestDeps): Promise<AccumulateResult & { jobs: ReflectionJob[] }> {
  for (let attempt = 1; ; attempt++) {
    const stored = await deps.signalState.load(userId);
    const { state: prior, corrupt, issues } = parseSignalState(stored.raw);
    if (corrupt) deps.log.warn('signal state was corrupt and is reset to defaults', { userId, issues });

    const older = turns.filter((t) => t.turnId <= prior.lastTurnId).map((t) => t.turnId);
    const known = older.length > 0 ? await deps.turns.indexedTurnIds(userId, older) : new Set<number>();
    const now = deps.clock.now();
    const folded = accumulate(prior, turns, deps.config, now, (id) => known.has(id));

    const keep = new Set(folded.outcomes.filter((o) => o.disposition !== 'duplicate').map((o) => o.turnId));
    const toStore = dedupeByTurnId(turns.filter((t) => keep.has(t.turnId)));
    if (toStore.length > 0) await deps.turns.saveTurns(toStore);

    const jobs: ReflectionJob[] = folded.triggers.map((t) => ({
      type: 'reflection.job',
      version: 1,
      jobId: t.jobId,
      userId,
      kind: 'batch',
      trigger: t.trigger,
      urgency: t.urgency,
      turnIds: t.turnIds,
      requestedAt: now.toISOString(),
    }));
    for (const job of jobs) await deps.jobs.enqueue(job);

    if (await deps.signalState.save(userId, folded.state, stored.version)) {
      for (const o of folded.outcomes) {
        deps.log.debug('turn signals', { userId, turnId: o.turnId, disposition: o.disposition, signals: o.signals });
      }
      for (const job of jobs) deps.log.info('reflection job enqueued', { userId, jobId: job.jobId, trigger: job.trigger, urgency: job.urgency });
      return { ...folded, jobs };
    }
    if (attempt >= MAX_STATE_ATTEMPTS) throw new Error(`signal state of ${userId} kept changing under us (${attempt} attempts)`);
    deps.log.info('signal state changed concurrently; recomputing', { userId, attempt });
  }
}

function dedupeByTurnId(turns: TurnSaved[]): TurnSaved[] {
  const seen = new Set<number>();
  return turns.filter((t) => (seen.has(t.turnId) ? false : (seen.add(t.turnId), true)));
}

export type ParsedTurn = { ok: true; turn: TurnSaved } | { ok: false; errors: Array<{ path: string; message: string }> };

/** JSON + schema validation with errors that name the failing field. */
export function parseTurnRecord(body: string): ParsedTurn {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, errors: [{ path: '(body)', message: `not JSON: ${(error as Error).message}` }] };
  }
  const parsed = TurnSavedSchema.safeParse(value);
  if (parsed.success) return { ok: true, turn: parsed.data };
  return {
    ok: false,
    errors: parsed.error.issues.map((i) => ({ path: i.path.length > 0 ? i.path.join('.') : '(root)', message: i.message })),
  };
}
