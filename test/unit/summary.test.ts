import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import { parseFrontMatter } from '../../lib/domain/front-matter.js';
import { DEFAULT_SUMMARY_PROMPT, defaultSummarySettings } from '../../lib/domain/summary.js';
import { summarizeOffline } from '../../lib/offline-model/rule-reflector.js';
import { ModelUnavailableError, UnusableModelOutputError } from '../../lib/ports.js';
import { recordFailedAttempt } from '../../lib/use-cases/run-reflection.js';
import { runSummary } from '../../lib/use-cases/run-summary.js';
import { MemoryCostLedger, fixedClock, MemoryBatchLogStore, MemorySummaryStore, MemorySettings, MemoryTurnStore, RecordingLog, ScriptedModel, stopped, turn } from '../helpers/fakes.js';

const job = (kind: Job['kind'] = 'idle-summary'): Job => ({
  type: 'reflector.job', version: 1, jobId: 'summary-1-3', userId: 'alice', kind, trigger: 'idle', urgency: 0, turnIds: [1, 2, 3], requestedAt: '2026-02-06T14:30:00Z',
});

async function setup() {
  const turns = new MemoryTurnStore();
  await turns.saveTurns([1, 2, 3].map((turnId) => turn({ userId: 'alice', turnId, query: `I adopted a beagle named Rex, part ${turnId}` })));
  const model = new ScriptedModel(() => ({}), (req) => `Summary of ${req.system.split('[Turn ').length - 1} turns.`);
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
    // One document for the pair (issue 19: one S3 PUT): the system turn, then the assistant turn.
    expect(pair?.document.key).toBe('users/alice/summaries/summary-1-3.md');
    expect(parseFrontMatter(pair?.document.markdown ?? '')).toMatchObject({
      meta: { type: 'summary', summary_id: 'summary-1-3', deleted: false, source_turns: [1, 2, 3] },
      body: `## system\n\n${DEFAULT_SUMMARY_PROMPT}\n\n## assistant\n\nSummary of 3 turns.\n`,
    });
  });

  it('dates the summary by its input time, the job\'s request, however late a delivery writes it (issue 20 item 14)', async () => {
    const { deps } = await setup();
    await runSummary({ ...job(), requestedAt: '2026-02-01T09:00:00.000Z' }, { ...deps, clock: fixedClock('2026-02-09T10:00:00.000Z') });
    expect(deps.summaries.pairs.get('alice/summary-1-3')?.createdAt).toBe('2026-02-01T09:00:00.000Z');
  });

  it('retries an empty answer when the job will be delivered again; writes it on the last delivery', async () => {
    const { deps } = await setup();
    const silent = new ScriptedModel(() => ({}), () => '');
    await expect(runSummary(job(), { ...deps, model: silent, retryUnusableOutput: true })).rejects.toBeInstanceOf(UnusableModelOutputError);
    expect(deps.summaries.pairs.size).toBe(0);
    expect((await runSummary(job(), { ...deps, model: silent })).status).toBe('written');
  });

  it('asks once more with twice the budget when the summary was cut, and logs why the model stopped', async () => {
    const { deps } = await setup();
    let calls = 0;
    const cutOnce = new ScriptedModel(() => ({}), () => (++calls === 1 ? stopped('max_tokens', 'Turns 1–3: the user adop') : 'Turns 1–3: the user adopted Rex.'));
    const out = await runSummary(job(), { ...deps, model: cutOnce, retryUnusableOutput: true });
    expect(out).toMatchObject({ status: 'written', text: 'Turns 1–3: the user adopted Rex.' });
    expect(cutOnce.summaries.map((r) => r.maxTokens)).toEqual([2000, 4000]);
    expect(deps.log.entries.find((e) => e.message === 'summary written')?.extra).toMatchObject({ stopReason: 'end_turn' });
  });

  it('a summary cut again is asked on the next delivery, and written on the last saying it was cut', async () => {
    const { deps } = await setup();
    const cut = new ScriptedModel(() => ({}), () => stopped('max_tokens', 'Turns 1–3: the user adop'));
    await expect(runSummary(job(), { ...deps, model: cut, retryUnusableOutput: true })).rejects.toThrow(/cut at its output budget of 2000 tokens, and again at 4000/);
    expect(deps.summaries.pairs.size).toBe(0);
    const out = await runSummary(job(), { ...deps, model: cut });
    expect(out).toMatchObject({ status: 'written', text: "Turns 1–3: the user adop… [summary cut at the model's output budget]" });
  });

  it('is idempotent, follows a user\'s own prompt and max tokens, and can be switched off', async () => {
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
    const context = '### 2026-02-06, session s\n[Turn 4, 14:00] User: I work as a nurse at the county hospital. Any tips for night shifts?\nAgent: I am not sure.';
    const text = summarizeOffline(context);
    expect(text).toContain('Turns 4–4');
    expect(text).toContain('I work as a nurse at the county hospital.');
    expect(text).toContain('Still open: Any tips for night shifts?');
    expect(summarizeOffline(context)).toBe(text);
  });
});

describe('a job failing its last try', () => {
  it('is logged as aborted outside the commit marker, so a redrive still runs it', async () => {
    const batchLogs = new MemoryBatchLogStore();
    await recordFailedAttempt({ ...job('batch'), jobId: 'batch-1-3' }, new ModelUnavailableError('ThrottlingException'), { batchLogs, clock: fixedClock(), log: new RecordingLog() });
    expect(batchLogs.failures).toEqual([expect.objectContaining({ batch_id: 'batch-1-3', status: 'aborted', error: { message: expect.stringContaining('dead-letter') } })]);
    expect(await batchLogs.exists('alice', 'batch-1-3')).toBe(false);
  });
});
