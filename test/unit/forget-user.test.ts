/**
 * The forget job's erasure is paginated and resumable (issue 21 item 1): one that runs out of
 * time stops between pages, its next delivery goes on, and the receipt counts every page once.
 */
import { describe, expect, it } from 'vitest';
import { ForgetContinuesError, type ForgetDeps, forgetJob, forgetUser, requestForget } from '../../lib/use-cases/forget-user.js';
import type { UserEraser } from '../../lib/ports.js';
import { fixedClock, MemoryForgetLog, MemoryJobQueue, RecordingLog } from '../helpers/fakes.js';

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
  it('stops between pages when its time runs low, goes on in the next delivery, and counts each page once', async () => {
    const forgets = new MemoryForgetLog();
    const { receipt } = await requestForget({ forgets, jobs: new MemoryJobQueue(), clock: fixedClock() }, 'u-1', 'u-1');
    const eraser = new PagedEraser(250, 30);
    let timeLeft = 10_000;
    const deps: ForgetDeps = { forgets, eraser, search: { compact: async () => ({ folded: 0, version: 0, merged: false }) }, clock: fixedClock(), log: new RecordingLog(), settleSeconds: 0, remainingMs: () => timeLeft };

    await expect(forgetUser(forgetJob(receipt), deps)).rejects.toBeInstanceOf(ForgetContinuesError);
    expect((await forgets.latest('u-1'))?.counts).toMatchObject({ objects: 10, items: 0 });
    expect((await forgets.latest('u-1'))?.status).toBe('pending');

    timeLeft = 100_000;
    const done = await forgetUser(forgetJob(receipt), deps);
    expect(done.status).toBe('forgotten');
    expect((await forgets.latest('u-1'))?.counts).toEqual({ items: 250, objects: 30, globalItems: 0, globalIndexObjects: 0 });
    expect(await forgetUser(forgetJob(receipt), deps)).toMatchObject({ status: 'skipped' });
  });

  it('answers the pending receipt to a retried request, and refuses GLOBAL', async () => {
    const forgets = new MemoryForgetLog();
    const jobs = new MemoryJobQueue();
    const first = await requestForget({ forgets, jobs, clock: fixedClock('2026-02-06T14:30:00.000Z') }, 'admin', 'u-2');
    const again = await requestForget({ forgets, jobs, clock: fixedClock('2026-02-06T14:31:00.000Z') }, 'admin', 'u-2');
    expect(again.receipt.requestedAt).toBe(first.receipt.requestedAt);
    expect(new Set(jobs.jobs.map((j) => j.jobId)).size).toBe(1);
    await expect(requestForget({ forgets, jobs, clock: fixedClock() }, 'admin', 'GLOBAL')).rejects.toMatchObject({ kind: 'invalid' });
  });
});
