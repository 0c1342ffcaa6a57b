/**
 * The idle rule of req R-SUM-1 (the idle function's use case): when the user's idle check
 * fires, enqueue an idle-summary job if the user has been quiet for the threshold and at
 * least `idleMinMessages` arrived since the last summary. Debounced without polling: one
 * check is pending per user; while the user keeps talking it puts itself back on the queue,
 * due a threshold after their last message (issue 19).
 */
import type { IdleCheck } from '../../events/idle-check.js';
import type { Job } from '../../events/job.js';
import { idleCheck, parseSignalState } from '../domain/signal-accumulator.js';
import type { SignalConfig } from '../domain/signal-weights.js';
import { withUserIdle } from '../domain/user-settings.js';
import type { Clock, IdleScheduler, JobQueue, Log, SignalStateStore, UserSettingsStore } from '../ports.js';

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
  | { status: 'rescheduled'; delaySeconds: number }
  | { status: 'skipped'; reason: 'newer_message' | 'superseded' | 'not_idle_yet' | 'too_few_messages' | 'no_state' };

export async function checkIdle(check: IdleCheck, deps: IdleDeps): Promise<IdleOutcome> {
  const config = withUserIdle(deps.config, await deps.settings.get(check.userId));
  for (let attempt = 1; attempt <= 5; attempt++) {
    const stored = await deps.signalState.load(check.userId);
    // No state: nothing was counted, or the user was forgotten since the check was sent (issue 21) — nothing to summarise, nothing written.
    if (stored.version === null) return { status: 'skipped', reason: 'no_state' };
    const { state } = parseSignalState(stored.raw);
    const result = idleCheck(state, check, config, deps.clock.now());
    if ('skipped' in result) return { status: 'skipped', reason: result.skipped };
    if ('reschedule' in result) {
      // The same check (same dueAt) again, later; nothing written. A redelivery of this one
      // sends another copy: both fire, the first decides, the other finds nothing to do.
      await deps.idle.schedule({ ...check, enqueuedAt: deps.clock.now().toISOString() }, result.reschedule.delaySeconds);
      return { status: 'rescheduled', delaySeconds: result.reschedule.delaySeconds };
    }
    const t = result.trigger;
    const job: Job = {
      type: 'reflector.job',
      version: 1,
      jobId: t.jobId,
      userId: check.userId,
      kind: t.kind,
      trigger: t.trigger,
      urgency: t.urgency,
      turnIds: t.turnIds,
      // Input time: when the quiet window ended (the check's due time), not when this delivery ran.
      requestedAt: check.dueAt ?? deps.clock.now().toISOString(),
    };
    await deps.jobs.enqueue(job);
    if (await deps.signalState.save(check.userId, result.state, stored.version)) {
      deps.log.info('idle summary job enqueued', { userId: check.userId, jobId: job.jobId, turns: job.turnIds.length });
      return { status: 'enqueued', job };
    }
  }
  throw new Error(`could not record the idle summary of ${check.userId}: the state kept changing`);
}
