/** The jobs a signal write fires (batches, summaries), their deterministic ids, and the session-close summaries a write commits. */
import type { JobKind } from '../../events/job.js';
import type { CloseSummary, SignalState } from './signal-state.js';

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

/**
 * A summary (req R-SUM) covering the turns since the last one; its counters reset when the
 * job is enqueued, as the seed's trigger does after generating. Null when there is nothing new.
 */
export function takeSummary(
  state: SignalState,
  kind: 'idle-summary' | 'session-close',
  trigger: string,
): JobTrigger | null {
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
export function commitCloseSummaries(
  state: SignalState,
  triggers: readonly JobTrigger[],
  resent: readonly CloseSummary[],
  requestedAt: string,
): SignalState {
  const taken = triggers
    .filter((t) => t.kind === 'session-close')
    .map((t) => ({ turnIds: t.turnIds, urgency: t.urgency, requestedAt }));
  const { closeSummaries: _, ...rest } = state;
  return resent.length + taken.length > 0 ? { ...rest, closeSummaries: [...resent, ...taken] } : rest;
}

/** The job trigger of a committed session-close summary (the same one `takeSummary` made). */
export const closeSummaryTrigger = (s: CloseSummary): JobTrigger => ({
  jobId: summaryJobId(s.turnIds),
  kind: 'session-close',
  trigger: 'session_closed',
  urgency: s.urgency,
  turnIds: s.turnIds,
  episodeIds: [],
});

/** Deterministic job id of a batch: the turns it covers. */
export function batchJobId(turnIds: readonly number[]): string {
  return `batch-${turnIds[0] ?? 0}-${turnIds[turnIds.length - 1] ?? 0}`;
}

/** Deterministic job id of a summary: the turns it covers. */
export function summaryJobId(turnIds: readonly number[]): string {
  return `summary-${turnIds[0] ?? 0}-${turnIds[turnIds.length - 1] ?? 0}`;
}
