/**
 * The forget job's erasure is paginated and resumable: one that runs out of time or of pages
 * stops between pages and goes on in a fresh job (its continuation), and the receipt counts
 * every page once.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import {
  continuationOf,
  ForgetContinuesError,
  type ForgetDeps,
  forgetJob,
  forgetUser,
  requestForget,
} from '../../lib/forget/forget-user.js';
import type { UserEraser } from '../../lib/forget/forget.port.js';
import { fixedClock, RecordingLog } from '../../lib/kernel/runtime.fake.js';
import { MemoryForgetLog } from '../../lib/forget/forget.fake.js';
import { MemoryJobQueue } from '../../lib/jobs/job-queue.fake.js';

/** A store of `items` items and `objects` objects that deletes them a page at a time. */
class PagedEraser implements UserEraser {
  constructor(
    public items: number,
    public objects: number,
  ) {}
  async memoryItemIds() {
    return [];
  }
  async deleteGlobalItems() {
    return 0;
  }
  async deleteSignalState() {}
  async deleteItems(_userId: string, page: (n: number) => Promise<void>) {
    while (this.items > 0) {
      const n = Math.min(100, this.items);
      this.items -= n;
      await page(n);
    }
  }
  async deleteObjectVersions(prefix: string, page: (n: number) => Promise<void>) {
    if (!prefix.startsWith('users/')) return;
    while (this.objects > 0) {
      const n = Math.min(10, this.objects);
      this.objects -= n;
      await page(n);
    }
  }
  async deleteNoncurrentVersions() {
    return 0;
  }
}

describe('the forget job', () => {
  const setUp = async (items: number, objects: number) => {
    const forgets = new MemoryForgetLog();
    const { receipt } = await requestForget({ forgets, jobs: new MemoryJobQueue(), clock: fixedClock() }, 'u-1', 'u-1');
    const eraser = new PagedEraser(items, objects);
    const jobs = new MemoryJobQueue();
    const time = { left: 100_000 };
    const deps: ForgetDeps = {
      forgets,
      eraser,
      search: { compact: async () => ({ folded: 0, version: 0, merged: false }) },
      clock: fixedClock(),
      log: new RecordingLog(),
      settleSeconds: 0,
      remainingMs: () => time.left,
      jobs,
      pagesPerJob: 1000,
    };
    return { forgets, receipt, eraser, jobs, time, deps };
  };

  it('stops between pages when its time runs low, goes on in a fresh job (its own id), and counts each page once', async () => {
    const { forgets, receipt, jobs, time, deps } = await setUp(250, 30);
    time.left = 10_000;
    const first = forgetJob(receipt);
    expect(await forgetUser(first, deps)).toEqual({ status: 'continued', next: `${first.jobId}-1` });
    expect(jobs.jobs).toEqual([{ ...first, jobId: `${first.jobId}-1`, continuation: 1 }]);
    expect((await forgets.latest('u-1'))?.counts).toMatchObject({ objects: 10, items: 0 });
    expect((await forgets.latest('u-1'))?.status).toBe('pending');
    // Sent again (a redelivery of the first job), the continuation has the same id: SQS FIFO deduplicates it.
    expect(continuationOf(first, receipt).jobId).toBe(`${first.jobId}-1`);
    expect(continuationOf(jobs.jobs[0] as Job, receipt)).toMatchObject({ jobId: `${first.jobId}-2`, continuation: 2 });

    time.left = 100_000;
    const done = await forgetUser(jobs.jobs[0] as Job, deps);
    expect(done.status).toBe('forgotten');
    expect((await forgets.latest('u-1'))?.counts).toEqual({
      items: 250,
      objects: 30,
      globalItems: 0,
      globalIndexObjects: 0,
    });
    expect(await forgetUser(forgetJob(receipt), deps)).toMatchObject({ status: 'skipped' });
  });

  it('erases at most pagesPerJob pages a job: a forget of many pages is a chain of fresh jobs, not redeliveries', async () => {
    const { forgets, receipt, jobs, deps } = await setUp(250, 30);
    let job = forgetJob(receipt);
    for (let i = 0; i < 50; i++) {
      const out = await forgetUser(job, { ...deps, pagesPerJob: 2 });
      if (out.status !== 'continued') break;
      job = jobs.jobs.at(-1) as Job;
    }
    // 3 pages of objects and 3 of items, two a job: three jobs went on, the fourth finished.
    expect(jobs.jobs.map((j) => j.continuation)).toEqual([1, 2, 3]);
    expect((await forgets.latest('u-1'))?.status).toBe('done');
  });

  it('fails (to be delivered again) when it stopped before erasing anything', async () => {
    const { receipt, jobs, time, deps } = await setUp(0, 0);
    time.left = 10_000;
    await expect(forgetUser(forgetJob(receipt), deps)).rejects.toBeInstanceOf(ForgetContinuesError);
    expect(jobs.jobs).toEqual([]);
  });

  it('answers the pending receipt to a retried request, and refuses GLOBAL', async () => {
    const forgets = new MemoryForgetLog();
    const jobs = new MemoryJobQueue();
    const first = await requestForget({ forgets, jobs, clock: fixedClock('2026-02-06T14:30:00.000Z') }, 'admin', 'u-2');
    const again = await requestForget({ forgets, jobs, clock: fixedClock('2026-02-06T14:31:00.000Z') }, 'admin', 'u-2');
    expect(again.receipt.requestedAt).toBe(first.receipt.requestedAt);
    expect(new Set(jobs.jobs.map((j) => j.jobId)).size).toBe(1);
    await expect(requestForget({ forgets, jobs, clock: fixedClock() }, 'admin', 'GLOBAL')).rejects.toMatchObject({
      kind: 'invalid',
    });
  });
});
