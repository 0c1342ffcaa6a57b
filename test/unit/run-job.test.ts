/**
 * The reflector's job dispatcher (lib/jobs/run-job.ts): which use case each job kind
 * goes to, and a job asked for before its user was forgotten, or citing a forgotten turn, runs
 * none of them.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import type { ForgetCounts } from '../../lib/forget/forget.port.js';
import { defaultSummarySettings } from '../../lib/summaries/summary.js';
import { modelWithDeadline } from '../../lib/kernel/deadline.js';
import { familyOf, type JobDeps, runJob } from '../../lib/jobs/run-job.js';
import { fixedClock, RecordingLog } from '../../lib/kernel/runtime.fake.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { MemoryForgetLog } from '../../lib/forget/forget.fake.js';
import { MemorySettings } from '../../lib/settings/user-settings.fake.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { recordingWorld } from '../helpers/recording-world.js';

const job = (kind: Job['kind'], requestedAt: string): Job => ({
  type: 'reflector.job',
  version: 1,
  jobId: `${kind}-1-2`,
  userId: 'u1',
  kind,
  trigger: 'turn_count',
  urgency: 1,
  turnIds: [1, 2],
  requestedAt,
});

/** Dependencies any use case would touch throw: only the forget log may be read. */
const untouched = new Proxy(
  {},
  {
    get: (_t, key) =>
      key === 'then'
        ? undefined
        : () => {
            throw new Error(`a use case ran (${String(key)})`);
          },
  },
);

describe('runJob', () => {
  it('sends each kind to its use case', () => {
    expect(
      (['batch', 'event', 'idle-summary', 'session-close', 'manual', 'nightly', 'weekly', 'forget'] as const).map(
        familyOf,
      ),
    ).toEqual(['batch', 'batch', 'summary', 'summary', 'summary', 'nightly', 'weekly', 'forget']);
  });

  it('drops a job asked for before its user was forgotten, whatever its kind, and logs why', async () => {
    const forgets = new MemoryForgetLog();
    const counts = {} as ForgetCounts;
    await forgets.request({
      userId: 'u1',
      requestedAt: '2026-02-06T12:00:00.000Z',
      requestedBy: 'u1',
      status: 'done',
      counts,
    });
    const log = new RecordingLog();
    const deps = {
      reflection: untouched,
      summary: untouched,
      sleepTime: untouched,
      forgets,
      forget: () => untouched,
      log,
    } as unknown as JobDeps;
    for (const kind of ['batch', 'idle-summary', 'nightly', 'weekly'] as const) {
      const outcome = await runJob(job(kind, '2026-02-06T11:00:00.000Z'), deps, {
        retryUnusableOutput: false,
        remainingMs: () => 1000,
      });
      expect(outcome).toEqual({ family: familyOf(kind), status: 'dropped', done: false, usage: null, counts: {} });
    }
    expect(log.entries.map((e) => e.message)).toEqual(
      Array(4).fill('job dropped: its user was forgotten after it was asked for'),
    );
  });

  it('drops a summary job citing a turn forgotten by provenance (req R-DEL-4), and logs why', async () => {
    const log = new RecordingLog();
    const deps = {
      reflection: untouched,
      summary: untouched,
      sleepTime: untouched,
      forgets: new MemoryForgetLog(),
      erasures: { forgottenTurns: async () => new Set([2]) },
      forget: () => untouched,
      log,
    } as unknown as JobDeps;
    const outcome = await runJob(job('idle-summary', '2026-02-06T11:00:00.000Z'), deps, {
      retryUnusableOutput: false,
      remainingMs: () => 1000,
    });
    expect(outcome).toEqual({ family: 'summary', status: 'dropped', done: false, usage: null, counts: {} });
    expect(log.entries.map((e) => e.message)).toEqual(['job dropped: it cites turns forgotten by provenance']);
    // A job citing none of them goes on to its use case (whose stand-in has no stores, so it fails), not dropped.
    const other = { ...deps, erasures: { forgottenTurns: async () => new Set([9]) } } as JobDeps;
    await expect(
      runJob(job('idle-summary', '2026-02-06T11:00:00.000Z'), other, {
        retryUnusableOutput: false,
        remainingMs: () => 1000,
      }),
    ).rejects.toThrow();
    expect(log.entries).toHaveLength(1);
  });

  it("binds the job's model calls to its deadline: a summary's call carries the handler's signal", async () => {
    const w = recordingWorld();
    await w.turns.saveTurns([turn({ userId: 'u1', turnId: 1 }), turn({ userId: 'u1', turnId: 2 })]);
    const model = new ScriptedModel(() => ({}));
    const log = new RecordingLog();
    const summary = {
      turns: w.turns,
      summaries: w.summaries,
      costs: new MemoryCostLedger(),
      settings: new MemorySettings(),
      model,
      clock: fixedClock(),
      log,
      defaults: defaultSummarySettings,
      temperature: 0.6,
      budgetTokens: 4000,
    };
    const deps = {
      reflection: untouched,
      summary,
      sleepTime: untouched,
      forgets: new MemoryForgetLog(),
      erasures: { forgottenTurns: async () => new Set<number>() },
      forget: () => untouched,
      log,
    } as unknown as JobDeps;
    const signal = new AbortController().signal;
    const outcome = await runJob(job('idle-summary', '2026-02-06T11:00:00.000Z'), deps, {
      retryUnusableOutput: false,
      remainingMs: () => 1000,
      signal,
    });
    expect(outcome).toMatchObject({ family: 'summary', status: 'written' });
    expect(model.summaries.map((r) => r.signal)).toEqual([signal]);
  });
});

describe('modelWithDeadline', () => {
  it("adds the signal to every call and keeps the model's output limit; no signal, the model itself", async () => {
    const model = new ScriptedModel(() => ({ ok: true }));
    model.maxOutputTokens = 64_000;
    const signal = new AbortController().signal;
    const bound = modelWithDeadline(model, signal);
    expect(bound.maxOutputTokens).toBe(64_000);
    await bound.reflect({
      system: 's',
      prompt: 'p',
      toolName: 't',
      toolDescription: 'd',
      toolInputSchema: {},
      temperature: 0,
      maxTokens: 10,
    });
    await bound.summarize({ system: 's', prompt: 'p', temperature: 0, maxTokens: 10 });
    expect([model.requests[0]?.signal, model.summaries[0]?.signal]).toEqual([signal, signal]);
    expect(modelWithDeadline(model, undefined)).toBe(model);
  });
});
