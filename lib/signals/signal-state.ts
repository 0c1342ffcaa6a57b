/**
 * The signal state of req R-SIG-4: one item per user with the counters, the turns waiting for
 * a batch or a summary, the pending batches and the activity per day. Every list and map in it
 * is capped (see lib/signals/signal-accumulator.ts and the SignalConfig), so the item stays a few KB.
 */
import * as z from 'zod';
import { fnv1a32 } from '../kernel/stable-hash.js';

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
  pendingBatches: z
    .array(
      z.object({
        jobId: z.string(),
        turnIds: TurnIds,
        since: z.string(),
        episodeIds: z.array(z.string()).default([]),
        /** The reflector sent its request to a batch inference job (lib/batch-inference/routine-batch.ts): it waits longer. */
        deferred: z.literal(true).optional(),
      }),
    )
    .default([]),
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
    counters: {
      turns: 0,
      duplicates: 0,
      late: 0,
      batchesTriggered: 0,
      batchesCompleted: 0,
      summariesTriggered: 0,
      unassignedDropped: 0,
    },
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
