/**
 * The idle rule of seed 003 (the idle function's use case): when a delayed idle check
 * fires, enqueue an idle-summary job if the user sent nothing since and at least
 * `idleMinMessages` arrived since the last summary. Debounced without polling: every
 * counted batch schedules a check; all but the newest find a newer message and stop.
 */
import type { IdleCheck } from '../../events/idle-check.js';
import type { ReflectionJob } from '../../events/reflection-job.js';
import { idleCheck, parseSignalState } from '../domain/signal-accumulator.js';
import type { SignalConfig } from '../domain/signal-weights.js';
import type { Clock, JobQueue, Log, SignalStateStore } from '../ports.js';

export interface IdleDeps {
  signalState: SignalStateStore;
  jobs: JobQueue;
  clock: Clock;
  log: Log;
  config: SignalConfig;
}

export type IdleOutcome =
  | { status: 'enqueued'; job: ReflectionJob }
  | { status: 'skipped'; reason: 'newer_message' | 'not_idle_yet' | 'too_few_messages' };

export async function checkIdle(check: IdleCheck, deps: IdleDeps): Promise<IdleOutcome> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const stored = await deps.signalState.load(check.userId);
    const { state } = parseSignalState(stored.raw);
    const result = idleCheck(state, check.lastTurnId, deps.config, deps.clock.now());
    if ('skipped' in result) return { status: 'skipped', reason: result.skipped };
    const t = result.trigger;
    const job: ReflectionJob = {
      type: 'reflection.job',
      version: 1,
      jobId: t.jobId,
      userId: check.userId,
      kind: t.kind,
      trigger: t.trigger,
      urgency: t.urgency,
      turnIds: t.turnIds,
      requestedAt: deps.clock.now().toISOString(),
    };
    await deps.jobs.enqueue(job);
    if (await deps.signalState.save(check.userId, result.state, stored.version)) {
      deps.log.info('idle summary job enqueued', { userId: check.userId, jobId: job.jobId, turns: job.turnIds.length });
      return { status: 'enqueued', job };
    }
  }
  throw new Error(`could not record the idle summary of ${check.userId}: the state kept changing`);
}
