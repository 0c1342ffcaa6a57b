/**
 * The scheduled sweeps (the sweep function's use cases). "Now" is the schedule's own time
 * (EventBridge's event time, or the local simulated clock), never the wall clock, so a
 * replay of weeks of conversation sweeps exactly as production would have.
 */
import type { Job } from '../../events/job.js';
import type { SleepTimeConfig } from '../sleep-time/config.js';
import { selectUsers, windowDays } from '../sleep-time/selection.js';
import type { ActivityIndex } from '../signals/signal-state.port.js';
import type { ExpiryLog, KnowledgeStore } from '../knowledge/knowledge.port.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';
import type { SleepTimeLogStore } from '../sleep-time/sleep-time-log.port.js';
import type { JobQueue } from './job-queue.port.js';
import type { Dispatch } from '../batch-inference/sleep-time-batch.js';
import type { TurnStore } from '../turns/turn.port.js';
import type { Log } from '../kernel/runtime.port.js';
import { expireTierEntries } from '../tiers/tier-review.js';
import type { TierPolicy } from '../tiers/tier-settings.js';

export interface SweepDeps {
  activity: ActivityIndex;
  runs: SleepTimeLogStore;
  turns: TurnStore;
  jobs: JobQueue;
  knowledge: KnowledgeStore;
  expiryLog: ExpiryLog;
  /** Tier entries: the expiry sweep expires those whose TTL ran out, with the reason, in the audit trail. */
  items: Pick<MemoryItemStore, 'get' | 'move' | 'expiringOn'>;
  config: SleepTimeConfig;
  /** The stage's tier policy (lib/tiers/tier-settings.ts) the expiry sweep applies; unset: the defaults. */
  tierPolicy?: TierPolicy | undefined;
  log: Log;
  /**
   * Sleep-time at batch prices (lib/batch-inference/sleep-time-batch.ts dispatchSleepTime): the
   * nightly and weekly jobs go to it, which starts one batch inference job when they have enough
   * model requests, else enqueues them. Unset: every job is enqueued and runs on demand.
   */
  dispatch?: ((jobs: readonly Job[]) => Promise<Dispatch>) | undefined;
}

/** The sleep-time jobs of a sweep run, dispatched (batch or on demand) or enqueued. */
async function sendJobs(jobs: readonly Job[], deps: SweepDeps): Promise<Dispatch | undefined> {
  if (deps.dispatch && jobs.length > 0) return deps.dispatch(jobs);
  for (const job of jobs) await deps.jobs.enqueue(job);
  return undefined;
}

/** A sleep-time sweep's jobs sent (sendJobs), and what it did. */
async function sleepSweepResult(
  sweep: 'nightly' | 'weekly',
  now: Date,
  sel: { selected: readonly unknown[]; skipped: readonly unknown[] },
  due: readonly Job[],
  deps: SweepDeps,
): Promise<SweepResult> {
  const inference = await sendJobs(due, deps);
  return {
    sweep,
    at: now.toISOString(),
    selected: sel.selected.length,
    skipped: sel.skipped.length,
    jobs: due.map((j) => `${j.userId}:${j.jobId}`),
    ...(inference ? { inference } : {}),
  };
}

export interface SweepResult {
  sweep: string;
  at: string;
  selected: number;
  skipped: number;
  jobs: string[];
  deleted?: number;
  /** Tier entries the expiry sweep expired. */
  tierEntriesExpired?: number;
  /** How the sleep-time jobs run: one batch inference job, or on demand (SweepDeps.dispatch). */
  inference?: Dispatch;
}

/** Most turns a nightly job lists (the job schema's limit); the rest of a huge day is left out, and logged. */
const MAX_NIGHTLY_TURNS = 1000;

/** Req R-SLP-1 to R-SLP-8: fan out one nightly job per user with enough messages in the window. */
export async function nightlySweep(now: Date, deps: SweepDeps): Promise<SweepResult> {
  const hours = deps.config.nightlyLookbackHours;
  const days = windowDays(now, hours);
  const users = await deps.activity.activeUsers(days);
  const last = new Map(
    await Promise.all(
      users.map(async (u) => [u.userId, (await deps.runs.latest(u.userId, 'nightly'))?.startedAt ?? null] as const),
    ),
  );
  const sel = selectUsers(users, days, deps.config.nightlyMinMessages, (id) => last.get(id) ?? null, now, hours);
  const from = new Date(now.getTime() - hours * 3_600_000).toISOString();
  const due: Job[] = [];
  for (const { userId } of sel.selected) {
    const turnIds = (await deps.turns.turnsSince(userId, from, MAX_NIGHTLY_TURNS)).sort((a, b) => a - b);
    if (turnIds.length === MAX_NIGHTLY_TURNS)
      deps.log.warn('nightly window holds more turns than one job lists; the oldest are left out', { userId });
    due.push(sleepJob('nightly', userId, now, turnIds));
  }
  deps.log.info('nightly sweep', { at: now.toISOString(), selected: sel.selected.length, skipped: sel.skipped });
  return sleepSweepResult('nightly', now, sel, due, deps);
}

/** Req R-SLP-9: one weekly job per user active in the week (it reads summaries, not messages). */
export async function weeklySweep(now: Date, deps: SweepDeps): Promise<SweepResult> {
  const hours = deps.config.weeklyLookbackDays * 24;
  const days = windowDays(now, hours);
  const users = await deps.activity.activeUsers(days);
  const last = new Map(
    await Promise.all(
      users.map(async (u) => [u.userId, (await deps.runs.latest(u.userId, 'weekly'))?.startedAt ?? null] as const),
    ),
  );
  const sel = selectUsers(users, days, 1, (id) => last.get(id) ?? null, now, hours);
  const due = sel.selected.map(({ userId }) => sleepJob('weekly', userId, now, []));
  deps.log.info('weekly sweep', { at: now.toISOString(), selected: sel.selected.length, skipped: sel.skipped.length });
  return sleepSweepResult('weekly', now, sel, due, deps);
}

/** Days before the cutoff the expiry sweep re-checks, in case a run was missed. */
const EXPIRY_CATCH_UP_DAYS = 14;
/** Days before today the sweep re-checks for tier entries that expired. */
const TIER_EXPIRY_CATCH_UP_DAYS = 1;

/**
 * Req R-PRO-3: staged items older than 30 days with promotion_count < 2 are deleted, each
 * logged with its reason. Found through the staged-by-day index, not a scan. Then the tier
 * entries whose TTL ran out, found through the by-expiry-day index.
 */
export async function expirySweep(now: Date, deps: SweepDeps): Promise<SweepResult> {
  const cutoff = now.getTime() - deps.config.stagedExpiryDays * 86_400_000;
  const days = Array.from({ length: EXPIRY_CATCH_UP_DAYS + 1 }, (_, i) =>
    new Date(cutoff - i * 86_400_000).toISOString().slice(0, 10),
  );
  const found = (await Promise.all(days.map((d) => deps.knowledge.stagedOn(d)))).flat();
  const byUser = new Map<string, Parameters<ExpiryLog['write']>[2]>();
  for (const { userId, record } of found) {
    if (record.status !== 'staged' || Date.parse(record.stagedAt) > cutoff || record.promotedBy.length >= 2) continue;
    await deps.knowledge.deleteStaged(userId, record.path);
    const reason = `staged ${record.stagedAt}, more than ${deps.config.stagedExpiryDays} days ago, with promotion_count ${record.promotedBy.length} < 2`;
    byUser.set(userId, [
      ...(byUser.get(userId) ?? []),
      { path: record.path, stagedAt: record.stagedAt, promotionCount: record.promotedBy.length, reason },
    ]);
  }
  for (const [userId, deletions] of byUser) {
    await deps.expiryLog.write(userId, now.toISOString(), deletions);
    for (const d of deletions) deps.log.info('staged item expired', { userId, ...d });
  }
  const deleted = [...byUser.values()].reduce((n, d) => n + d.length, 0);
  // Req R-TIER-6, R-TIER-7: tier entries whose TTL ran out today or yesterday (a run Lambda's retries could not
  // save), expired in the audit trail with why: 16 small queries a run (two days, eight shards), not
  // 120. An entry two missed runs left is hidden all the same (reads check expiresAt) and removed by
  // the table's TTL, without an `expire` entry.
  const tierDays = Array.from({ length: TIER_EXPIRY_CATCH_UP_DAYS + 1 }, (_, i) =>
    new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10),
  );
  const tierEntriesExpired = await expireTierEntries(deps.items, tierDays, now, deps.tierPolicy);
  return {
    sweep: 'expiry',
    at: now.toISOString(),
    selected: byUser.size,
    skipped: found.length - deleted,
    jobs: [],
    deleted,
    tierEntriesExpired,
  };
}

/** A scheduled sweep's time as its jobs name it: `202611280300` (UTC, to the minute). */
export const sweepStamp = (now: Date): string => now.toISOString().slice(0, 16).replace(/[-:T]/g, '');

function sleepJob(kind: 'nightly' | 'weekly', userId: string, now: Date, turnIds: number[]): Job {
  return {
    type: 'reflector.job',
    version: 1,
    // One per user per scheduled run; also the FIFO deduplication id and the sleep-time run log's run id.
    jobId: `${kind}-${sweepStamp(now)}`,
    userId,
    kind,
    trigger: 'schedule',
    urgency: 0,
    turnIds,
    requestedAt: now.toISOString(),
  };
}
