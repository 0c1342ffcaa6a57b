import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import { parseFrontMatter } from '../../lib/kernel/front-matter.js';
import { dayUnits } from '../../lib/sleep-time/nightly.js';
import {
  capCarriedText,
  DEFAULT_SUMMARY_PROMPT,
  defaultSummarySettings,
  MAX_CARRIED_SUMMARY_CHARS,
  SUMMARY_CARRIED_PREAMBLE,
  SUMMARY_CONTEXT_PREAMBLE,
} from '../../lib/summaries/summary.js';
import { summarizeOffline } from '../../lib/offline-model/rule-reflector.js';
import { ModelUnavailableError, UnusableModelOutputError } from '../../lib/model/language-model.port.js';
import { recordFailedAttempt } from '../../lib/batches/run-reflection.js';
import { runSummary } from '../../lib/summaries/run-summary.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { MemorySettings } from '../../lib/settings/user-settings.fake.js';
import { MemoryBatchLogStore } from '../../lib/batches/batch-log.fake.js';
import { MemoryTurnStore, turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel, stopped } from '../../lib/model/language-model.fake.js';
import { fixedClock, RecordingLog } from '../../lib/kernel/runtime.fake.js';
import { MemorySummaryStore } from '../../lib/summaries/summary.fake.js';

const job = (kind: Job['kind'] = 'idle-summary'): Job => ({
  type: 'reflector.job',
  version: 1,
  jobId: 'summary-1-3',
  userId: 'alice',
  kind,
  trigger: 'idle',
  urgency: 0,
  turnIds: [1, 2, 3],
  requestedAt: '2026-02-06T14:30:00Z',
});

async function setup() {
  const turns = new MemoryTurnStore();
  await turns.saveTurns(
    [1, 2, 3].map((turnId) => turn({ userId: 'alice', turnId, query: `I adopted a beagle named Rex, part ${turnId}` })),
  );
  const model = new ScriptedModel(
    () => ({}),
    (req) => `Summary of ${req.system.split('[Turn ').length - 1} turns.`,
  );
  const deps = {
    turns,
    summaries: new MemorySummaryStore(),
    costs: new MemoryCostLedger(),
    settings: new MemorySettings(),
    model,
    clock: fixedClock(),
    log: new RecordingLog(),
    defaults: defaultSummarySettings,
    temperature: 0.6,
    budgetTokens: 4000,
  };
  return { deps, model };
}

describe('summaries after inactivity (req R-SUM)', () => {
  it('asks the model to summarise the current context and stores a system + assistant turn pair', async () => {
    const { deps, model } = await setup();
    const out = await runSummary(job(), deps);
    expect(out).toMatchObject({ status: 'written', text: 'Summary of 3 turns.', sourceTurns: [1, 2, 3] });
    expect(model.summaries[0]).toMatchObject({ prompt: DEFAULT_SUMMARY_PROMPT, maxTokens: 2000 });
    const pair = deps.summaries.pairs.get('alice/summary-1-3');
    // One document for the pair (one S3 PUT): the system turn, then the assistant turn.
    expect(pair?.document.key).toBe('users/alice/summaries/summary-1-3.md');
    expect(parseFrontMatter(pair?.document.markdown ?? '')).toMatchObject({
      meta: { type: 'summary', summary_id: 'summary-1-3', deleted: false, source_turns: [1, 2, 3] },
      body: `## system\n\n${DEFAULT_SUMMARY_PROMPT}\n\n## assistant\n\nSummary of 3 turns.\n`,
    });
  });

  it("dates the summary by its input time, the job's request, however late a delivery writes it", async () => {
    const { deps } = await setup();
    await runSummary(
      { ...job(), requestedAt: '2026-02-01T09:00:00.000Z' },
      { ...deps, clock: fixedClock('2026-02-09T10:00:00.000Z') },
    );
    expect(deps.summaries.pairs.get('alice/summary-1-3')?.createdAt).toBe('2026-02-01T09:00:00.000Z');
  });

  it('retries an empty answer when the job will be delivered again; writes it on the last delivery', async () => {
    const { deps } = await setup();
    const silent = new ScriptedModel(
      () => ({}),
      () => '',
    );
    await expect(runSummary(job(), { ...deps, model: silent, retryUnusableOutput: true })).rejects.toBeInstanceOf(
      UnusableModelOutputError,
    );
    expect(deps.summaries.pairs.size).toBe(0);
    expect((await runSummary(job(), { ...deps, model: silent })).status).toBe('written');
  });

  it('asks once more with twice the budget when the summary was cut, and logs why the model stopped', async () => {
    const { deps } = await setup();
    let calls = 0;
    const cutOnce = new ScriptedModel(
      () => ({}),
      () => (++calls === 1 ? stopped('max_tokens', 'Turns 1–3: the user adop') : 'Turns 1–3: the user adopted Rex.'),
    );
    const out = await runSummary(job(), { ...deps, model: cutOnce, retryUnusableOutput: true });
    expect(out).toMatchObject({ status: 'written', text: 'Turns 1–3: the user adopted Rex.' });
    expect(cutOnce.summaries.map((r) => r.maxTokens)).toEqual([2000, 4000]);
    expect(deps.log.entries.find((e) => e.message === 'summary written')?.extra).toMatchObject({
      stopReason: 'end_turn',
    });
  });

  it('a summary cut again is asked on the next delivery, and written on the last saying it was cut', async () => {
    const { deps } = await setup();
    const cut = new ScriptedModel(
      () => ({}),
      () => stopped('max_tokens', 'Turns 1–3: the user adop'),
    );
    await expect(runSummary(job(), { ...deps, model: cut, retryUnusableOutput: true })).rejects.toThrow(
      /cut at its output budget of 2000 tokens, and again at 4000/,
    );
    expect(deps.summaries.pairs.size).toBe(0);
    const out = await runSummary(job(), { ...deps, model: cut });
    expect(out).toMatchObject({
      status: 'written',
      text: "Turns 1–3: the user adop… [summary cut at the model's output budget]",
    });
  });

  it("is idempotent, follows a user's own prompt and max tokens, and can be switched off", async () => {
    const { deps, model } = await setup();
    await runSummary(job(), deps);
    expect((await runSummary(job(), deps)).status).toBe('already_done');
    expect(model.summaries).toHaveLength(1);
    deps.settings.byUser.set('bob', { prompt: 'Summarise in one line.', maxTokens: 100 });
    await deps.turns.saveTurns([turn({ userId: 'bob', turnId: 1 })]);
    await runSummary({ ...job('session-close'), userId: 'bob', turnIds: [1] }, deps);
    expect(model.summaries[1]).toMatchObject({ prompt: 'Summarise in one line.', maxTokens: 100 });
    deps.settings.byUser.set('carol', { enabled: false });
    expect((await runSummary({ ...job('manual'), userId: 'carol' }, deps)).status).toBe('disabled');
  });

  it('the offline model summarises extractively and deterministically', () => {
    const context =
      '### 2026-02-06, session s\n[Turn 4, 14:00] User: I work as a nurse at the county hospital. Any tips for night shifts?\nAgent: I am not sure.';
    const text = summarizeOffline(context);
    expect(text).toContain('Turns 4–4');
    expect(text).toContain('I work as a nurse at the county hospital.');
    expect(text).toContain('Still open: Any tips for night shifts?');
    expect(summarizeOffline(context)).toBe(text);
  });
});

describe("a summary carries its session's previous summary forward (req R-SUM-4, seed 003: the whole working context)", () => {
  const jobOf = (jobId: string, turnIds: number[], kind: Job['kind'] = 'idle-summary'): Job => ({
    ...job(kind),
    jobId,
    turnIds,
  });
  async function session() {
    const { deps } = await setup();
    await deps.turns.saveTurns([
      ...[4, 5, 6].map((turnId) => turn({ userId: 'alice', turnId, query: `Rex chewed the sofa, part ${turnId}` })),
      turn({ userId: 'alice', turnId: 7, sessionId: 's-2', query: 'A new day: my sister Anna visits.' }),
    ]);
    const model = new ScriptedModel(
      () => ({}),
      (req) => summarizeOffline(req.system),
    );
    return { deps: { ...deps, model }, model };
  }

  it("reads the previous summary's text, not its turns, and stands for the whole session", async () => {
    const { deps, model } = await session();
    const first = await runSummary(jobOf('summary-1-3', [1, 2, 3]), deps);
    expect(first).toMatchObject({ status: 'written', sourceTurns: [1, 2, 3] });
    const second = await runSummary(jobOf('summary-4-6', [4, 5, 6]), deps);
    const system = model.summaries[1]?.system ?? '';
    expect(system).toContain(
      `${SUMMARY_CARRIED_PREAMBLE}\n\n### Summary of turns 1–3\n${first.status === 'written' ? first.text : ''}\n\n### 2026-02-06\n[Turn 4] User:`,
    );
    expect(system).not.toContain('[Turn 1]');
    // It stands for turns 1–6, quoting both parts; its provenance is every turn its text came from.
    expect(second).toMatchObject({
      status: 'written',
      sourceTurns: [1, 2, 3, 4, 5, 6],
      text: expect.stringMatching(/^Turns 1–6: the user talked about .*rex/),
    });
    const pair = deps.summaries.pairs.get('alice/summary-4-6');
    expect(pair).toMatchObject({ sessionId: 's-1', carried: 'summary-1-3', sourceTurns: [1, 2, 3, 4, 5, 6] });
    expect(parseFrontMatter(pair?.document.markdown ?? '').meta).toMatchObject({
      carried: 'summary-1-3',
      source_turns: [1, 2, 3, 4, 5, 6],
    });
    expect(
      deps.log.entries.find((e) => e.message === 'summary written' && e.extra?.id === 'summary-4-6')?.extra,
    ).toMatchObject({ carried: 'summary-1-3', turns: 3 });
    // Another session's summary carries nothing of this one.
    await runSummary(jobOf('summary-7-7', [7]), deps);
    expect(model.summaries[2]?.system.startsWith(`${SUMMARY_CONTEXT_PREAMBLE}\n\n`)).toBe(true);
    expect(deps.summaries.pairs.get('alice/summary-7-7')).toMatchObject({ sourceTurns: [7], sessionId: 's-2' });
    expect(deps.summaries.pairs.get('alice/summary-7-7')?.carried).toBeUndefined();
  });

  it('carries an edited summary as edited, never a deleted one, and none into a summary of the same turns again', async () => {
    const { deps, model } = await session();
    await runSummary(jobOf('summary-1-3', [1, 2, 3]), deps);
    await deps.summaries.edit('alice', 'summary-1-3', {
      text: 'Alice adopted Rex, a beagle.',
      by: 'alice',
      at: '2026-02-06T15:00:00Z',
    });
    await runSummary(jobOf('summary-4-5', [4, 5]), deps);
    expect(model.summaries[1]?.system).toContain('### Summary of turns 1–3\nAlice adopted Rex, a beagle.\n');
    await deps.summaries.softDelete('alice', 'summary-4-5');
    await deps.summaries.softDelete('alice', 'summary-1-3');
    await runSummary(jobOf('summary-6-6', [6]), deps);
    expect(model.summaries[2]?.system).not.toContain('### Summary of turns');
    expect(deps.summaries.pairs.get('alice/summary-6-6')?.sourceTurns).toEqual([6]);
    // A manual summary of turns a summary already covered reads them again instead.
    await runSummary(jobOf('manual-6-6-0', [6], 'manual'), deps);
    expect(model.summaries[3]?.system).not.toContain('### Summary of turns');
  });

  it('places a summary written before summaries recorded their session by its newest turn', async () => {
    const { deps, model } = await session();
    await runSummary(jobOf('summary-1-3', [1, 2, 3]), deps);
    const old = deps.summaries.pairs.get('alice/summary-1-3');
    if (old) delete old.sessionId;
    await runSummary(jobOf('summary-4-6', [4, 5, 6]), deps);
    expect(model.summaries[1]?.system).toContain('### Summary of turns 1–3\n');
    expect(deps.summaries.pairs.get('alice/summary-4-6')?.carried).toBe('summary-1-3');
  });

  it("is what the nightly reads for its session's turns, not the summary it carried as well", () => {
    const turns = [1, 2, 3, 4].map((turnId) => turn({ userId: 'alice', turnId }));
    const earlier = { id: 'summary-1-2', text: 'A.', sourceTurns: [1, 2] };
    const carrying = { id: 'summary-3-4', text: 'A, then B.', sourceTurns: [1, 2, 3, 4] };
    expect(
      dayUnits(turns, [earlier, carrying], new Set()).map((u) => [u.summary?.id, u.turns.map((t) => t.turnId)]),
    ).toEqual([['summary-3-4', [1, 2, 3, 4]]]);
  });

  it("caps the carried text and takes it out of the turns' budget", async () => {
    const { deps, model } = await session();
    await runSummary(jobOf('summary-1-3', [1, 2, 3]), deps);
    const long = `${'Rex likes long walks by the river. '.repeat(300)}`;
    await deps.summaries.edit('alice', 'summary-1-3', { text: long, by: 'alice', at: '2026-02-06T15:00:00Z' });
    expect(capCarriedText(long).length).toBeLessThanOrEqual(MAX_CARRIED_SUMMARY_CHARS);
    expect(capCarriedText(long).endsWith('river. […]')).toBe(true);
    expect(capCarriedText('Short.')).toBe('Short.');
    // A budget that leaves room for the carried text (≈ 505 tokens) and two turns: the oldest turn goes, the carried text stays whole.
    await runSummary(jobOf('summary-4-6', [4, 5, 6]), { ...deps, budgetTokens: 540 });
    const system = model.summaries[1]?.system ?? '';
    expect(system).toContain(capCarriedText(long));
    expect(system).not.toContain('[Turn 4]');
    expect(system).toContain('[Turn 6]');
    expect(deps.summaries.pairs.get('alice/summary-4-6')?.sourceTurns).toEqual([1, 2, 3, 5, 6]);
  });
});

describe('a job failing its last try', () => {
  it('is logged as aborted outside the commit record, so a redrive still runs it', async () => {
    const batchLogs = new MemoryBatchLogStore();
    await recordFailedAttempt(
      { ...job('batch'), jobId: 'batch-1-3' },
      new ModelUnavailableError('ThrottlingException'),
      { batchLogs, clock: fixedClock(), log: new RecordingLog() },
    );
    expect(batchLogs.failures).toEqual([
      expect.objectContaining({
        batch_id: 'batch-1-3',
        status: 'aborted',
        error: { message: expect.stringContaining('dead-letter') },
      }),
    ]);
    expect(await batchLogs.exists('alice', 'batch-1-3')).toBe(false);
  });
});
