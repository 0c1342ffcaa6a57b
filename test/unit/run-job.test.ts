/**
 * The reflector's job dispatcher (lib/use-cases/run-job.ts): which use case each job kind
 * goes to, and a job asked for before its user was forgotten, or citing a forgotten turn, runs
 * none of them.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import type { ForgetCounts } from '../../lib/ports.js';
import { familyOf, type JobDeps, runJob } from '../../lib/use-cases/run-job.js';
import { MemoryForgetLog, RecordingLog } from '../helpers/fakes.js';

const job = (kind: Job['kind'], requestedAt: string): Job => ({ type: 'reflector.job', version: 1, jobId: `${kind}-1-2`, userId: 'u1', kind, trigger: 'turn_count', urgency: 1, turnIds: [1, 2], requestedAt });

/** Dependencies any use case would touch throw: only the forget log may be read. */
const untouched = new Proxy({}, { get: (_t, key) => (key === 'then' ? undefined : () => { throw new Error(`a use case ran (${String(key)})`); }) });

describe('runJob', () => {
  it('sends each kind to its use case', () => {
    expect((['batch', 'event', 'idle-summary', 'session-close', 'manual', 'nightly', 'weekly', 'forget'] as const).map(familyOf)).toEqual(['batch', 'batch', 'summary', 'summary', 'summary', 'nightly', 'weekly', 'forget']);
  });

  it('drops a job asked for before its user was forgotten, whatever its kind, and logs why', async () => {
    const forgets = new MemoryForgetLog();
    const counts = {} as ForgetCounts;
    await forgets.request({ userId: 'u1', requestedAt: '2026-02-06T12:00:00.000Z', requestedBy: 'u1', status: 'done', counts });
    const log = new RecordingLog();
    const deps = { reflection: untouched, summary: untouched, sleepTime: untouched, forgets, forget: () => untouched, log } as unknown as JobDeps;
    for (const kind of ['batch', 'idle-summary', 'nightly', 'weekly'] as const) {
      const outcome = await runJob(job(kind, '2026-02-06T11:00:00.000Z'), deps, { retryUnusableOutput: false, remainingMs: () => 1000 });
      expect(outcome).toEqual({ family: familyOf(kind), status: 'dropped', done: false, usage: null, counts: {} });
    }
    expect(log.entries.map((e) => e.message)).toEqual(Array(4).fill('job dropped: its user was forgotten after it was asked for'));
  });

  it('drops a summary job citing a turn forgotten by provenance (req R-DEL-4), and logs why', async () => {
    const log = new RecordingLog();
    const deps = { reflection: untouched, summary: untouched, sleepTime: untouched, forgets: new MemoryForgetLog(), erasures: { forgottenTurns: async () => new Set([2]) }, forget: () => untouched, log } as unknown as JobDeps;
    const outcome = await runJob(job('idle-summary', '2026-02-06T11:00:00.000Z'), deps, { retryUnusableOutput: false, remainingMs: () => 1000 });
    expect(outcome).toEqual({ family: 'summary', status: 'dropped', done: false, usage: null, counts: {} });
    expect(log.entries.map((e) => e.message)).toEqual(['job dropped: it cites turns forgotten by provenance']);
    // A job citing none of them goes on to its use case (whose stand-in has no stores, so it fails), not dropped.
    const other = { ...deps, erasures: { forgottenTurns: async () => new Set([9]) } } as JobDeps;
    await expect(runJob(job('idle-summary', '2026-02-06T11:00:00.000Z'), other, { retryUnusableOutput: false, remainingMs: () => 1000 })).rejects.toThrow();
    expect(log.entries).toHaveLength(1);
  });
});
