/**
 * Forgetting a user: everything they left is erased, and anything of theirs
 * still on its way is dropped when it arrives.
 *
 * - The request (`DELETE /v1/users/{u}`) writes a receipt outside the user's partition
 *   (lib/forget/dynamo-forget-log.adapter.ts) and puts a `forget` job on the user's FIFO group of
 *   the job queue: it runs after every job of theirs already queued or running.
 * - The job deletes, each step repeatable: the user's contributions to GLOBAL (the copies
 *   shared from their items, found by id while their items still exist) and every old
 *   version of GLOBAL's search segments that held them (GLOBAL's index is rewritten whole
 *   first); the signal state; every object version under `users/{u}/`, `claims/{u}/` and
 *   `batch-inference/deferred/{u}/` (routine reflections kept for a batch inference job);
 *   every item of the user's partition. Then, once the user's writers that may still be
 *   running have had their time (FORGET_SETTLE_SECONDS: the signal and API functions'
 *   timeouts), the objects and items once more, and the receipt is marked done. Each page
 *   adds its counts to the receipt, so a resumed erasure's receipt counts everything once.
 * - A job erases at most `pagesPerJob` pages, and stops between pages when the invocation's
 *   time runs low. Having erased something, it goes on in a fresh job, its continuation
 *   (`forget-{t}-{n}`, a deduplication id of its own), and ends: a delivery that failed and
 *   came back would count towards the queue's maxReceiveCount, and a forget of more than five
 *   deliveries' pages would be parked in the DLQ. SQS FIFO drops a message sent again with a
 *   deduplication id it saw in the last 5 minutes ("Message deduplication ID",
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html),
 *   so a redelivered job that sends its continuation again sends it once; a later duplicate
 *   finds less to erase, or the receipt done, and is skipped. The continuation waits in the
 *   user's FIFO group behind the job that sent it. A job that erased nothing (its time ran
 *   out before a page) fails instead, and is retried like any job.
 * - What arrives later and was asked for before the forget is dropped: the signal function
 *   checks the receipt when it finds no signal state (`forgottenBefore`), the reflector before
 *   every job. Aggregates that name no user (source reliability counts) stay.
 */
import type { Job } from '../../events/job.js';
import { GLOBAL_USER } from '../items/memory-item.js';
import { claimsPrefix, deferredPrefix, searchSegmentsPrefix, userPrefix } from '../kernel/memory-paths.js';
import type { Clock, Log } from '../kernel/runtime.port.js';
import type { ForgetCounts, ForgetLog, ForgetReceipt, UserEraser } from './forget.port.js';
import type { JobQueue } from '../jobs/job-queue.port.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import type { SearchIndexReader } from '../search/search-index-reader.js';

export interface ForgetRequestDeps {
  forgets: ForgetLog;
  jobs: JobQueue;
  clock: Clock;
}

export interface ForgetDeps {
  forgets: ForgetLog;
  eraser: UserEraser;
  /** GLOBAL's search index, rewritten whole once the user's contributions are gone. */
  search: Pick<SearchIndexReader, 'compact'>;
  clock: Clock;
  log: Log;
  /** How long a write of the user's that started before the erasure may still land (s). */
  settleSeconds: number;
  /** Milliseconds the invocation has left: the erasure stops between pages to continue later. */
  remainingMs: () => number;
  /** Where a job's continuation goes: the job queue (the user's FIFO group). */
  jobs: JobQueue;
  /** Pages a job erases before it goes on in its continuation. */
  pagesPerJob: number;
}

/** Left before the invocation's end when an erasure stops to be continued (by a fresh job, or the next delivery). */
const STOP_BEFORE_MS = 15_000;

/** The erasure stopped between pages (its page budget spent, or the invocation's time running low) with nothing erased: its next delivery goes on. */
export class ForgetContinuesError extends Error {
  constructor(userId: string) {
    super(`the erasure of ${userId} goes on in the job's next delivery`);
    this.name = 'ForgetContinuesError';
  }
}

/** The job that goes on with the erasure `job` stopped: same receipt, the next continuation number and its own id. */
export const continuationOf = (job: Job, receipt: ForgetReceipt): Job => {
  const continuation = (job.continuation ?? 0) + 1;
  return { ...forgetJob(receipt), jobId: `${forgetJob(receipt).jobId}-${continuation}`, continuation };
};

const NO_COUNTS: ForgetCounts = { items: 0, objects: 0, globalItems: 0, globalIndexObjects: 0 };

/** The job that erases the user, on their FIFO group (its id names the request, so a retried request sends it once). */
export const forgetJob = (receipt: ForgetReceipt): Job => ({
  type: 'reflector.job',
  version: 1,
  jobId: `forget-${receipt.requestedAt.replace(/[^0-9]/g, '')}`,
  userId: receipt.userId,
  kind: 'forget',
  trigger: 'forget',
  urgency: 0,
  turnIds: [],
  requestedAt: receipt.requestedAt,
});

/** `DELETE /v1/users/{u}`: the receipt (pending until the job has run) and the job. A retry while pending returns the same receipt. */
export async function requestForget(
  deps: ForgetRequestDeps,
  actor: string,
  userId: string,
): Promise<{ receipt: ForgetReceipt }> {
  if (userId === GLOBAL_USER)
    throw new MemoryApiError(
      'invalid',
      'userId: GLOBAL is not a user; its items are deleted one by one (DELETE …/memory/tiers/{tier}/{id})',
    );
  const latest = await deps.forgets.latest(userId);
  const receipt: ForgetReceipt =
    latest?.status === 'pending'
      ? latest
      : {
          userId,
          requestedAt: deps.clock.now().toISOString(),
          requestedBy: actor,
          status: 'pending',
          counts: { ...NO_COUNTS },
        };
  if (receipt !== latest) await deps.forgets.request(receipt);
  await deps.jobs.enqueue(forgetJob(receipt));
  return { receipt };
}

/** `GET /v1/users/{u}/forget`: the newest receipt. */
export async function forgetReceipt(
  deps: Pick<ForgetRequestDeps, 'forgets'>,
  userId: string,
): Promise<{ receipt: ForgetReceipt }> {
  const receipt = await deps.forgets.latest(userId);
  if (!receipt) throw new MemoryApiError('not_found', `user ${userId} was never forgotten`);
  return { receipt };
}

/** The time before which the user's turns and jobs are dropped: their newest forget's, or null. */
export async function forgottenBefore(forgets: Pick<ForgetLog, 'latest'>, userId: string): Promise<string | null> {
  return (await forgets.latest(userId))?.requestedAt ?? null;
}

/** The job was asked for before its user's latest forget (`forgottenBefore`; null: never forgotten): it writes nothing. */
export const askedBefore = (job: Pick<Job, 'requestedAt'>, forgottenAt: string | null): boolean =>
  forgottenAt !== null && Date.parse(job.requestedAt) <= Date.parse(forgottenAt);

export type ForgetOutcome =
  | { status: 'forgotten'; receipt: ForgetReceipt }
  | { status: 'continued'; next: string }
  | { status: 'skipped'; reason: string };

/** What one job has done: pages erased (its budget), and whether anything was. */
interface JobProgress {
  pages: number;
  erased: number;
}

/**
 * The `forget` job: erase the user (each step repeatable), then mark the receipt done; or,
 * stopped between pages with something erased, enqueue its continuation and end.
 */
export async function forgetUser(job: Job, deps: ForgetDeps): Promise<ForgetOutcome> {
  const receipt = await deps.forgets.latest(job.userId);
  if (!receipt) return { status: 'skipped', reason: 'no forget was asked for' };
  if (receipt.status === 'done')
    return { status: 'skipped', reason: `forgotten already at ${receipt.completedAt ?? receipt.requestedAt}` };
  const progress: JobProgress = { pages: 0, erased: 0 };
  try {
    return await eraseUser(job, receipt, deps, progress);
  } catch (error) {
    if (!(error instanceof ForgetContinuesError) || progress.erased === 0) throw error;
    const next = continuationOf(job, receipt);
    await deps.jobs.enqueue(next);
    deps.log.info('forget continues in a fresh job', {
      userId: receipt.userId,
      jobId: job.jobId,
      next: next.jobId,
      pages: progress.pages,
      erased: progress.erased,
    });
    return { status: 'continued', next: next.jobId };
  }
}

async function eraseUser(
  job: Job,
  receipt: ForgetReceipt,
  deps: ForgetDeps,
  progress: JobProgress,
): Promise<ForgetOutcome> {
  const { userId, requestedAt } = receipt;
  const add = async (counts: Partial<ForgetCounts>) => {
    progress.erased += Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
    await deps.forgets.add(userId, requestedAt, counts);
  };
  const globalItems = await deps.eraser.deleteGlobalItems(await deps.eraser.memoryItemIds(userId));
  await add({ globalItems });
  // A continuation's predecessor finished this step before it went on: only copies found now need the rewrite.
  if (globalItems > 0 || (receipt.counts.globalItems > 0 && job.continuation === undefined)) {
    // Their words live on in GLOBAL's segments until the index is rewritten and the old segments' versions are gone.
    const rewrite = await deps.search.compact(GLOBAL_USER, 1, { full: true });
    // Another compaction of GLOBAL won the pointer: its segments may still hold their words. The job is retried.
    if (rewrite.lost) throw new Error(`GLOBAL's search index moved during the forget of ${userId}: retried`);
    await add({ globalIndexObjects: await deps.eraser.deleteNoncurrentVersions(searchSegmentsPrefix(GLOBAL_USER)) });
  }
  await deps.eraser.deleteSignalState(userId);
  await erase(userId, deps, add, progress);
  const settleMs = deps.settleSeconds * 1000;
  if (deps.remainingMs() < settleMs + STOP_BEFORE_MS) throw new ForgetContinuesError(userId);
  if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
  await erase(userId, deps, add, progress);
  await deps.forgets.complete(userId, requestedAt, deps.clock.now().toISOString());
  const done = (await deps.forgets.latest(userId)) ?? receipt;
  deps.log.info('user forgotten', { userId, requestedAt, requestedBy: receipt.requestedBy, counts: done.counts });
  return { status: 'forgotten', receipt: done };
}

/** Every object version under the user's prefixes, then every item of their partition, a page at a time (within the job's page budget). */
async function erase(
  userId: string,
  deps: ForgetDeps,
  add: (counts: Partial<ForgetCounts>) => Promise<void>,
  progress: JobProgress,
): Promise<void> {
  const page = (field: 'items' | 'objects') => async (deleted: number) => {
    await add({ [field]: deleted });
    progress.pages += 1;
    if (deps.remainingMs() < STOP_BEFORE_MS || progress.pages >= deps.pagesPerJob)
      throw new ForgetContinuesError(userId);
  };
  for (const prefix of [userPrefix(userId), claimsPrefix(userId), deferredPrefix(userId)])
    await deps.eraser.deleteObjectVersions(prefix, page('objects'));
  await deps.eraser.deleteItems(userId, page('items'));
}
