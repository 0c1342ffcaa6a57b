/** The idle rule of req R-SUM-1: one pending idle check per user, and what a check does when it fires. */
import type { SignalConfig } from './signal-weights.js';
import type { SignalState } from './signal-state.js';
import { type JobTrigger, summaryJobId, takeSummary } from './job-triggers.js';

/** Whether an idle check is on its way (its due time not come yet): a fold schedules none then. */
export const idleCheckPending = (state: Pick<SignalState, 'idleCheckDueAt'>, now: Date): boolean =>
  state.idleCheckDueAt !== null && Date.parse(state.idleCheckDueAt) > now.getTime();

/** The inactivity threshold in milliseconds of the service's clock (`timeScale`: local runs speed it up). */
export const idleThresholdMs = (config: Pick<SignalConfig, 'idleMinutes' | 'timeScale'>): number =>
  (config.idleMinutes * 60_000) / config.timeScale;

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
export function scheduleIdleCheck(
  state: SignalState,
  config: SignalConfig,
  now: Date,
): { state: SignalState; plan: IdleCheckPlan } | null {
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
export function idleCheck(
  prior: SignalState,
  check: { lastTurnId: number; dueAt?: string },
  config: SignalConfig,
  now: Date,
): IdleCheckResult {
  const thresholdMs = idleThresholdMs(config);
  const waitMs = Date.parse(prior.lastSeenAt ?? '1970-01-01T00:00:00Z') + thresholdMs - now.getTime();
  const skewMs = idleSkewMs(thresholdMs);
  // Before anything else (a turn since may have superseded this check): the summary it committed.
  const committed = prior.idleSummary;
  if (check.dueAt !== undefined && committed?.dueAt === check.dueAt)
    return { resend: idleSummaryTrigger(committed.turnIds, committed.urgency) };
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
  if (check.dueAt !== undefined)
    state.idleSummary = { dueAt: check.dueAt, turnIds: trigger.turnIds, urgency: trigger.urgency };
  return { state, trigger };
}

const idleSummaryTrigger = (turnIds: number[], urgency: number): JobTrigger => ({
  jobId: summaryJobId(turnIds),
  kind: 'idle-summary',
  trigger: 'idle',
  urgency,
  turnIds,
  episodeIds: [],
});
