/**
 * The idle rule of req R-SUM-1 (the idle function's use case): when the user's idle check
 * fires, enqueue an idle-summary job if the user has been quiet for the threshold and at
 * least `idleMinMessages` arrived since the last summary. Debounced without polling: one
 * check is pending per user; while the user keeps talking it puts itself back on the queue,
 * due a threshold after their last message. The state write that takes the summary's
 * turns comes before the job's enqueue, and records the job, so a lost write enqueues nothing and a
 * redelivered check sends its own committed job again (same id).
 */
import type { IdleCheck } from '../../events/idle-check.js';
import type { Job } from '../../events/job.js';
import { idleCheck, idleThresholdMs } from './idle-rule.js';
import { parseSignalState } from './signal-state.js';
import type { SignalConfig } from './signal-weights.js';
import { withUserIdle } from '../settings/user-settings.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { IdleScheduler, SignalStateStore } from './signal-state.port.js';
import type { JobQueue } from '../jobs/job-queue.port.js';
import type { UserSettingsStore } from '../settings/user-settings.port.js';

export interface IdleDeps {
  signalState: SignalStateStore;
  jobs: JobQueue;
  /** Where a check that must wait longer puts itself back. */
  idle: IdleScheduler;
  /** The user's own settings: their inactivity threshold overrides the stage's. */
  settings: Pick<UserSettingsStore, 'get'>;
  clock: Clock;
  log: Log;
  config: SignalConfig;
}

export type IdleOutcome =
  | { status: 'enqueued'; job: Job }
  /** This check's summary was committed by an earlier delivery: its job sent again (same id: one summary). */
  | { status: 'resent'; job: Job }
  | { status: 'rescheduled'; delaySeconds: number }
  | { status: 'skipped'; reason: 'newer_message' | 'superseded' | 'not_idle_yet' | 'too_few_messages' | 'no_state' };

export async function checkIdle(check: IdleCheck, deps: IdleDeps): Promise<IdleOutcome> {
  const config = withUserIdle(deps.config, await deps.settings.get(check.userId));
  for (let attempt = 1; attempt <= 5; attempt++) {
    const stored = await deps.signalState.load(check.userId);
    // No state: nothing was counted, or the user was forgotten since the check was sent — nothing to summarise, nothing written.
    if (stored.version === null) return { status: 'skipped', reason: 'no_state' };
    const { state } = parseSignalState(stored.raw);
    const result = idleCheck(state, check, config, deps.clock.now());
    if ('skipped' in result) return { status: 'skipped', reason: result.skipped };
    if ('reschedule' in result) {
      // The same check (same dueAt) again, later; nothing written. A redelivery of this one
      // sends another copy: both fire, the first decides, the other finds nothing to do.
      await deps.idle.schedule(
        { ...check, enqueuedAt: deps.clock.now().toISOString() },
        result.reschedule.delaySeconds,
      );
      return { status: 'rescheduled', delaySeconds: result.reschedule.delaySeconds };
    }
    const t = 'resend' in result ? result.resend : result.trigger;
    const job: Job = {
      type: 'reflector.job',
      version: 1,
      jobId: t.jobId,
      userId: check.userId,
      kind: t.kind,
      trigger: t.trigger,
      urgency: t.urgency,
      turnIds: t.turnIds,
      // Input time: when the quiet window ended, not when this delivery ran. A check put back
      // while the user kept talking keeps its first due time (its identity), so the window's
      // end is the threshold after the last message; a resend sends what was committed.
      requestedAt:
        ('resend' in result ? undefined : quietWindowEnd(state.lastSeenAt, config)) ??
        check.dueAt ??
        deps.clock.now().toISOString(),
    };
    if ('resend' in result) {
      // An earlier delivery committed this summary, and its enqueue failed or was never known to
      // land (the record failed, so the check came back: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
      // The same job id: FIFO deduplication drops a copy sent within 5 minutes of the first
      // (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html),
      // and the reflector skips a summary whose id exists (`runSummary`).
      await deps.jobs.enqueue(job);
      deps.log.info('idle summary job sent again', { userId: check.userId, jobId: job.jobId });
      return { status: 'resent', job };
    }
    // The write first: it takes the summary's turns and records the job (`idleSummary`). A write
    // that loses to another writer (a turn counted, a batch completed) enqueues nothing and the
    // rule is asked again on the new state; a crash after it is redone by the check's redelivery.
    if (!(await deps.signalState.save(check.userId, result.state, stored.version))) continue;
    await deps.jobs.enqueue(job);
    deps.log.info('idle summary job enqueued', { userId: check.userId, jobId: job.jobId, turns: job.turnIds.length });
    return { status: 'enqueued', job };
  }
  throw new Error(`could not record the idle summary of ${check.userId}: the state kept changing`);
}

/** When a user last seen at `lastSeenAt` had been quiet for their threshold. */
const quietWindowEnd = (lastSeenAt: string | null | undefined, config: SignalConfig): string | undefined =>
  lastSeenAt ? new Date(Date.parse(lastSeenAt) + idleThresholdMs(config)).toISOString() : undefined;
