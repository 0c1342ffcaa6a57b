import { describe, expect, it, vi } from 'vitest';
import type { Job } from '../../events/job.js';
import type { BatchLog } from '../../lib/batches/batch-log.js';
import { defaultSleepTimeConfig } from '../../lib/sleep-time/config.js';
import { estimateCostUsd } from '../../lib/sleep-time/model-prices.js';
import {
  chunkTurnGroups,
  chunkTurns,
  type Finding,
  gateFinding,
  leftOut,
  mergeFindings,
  NIGHTLY_MEMORIES,
  NIGHTLY_SYSTEM_PROMPT,
  NIGHTLY_TOOL,
  NightlyOutputSchema,
  nightlyCallCeiling,
  nightlyPrompt,
  pickChunks,
  pickWithinBudget,
} from '../../lib/sleep-time/nightly.js';
import { TOOL_USE_SYSTEM_PROMPT_TOKENS } from '../../lib/model/bedrock-models.js';
import { modelSchemaOf } from '../../lib/model/model-schema.js';
import { ModelUnavailableError, type LanguageModel } from '../../lib/model/language-model.port.js';
import { fireTimesBetween } from '../../lib/sleep-time/schedule.js';
import { selectUsers, windowDays } from '../../lib/sleep-time/selection.js';
import { pickWeekWithinBudget, weeklyCallCeiling, WeeklyOutputSchema } from '../../lib/sleep-time/weekly.js';
import { type AssessedRun, computeSelfAssessment } from '../../lib/sleep-time/self-assessment.js';
import { nightlyOffline } from '../../lib/offline-model/rule-sleep-time.js';
import { runNightly, runWeekly, selfAssessment } from '../../lib/sleep-time/run-sleep-time.js';
import { expirySweep, nightlySweep, weeklySweep } from '../../lib/jobs/sweeps.js';
import { sleepTimeRuns } from '../../lib/summaries/summaries-api.js';
import { tombstonesOf } from '../../lib/forget/tombstone.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { MemoryErasureLog } from '../../lib/forget/forget.fake.js';
import { MemoryItems } from '../../lib/items/memory-item.fake.js';
import { MemoryGraphStore } from '../../lib/graph/graph.fake.js';
import { MemoryExpiryLog, MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';
import { MemorySleepTimeLog } from '../../lib/sleep-time/sleep-time-log.fake.js';
import { MemoryJobQueue } from '../../lib/jobs/job-queue.fake.js';
import { MemoryTurnStore, turn } from '../../lib/turns/turn.fake.js';
import { MemoryActivity } from '../../lib/signals/signal-state.fake.js';
import { ScriptedModel, stopped } from '../../lib/model/language-model.fake.js';
import { fixedClock, RecordingLog } from '../../lib/kernel/runtime.fake.js';
import { MemorySummarySource } from '../../lib/summaries/summary.fake.js';

const now = new Date('2026-02-07T03:00:00Z');

describe('schedules on a simulated clock', () => {
  it('finds every fire time an EventBridge cron passes between two instants', () => {
    const nights = fireTimesBetween(
      'cron(0 3 * * ? *)',
      new Date('2026-02-01T12:00:00Z'),
      new Date('2026-02-04T03:00:00Z'),
    );
    expect(nights.map((d) => d.toISOString())).toEqual([
      '2026-02-02T03:00:00.000Z',
      '2026-02-03T03:00:00.000Z',
      '2026-02-04T03:00:00.000Z',
    ]);
    const sundays = fireTimesBetween(
      'cron(0 4 ? * SUN *)',
      new Date('2026-02-01T00:00:00Z'),
      new Date('2026-02-16T00:00:00Z'),
    );
    expect(sundays.map((d) => d.toISOString())).toEqual([
      '2026-02-01T04:00:00.000Z',
      '2026-02-08T04:00:00.000Z',
      '2026-02-15T04:00:00.000Z',
    ]);
  });
});

describe('nightly selection (req R-SLP-1 to R-SLP-8)', () => {
  const users: Array<{ userId: string; activity: Record<string, number> }> = [
    { userId: 'busy', activity: { '2026-02-06': 7 } },
    { userId: 'quiet', activity: { '2026-02-06': 2 } },
    { userId: 'split', activity: { '2026-02-06': 3, '2026-02-07': 3 } },
    { userId: 'old', activity: { '2026-02-01': 40 } },
    { userId: 'ran', activity: { '2026-02-06': 9 } },
  ];

  it('takes users with at least N messages in the look-back window and skips those reflected within it', () => {
    const days = windowDays(now, 24);
    expect(days).toEqual(['2026-02-06', '2026-02-07']);
    const lastRun = (id: string) =>
      id === 'ran' ? '2026-02-06T12:00:00Z' : id === 'busy' ? '2026-02-05T03:00:00Z' : null;
    const sel = selectUsers(users, days, 5, lastRun, now, 24);
    expect(sel.selected.map((s) => s.userId)).toEqual(['busy', 'split']);
    expect(sel.skipped).toEqual(
      expect.arrayContaining([
        { userId: 'quiet', messages: 2, reason: 'too_few_messages' },
        { userId: 'old', messages: 0, reason: 'too_few_messages' },
        { userId: 'ran', messages: 9, reason: 'already_reflected' },
      ]),
    );
    expect(
      selectUsers(users, windowDays(now, 24 * 7), 5, () => null, now, 24 * 7).selected.map((s) => s.userId),
    ).toContain('old');
  });

  it('the sweep queries the activity index by day and fans out one job per user, once per run', async () => {
    const activity = new MemoryActivity();
    activity.users.push(
      { userId: 'busy', activity: { '2026-02-06': 6 } },
      { userId: 'quiet', activity: { '2026-02-06': 1 } },
    );
    const turns = new MemoryTurnStore();
    await turns.saveTurns(
      [1, 2, 3].map((turnId) => turn({ userId: 'busy', turnId, timestamp: `2026-02-06T1${turnId}:00:00Z` })),
    );
    await turns.saveTurns([turn({ userId: 'busy', turnId: 0 + 100, timestamp: '2026-01-01T00:00:00Z' })]);
    const jobs = new MemoryJobQueue();
    const deps = {
      activity,
      runs: new MemorySleepTimeLog(),
      turns,
      jobs,
      knowledge: new MemoryKnowledgeStore(),
      expiryLog: new MemoryExpiryLog(),
      items: new MemoryItems(),
      config: defaultSleepTimeConfig,
      log: new RecordingLog(),
    };
    const r = await nightlySweep(now, deps);
    expect(r).toMatchObject({ selected: 1, skipped: 1 });
    expect(jobs.jobs).toEqual([
      expect.objectContaining({
        userId: 'busy',
        kind: 'nightly',
        jobId: 'nightly-202602070300',
        turnIds: [1, 2, 3],
        requestedAt: now.toISOString(),
      }),
    ]);
    const weekly = await weeklySweep(now, deps);
    expect(weekly.jobs).toEqual(['busy:weekly-202602070300', 'quiet:weekly-202602070300']);
  });
});

const finding = (f: Partial<Finding>): Finding => ({
  category: 'pattern',
  confidence: 'HIGH',
  statement: 'The user keeps coming back to reef tanks.',
  evidence_turns: [1, 2],
  ...f,
});

describe('nightly findings: gating, chunking, merging', () => {
  it('stores preferences only at HIGH, the rest at HIGH or MEDIUM, each with its evidence rule', () => {
    expect(gateFinding(finding({}))).toBeNull();
    expect(gateFinding(finding({ confidence: 'MEDIUM' }))).toBeNull();
    expect(gateFinding(finding({ confidence: 'LOW' }))).toMatch(/LOW/);
    expect(gateFinding(finding({ evidence_turns: [1] }))).toMatch(/2 instances/);
    expect(gateFinding(finding({ category: 'preference', confidence: 'MEDIUM', evidence_turns: [1, 2, 3] }))).toMatch(
      /HIGH/,
    );
    expect(gateFinding(finding({ category: 'preference', evidence_turns: [1, 2] }))).toMatch(/3 instances/);
    expect(gateFinding(finding({ category: 'preference', evidence_turns: [1, 2, 3] }))).toBeNull();
    expect(gateFinding(finding({ category: 'contradiction', sides: ['only one'] }))).toMatch(/both sides/);
    expect(gateFinding(finding({ category: 'correction' }))).toMatch(/wrong/);
    expect(
      gateFinding(finding({ category: 'correction', wrong: '20 gallons', right: '40 gallons', evidence_turns: [3] })),
    ).toBeNull();
    expect(gateFinding(finding({ category: 'relationship', subject: 'Rex', relationship: 'is' }))).toMatch(/triple/);
  });

  it("chunks by token budget and merges the chunks' findings without duplicates", () => {
    const turns = Array.from({ length: 12 }, (_, i) =>
      turn({ turnId: i + 1, query: 'q'.repeat(400), response: 'r'.repeat(400) }),
    );
    const chunks = chunkTurns(turns, 1000);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join('\n')).toContain('[Turn 12]');
    const merged = mergeFindings([
      finding({ evidence_turns: [1, 2], confidence: 'MEDIUM' }),
      finding({ evidence_turns: [7, 9], statement: 'The user keeps coming back to reef tanks again.' }),
      finding({ category: 'unresolved', statement: 'Which lighting suits corals?', evidence_turns: [4] }),
    ]);
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({ confidence: 'HIGH', evidence_turns: [1, 2, 7, 9] });
  });
});

describe('nightly and weekly reflection runs', () => {
  const job = (kind: 'nightly' | 'weekly', turnIds: number[] = []): Job => ({
    type: 'reflector.job',
    version: 1,
    jobId: `${kind}-202602070300`,
    userId: 'alice',
    kind,
    trigger: 'schedule',
    urgency: 0,
    turnIds,
    requestedAt: now.toISOString(),
  });

  async function deps(reply: (prompt: string) => unknown) {
    const turns = new MemoryTurnStore();
    await turns.saveTurns(
      [
        'I love jazz',
        'I love jazz records',
        'I love jazz clubs',
        'My sister Anna lives in Lyon',
        'Actually the club is in Paris, not Lyon',
      ].map((query, i) =>
        turn({
          userId: 'alice',
          turnId: i + 1,
          sessionId: i < 3 ? 's1' : 's2',
          query,
          timestamp: '2026-02-06T20:00:00Z',
        }),
      ),
    );
    const model = new ScriptedModel((req) => reply(req.prompt));
    return {
      turns,
      knowledge: new MemoryKnowledgeStore(),
      runs: new MemorySleepTimeLog(),
      summaries: new MemorySummarySource(),
      graph: new MemoryGraphStore(),
      costs: new MemoryCostLedger(),
      items: new MemoryItems(),
      model,
      clock: fixedClock(),
      log: new RecordingLog(),
      // About three turns a chunk: the three "I love jazz" land together, the rest in a second chunk.
      config: { ...defaultSleepTimeConfig, chunkTokens: 60 },
    };
  }

  it('nightly: chunks, merges, gates and stores findings with a [reflection:category] source; logs the run with tokens and cost', async () => {
    const d = await deps((prompt) => nightlyOffline(prompt));
    const files = vi.spyOn(d.knowledge, 'writeKnowledgeFiles');
    const changes = vi.spyOn(d.knowledge, 'updateKnowledgeIndex');
    const out = await runNightly(job('nightly', [1, 2, 3, 4, 5]), d);
    if (out.status !== 'completed') throw new Error(out.reason);
    expect(out.run.chunks).toBeGreaterThan(1);
    // Every finding the run stored and the facts' sweep, in one change of the knowledge index (one snapshot).
    expect(changes).toHaveBeenCalledTimes(1);
    expect(files.mock.calls[0]?.[1]).toHaveLength(out.run.memoriesStored);
    expect(out.run.memoriesStored).toBeGreaterThanOrEqual(2);
    expect(out.run).toMatchObject({
      messagesReviewed: 5,
      sessionsReviewed: 2,
      tokens: { input: expect.any(Number) },
      model: 'scripted',
    });
    expect(out.run.tokens.input).toBe(10 * out.run.chunks);
    const paths = [...d.knowledge.knowledgeFiles.keys()];
    expect(paths).toEqual(
      expect.arrayContaining([
        'alice/Reflections/preference/the_user_likes_jazz.md',
        'alice/Reflections/relationship/the_user_has_sister_anna.md',
      ]),
    );
    expect(d.knowledge.knowledgeFiles.get('alice/Reflections/preference/the_user_likes_jazz.md')).toContain(
      'source: "[reflection:preference]"',
    );
    expect(out.run.findingsRejected.length + out.run.memoriesStored).toBe(
      Object.values(out.run.findingsByCategory).reduce((a, b) => a + b, 0),
    );
    // The relationship triple joins the relation graph, with the run as provenance; the hygiene sweep ran.
    expect(out.run.graph).toMatchObject({ edges: 1, merged: 0, pruned: 0 });
    const { edges } = await d.graph.load('alice');
    expect(edges).toEqual([
      expect.objectContaining({
        id: 'user|has_sister|anna',
        confidence: 0.85,
        verifiedAt: '2026-02-07T03:00:00.000Z',
        provenance: [expect.objectContaining({ source: 'nightly', turns: [4] })],
      }),
    ]);
    expect((await runNightly(job('nightly', [1, 2, 3, 4, 5]), d)).status).toBe('already_done');
  });

  it('nightly: a finding a person deleted is rejected (its tombstone, req R-DEL-2), stored never again, and its edge not made', async () => {
    const first = await deps((prompt) => nightlyOffline(prompt));
    const stored = await runNightly(job('nightly', [1, 2, 3, 4, 5]), first);
    if (stored.status !== 'completed') throw new Error(stored.reason);
    const found = await first.knowledge.loadKnowledge();
    const deleted = found.filter((d) => /the_user_likes_jazz|the_user_has_sister_anna/.test(d.id));
    expect(deleted.length).toBe(2);
    const erasures = new MemoryErasureLog();
    await erasures.bury(
      'alice',
      deleted.flatMap((d) => tombstonesOf(d)),
    );
    const again = { ...(await deps((prompt) => nightlyOffline(prompt))), erasures };
    const out = await runNightly(job('nightly', [1, 2, 3, 4, 5]), again);
    if (out.status !== 'completed') throw new Error(out.reason);
    const ids = (await again.knowledge.loadKnowledge()).map((d) => d.id);
    for (const d of deleted) expect(ids).not.toContain(d.id);
    expect(out.run.findingsRejected.filter((r) => r.reason.startsWith('deleted'))).toHaveLength(2);
    expect(out.run.memoriesStored).toBe(stored.run.memoriesStored - 2);
    expect((await again.graph.load('alice')).edges).toEqual([]);
  });

  it('nightly: turns a summary covers are read through it, but those of an aborted batch; the rest as said', async () => {
    const d = await deps((prompt) => nightlyOffline(prompt));
    const batch = (turns: number[], status: BatchLog['status'] = 'completed') =>
      ({
        batch_id: `batch-${turns[0]}`,
        user_id: 'alice',
        status,
        timestamp: '2026-02-06T21:00:00Z',
        turns_reviewed: turns,
      }) as BatchLog;
    // Turns 1–2: batched and summarised. Turn 3: summarised, no batch yet (the next mines it).
    // Turn 4: summarised, but its batch was aborted (none will). Turn 5: not summarised.
    d.summaries.logs.push(batch([1, 2]), batch([4], 'aborted'));
    d.summaries.texts.push({
      userId: 'alice',
      id: 'summary-1-4',
      createdAt: '2026-02-06T21:00:00Z',
      text: 'Turns 1–4: the user talked about jazz.\nThey said: I love jazz records. I love jazz clubs.',
      sourceTurns: [1, 2, 3, 4],
    });
    const out = await runNightly(job('nightly', [1, 2, 3, 4, 5]), { ...d, config: defaultSleepTimeConfig });
    if (out.status !== 'completed') throw new Error(out.reason);
    const prompts = d.model.requests.map((r) => r.prompt).join('\n');
    expect(prompts).toContain('### Summary of turns 1–3\nTurns 1–4: the user talked about jazz.');
    for (const said of ['I love jazz records', 'I love jazz clubs']) expect(prompts).not.toContain(`User: ${said}`);
    expect(prompts).toContain('[Turn 4] User: My sister Anna lives in Lyon');
    expect(prompts).toContain('[Turn 5] User: Actually the club is in Paris, not Lyon');
    expect(out.run).toMatchObject({ messagesReviewed: 5, summariesReviewed: 1, turnsSummarised: 3 });
    // Findings from the summary cite the turns its heading names.
    expect(out.run.stored.map((s) => s.statement)).toContain("Anna is the user's sister.");
  });

  it("nightly: a cut chunk is asked again with a larger budget; cut again, it is the run's error on the last delivery", async () => {
    let calls = 0;
    const d = await deps((prompt) =>
      ++calls === 1 ? stopped('max_tokens', '{"findings": [') : nightlyOffline(prompt),
    );
    const out = await runNightly(job('nightly', [1, 2, 3, 4, 5]), { ...d, retryUnusableOutput: true });
    if (out.status !== 'completed') throw new Error(out.reason);
    // The chunks are asked at once: one of them (the first answered) was cut and asked again with twice the budget.
    expect(d.model.requests.map((r) => r.maxTokens).sort((a, b) => a - b)).toEqual([
      ...Array.from({ length: out.run.chunks }, () => 1500),
      3000,
    ]);
    expect(out.run.errors).toEqual([]);
    expect(out.run.stopReasons).toEqual(
      Object.fromEntries(Array.from({ length: out.run.chunks }, (_, i) => [`chunk-${i}`, 'tool_use'])),
    );
    expect(out.run.budgetRetries).toEqual({ calls: 1, inputTokens: 10, outputTokens: 5 });
    expect(out.run.tokens.input).toBe(10 * out.run.chunks);

    const cut = await deps(() => stopped('max_tokens', '{"findings": ['));
    await expect(runNightly(job('nightly', [1, 2, 3, 4, 5]), { ...cut, retryUnusableOutput: true })).rejects.toThrow(
      /chunk-0: the model's answer was cut/,
    );
    const last = await runNightly(job('nightly', [1, 2, 3, 4, 5]), cut);
    if (last.status !== 'completed') throw new Error(last.reason);
    expect(last.run.errors[0]).toBe(
      "chunk 0: the model's answer was cut at its output budget of 1500 tokens, and again at 3000 (stopReason max_tokens)",
    );
    expect(last.run.stopReasons?.['chunk-0']).toBe('max_tokens');
    expect(last.run.memoriesStored).toBe(0);
  });

  it("weekly: a malformed tool call is the run's error, not its reflection", async () => {
    const d = await deps(() =>
      stopped('malformed_tool_use', { trajectory: 'x', topic_drift: [], weekly_patterns: [], unresolved_arcs: [] }),
    );
    d.summaries.texts.push({
      userId: 'alice',
      id: 'summary-1-5',
      createdAt: '2026-02-05T11:00:00Z',
      text: 'Turns 1–5: jazz and family.',
    });
    d.summaries.texts.push({
      userId: 'alice',
      id: 'summary-6-9',
      createdAt: '2026-02-06T11:00:00Z',
      text: 'Turns 6–9: the club in Paris.',
    });
    const out = await runWeekly(job('weekly'), d);
    if (out.status !== 'completed') throw new Error(out.reason);
    expect(out.run.weekly).toBeUndefined();
    expect(out.run.errors).toEqual(['the model produced an invalid tool call (stopReason malformed_tool_use)']);
    expect(out.run.stopReasons).toEqual({ week: 'malformed_tool_use' });
  });

  it("weekly: reads the week's summaries — batch logs, nightly findings, context summaries — and never raw messages", async () => {
    const d = await deps(() => ({
      trajectory: 'From jazz to family.',
      topic_drift: [{ topic: 'jazz', status: 'dropped' }],
      weekly_patterns: [],
      unresolved_arcs: ['Where is the club?'],
    }));
    let turnReads = 0;
    const getTurns = d.turns.getTurns.bind(d.turns);
    d.turns.getTurns = async (...a) => {
      turnReads++;
      return getTurns(...a);
    };
    d.summaries.logs.push({
      user_id: 'alice',
      batch_id: 'batch-1-5',
      timestamp: '2026-02-05T10:00:00Z',
      status: 'completed',
      staged_files: ['Knowledge_staging/Facts/jazz--batch-1-5.md'],
      promoted_files: [],
    } as unknown as BatchLog);
    d.summaries.texts.push({
      userId: 'alice',
      id: 'summary-1-5',
      createdAt: '2026-02-05T11:00:00Z',
      text: 'Turns 1–5: jazz and family.',
    });
    await d.runs.put({
      runId: 'nightly-x',
      userId: 'alice',
      kind: 'nightly',
      startedAt: '2026-02-06T03:00:00.000Z',
      stored: [{ path: 'Knowledge/Reflections/preference/jazz.md', statement: 'The user likes jazz.' }],
    } as never);
    // Conversation on one day only: that day's nightly run has reflected on it, the model is not asked.
    const oneDay = await runWeekly(job('weekly'), d);
    if (oneDay.status !== 'completed') throw new Error(oneDay.reason);
    expect(d.model.requests).toHaveLength(0);
    expect(oneDay.run).toMatchObject({ summariesReviewed: 3, tokens: { input: 0, output: 0 } });
    expect(oneDay.run.skipped).toBe(
      "the week's conversation fell on 1 day (weeklyMinDays 2): its nightly run has reflected on it",
    );
    expect(
      d.log.entries.some((e) => e.message === 'weekly reflection' && String(e.extra?.skipped ?? '').includes('1 day')),
    ).toBe(true);
    // A second day of conversation: the week is reflected on.
    d.summaries.texts.push({
      userId: 'alice',
      id: 'summary-6-9',
      createdAt: '2026-02-06T11:00:00Z',
      text: 'Turns 6–9: the club in Paris.',
    });
    const out = await runWeekly({ ...job('weekly'), jobId: 'weekly-202602070301' }, d);
    if (out.status !== 'completed') throw new Error(out.reason);
    expect(turnReads).toBe(0);
    expect(out.run.skipped).toBeUndefined();
    expect(out.run.summariesReviewed).toBe(4);
    const prompt = d.model.requests[0]?.prompt ?? '';
    expect(prompt).toContain('Staged: jazz');
    expect(prompt).toContain('The user likes jazz.');
    expect(prompt).toContain('Turns 1–5: jazz and family.');
    // Each headed by its source and day, in time order; no time of day.
    expect(prompt).toContain('### summary — 2026-02-05\nTurns 1–5: jazz and family.');
    expect(prompt).not.toMatch(/T\d\d:\d\d/);
    expect(prompt).not.toContain('I love jazz clubs');
    expect(out.run.weekly?.trajectory).toBe('From jazz to family.');
    // The run's document is rendered from its record (no S3 object), as the API serves it.
    const listed = (
      await sleepTimeRuns({ runs: d.runs, clock: fixedClock('2026-02-08T00:00:00.000Z') } as never, 'alice', 5)
    ).runs.find((r) => r.runId === 'weekly-202602070301');
    expect(listed?.markdown).toContain('## Unresolved arcs\n- Where is the club?');
  });

  it("weekly: stays within the stage's weekly token budget (req R-SLP-13, 5–15K), keeping the newest summaries and logging what it left out", async () => {
    const d = await deps(() => ({
      trajectory: 'A busy week.',
      topic_drift: [],
      weekly_patterns: [],
      unresolved_arcs: [],
    }));
    // A week of long summaries, ~1,500 tokens each at 3.5 characters a token: 30 of them are some 45K tokens.
    for (let i = 0; i < 30; i++) {
      const at = new Date(Date.parse('2026-01-31T04:00:00Z') + i * 5 * 3_600_000).toISOString();
      d.summaries.texts.push({
        userId: 'alice',
        id: `summary-${i * 10 + 1}-${i * 10 + 10}`,
        createdAt: at,
        text: `Summary ${i}: ${'the reef tank and its corals, '.repeat(180)}`,
      });
    }
    const budget = 15_000;
    const out = await runWeekly(job('weekly'), { ...d, config: { ...d.config, weeklyTokenBudget: budget } });
    if (out.status !== 'completed') throw new Error(out.reason);
    const prompt = d.model.requests[0]?.prompt ?? '';
    // The request as sent fits: counted the way its ceiling counts it, within the budget.
    const schema = modelSchemaOf(WeeklyOutputSchema);
    expect(weeklyCallCeiling(prompt, schema, d.config.maxTokens)).toBeLessThanOrEqual(budget);
    expect(out.run.budget).toEqual({
      tokens: budget,
      ceiling: weeklyCallCeiling(prompt, schema, d.config.maxTokens),
      chunksOverBudget: 0,
    });
    // The newest are kept, the oldest left out, and the run says how many and up to when.
    const kept = out.run.summariesReviewed;
    expect(kept).toBeGreaterThan(3);
    expect(kept).toBeLessThan(30);
    expect(prompt).toContain('Summary 29:');
    expect(prompt).not.toContain('Summary 0:');
    expect(prompt).toContain(`Summary ${30 - kept}:`);
    expect(prompt).not.toContain(`Summary ${29 - kept}:`);
    expect(out.run.weeklyLeftOut).toEqual({
      summaries: 30 - kept,
      bySource: { summary: 30 - kept },
      newestAt: new Date(Date.parse('2026-01-31T04:00:00Z') + (29 - kept) * 5 * 3_600_000).toISOString(),
    });
    expect(d.log.entries.some((e) => e.message.startsWith('weekly run over its token budget'))).toBe(true);
    // The default budget is the seed's upper figure; a week that fits leaves nothing out.
    expect(defaultSleepTimeConfig.weeklyTokenBudget).toBe(15_000);
    const small = pickWeekWithinBudget(
      [{ source: 'summary', at: '2026-02-01T00:00:00Z', text: 'short' }],
      budget,
      (p) => weeklyCallCeiling(p, schema, 1500),
    );
    expect(small.leftOut).toEqual([]);
  });
});

describe("a heavy user's nightly run fits its function timeout (req R-SLP-13 budget)", () => {
  const job: Job = {
    type: 'reflector.job',
    version: 1,
    jobId: 'nightly-202602070300',
    userId: 'heavy',
    kind: 'nightly',
    trigger: 'schedule',
    urgency: 0,
    turnIds: Array.from({ length: 1000 }, (_, i) => i + 1),
    requestedAt: now.toISOString(),
  };

  /** 1,000 turns of a day, about 100 tokens each: some 34 chunks of ~3,000 tokens. */
  async function heavyDay(model: Pick<LanguageModel, 'reflect'>, config: Partial<typeof defaultSleepTimeConfig> = {}) {
    const turns = new MemoryTurnStore();
    await turns.saveTurns(
      job.turnIds.map((turnId) =>
        turn({
          userId: 'heavy',
          turnId,
          sessionId: `s${Math.ceil(turnId / 100)}`,
          query: `Question ${turnId} about my reef tank and its ${'lighting '.repeat(12)}`,
          response: `An answer of ordinary length about turn ${turnId}, ${'with some detail '.repeat(12)}`,
          timestamp: '2026-02-06T20:00:00Z',
        }),
      ),
    );
    return {
      turns,
      knowledge: new MemoryKnowledgeStore(),
      runs: new MemorySleepTimeLog(),
      summaries: new MemorySummarySource(),
      graph: new MemoryGraphStore(),
      costs: new MemoryCostLedger(),
      items: new MemoryItems(),
      model: {
        ...model,
        summarize: async () => ({
          text: '',
          usage: { modelId: 'scripted', inputTokens: 0, outputTokens: 0, latencyMs: 0 },
        }),
      },
      clock: fixedClock(),
      log: new RecordingLog(),
      config: { ...defaultSleepTimeConfig, ...config },
    };
  }
  const answer = {
    output: { findings: [] },
    usage: { modelId: 'scripted', inputTokens: 10, outputTokens: 5, latencyMs: 1 },
  };

  it('1,000 turns make at most maxNightlyChunks model calls, at once, spread over the day, and the run logs what was left out', async () => {
    const prompts: string[] = [];
    let inFlight = 0;
    let most = 0;
    const d = await heavyDay(
      {
        reflect: async (req) => {
          prompts.push(req.prompt);
          most = Math.max(most, ++inFlight);
          await new Promise((r) => setTimeout(r, 5));
          inFlight--;
          return answer;
        },
      },
      { nightlyTokenBudget: 1_000_000 },
    );
    const all = chunkTurnGroups(
      (await d.turns.getTurns('heavy', job.turnIds)).turns,
      defaultSleepTimeConfig.chunkTokens,
    );
    expect(all.length).toBeGreaterThan(30);
    const out = await runNightly(job, d);
    if (out.status !== 'completed') throw new Error(out.reason);
    expect(prompts).toHaveLength(defaultSleepTimeConfig.maxNightlyChunks);
    expect(most).toBe(defaultSleepTimeConfig.maxNightlyChunks);
    // The first and the last chunk of the day are among those reviewed.
    expect(prompts.some((p) => p.includes('[Turn 1]'))).toBe(true);
    expect(prompts.some((p) => p.includes('[Turn 1000]'))).toBe(true);
    expect(out.run.chunks).toBe(defaultSleepTimeConfig.maxNightlyChunks);
    expect(out.run.truncated).toMatchObject({ chunksSkipped: all.length - defaultSleepTimeConfig.maxNightlyChunks });
    expect(out.run.messagesReviewed + (out.run.truncated?.messagesNotReviewed ?? 0)).toBe(1000);
    expect(out.run.truncated?.turnRanges).toHaveLength(defaultSleepTimeConfig.maxNightlyChunks - 1);
    expect(out.run.budget).toMatchObject({ tokens: 1_000_000, chunksOverBudget: 0 });
    expect(d.log.entries.some((e) => e.level === 'warn' && e.message.includes('chunk cap'))).toBe(true);
  });

  it("stays within the stage's nightly token budget (req R-SLP-13: 10–30K a night), counted before the calls, and logs it", async () => {
    const requests: Array<Parameters<LanguageModel['reflect']>[0]> = [];
    const d = await heavyDay({
      reflect: async (req) => {
        requests.push(req);
        return answer;
      },
    });
    const out = await runNightly(job, d);
    if (out.status !== 'completed') throw new Error(out.reason);
    const budget = out.run.budget;
    expect(budget?.tokens).toBe(30_000);
    expect(requests.length).toBe(out.run.chunks);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.length + (budget?.chunksOverBudget ?? 0)).toBe(defaultSleepTimeConfig.maxNightlyChunks);
    expect(budget?.ceiling).toBeLessThanOrEqual(30_000);
    // Each call as sent (3.5 characters a token, the tool-use prompt, its whole answer budget) is within its ceiling.
    const sent = requests.map(
      (r) =>
        Math.ceil(
          (r.system.length +
            r.prompt.length +
            JSON.stringify({ ...NIGHTLY_TOOL, toolSchema: r.toolInputSchema }).length) /
            3.5,
        ) +
        TOOL_USE_SYSTEM_PROMPT_TOKENS +
        r.maxTokens,
    );
    expect(sent.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget?.ceiling ?? 0);
    // A budget smaller than one call reflects on nothing, and says so.
    const none = await heavyDay({ reflect: async () => answer }, { nightlyTokenBudget: 1000 });
    const skipped = await runNightly({ ...job, jobId: 'nightly-202602080300' }, none);
    if (skipped.status !== 'completed') throw new Error(skipped.reason);
    expect(skipped.run).toMatchObject({
      chunks: 0,
      messagesReviewed: 0,
      budget: { tokens: 1000, ceiling: 0, chunksOverBudget: defaultSleepTimeConfig.maxNightlyChunks },
    });
    expect(skipped.run.truncated?.messagesNotReviewed).toBe(1000);
  });

  it("a call's ceiling holds with the most known memories a prompt lists", () => {
    const chunk = chunkTurns([turn({ turnId: 1, query: 'q'.repeat(2000) })], 3000)[0] ?? '';
    const memories = Array.from({ length: NIGHTLY_MEMORIES }, (_, i) => ({
      path: `Reflections/relationship/${'y'.repeat(80)}${i}.md`,
      summary: 's'.repeat(200),
    }));
    const schema = modelSchemaOf(NightlyOutputSchema);
    const asSent =
      Math.ceil(
        (NIGHTLY_SYSTEM_PROMPT.length +
          nightlyPrompt(chunk, memories).length +
          JSON.stringify({ ...NIGHTLY_TOOL, toolSchema: schema }).length) /
          3.5,
      ) +
      TOOL_USE_SYSTEM_PROMPT_TOKENS +
      1500;
    expect(nightlyCallCeiling(chunk, schema, 1500)).toBeGreaterThanOrEqual(asSent);
  });

  it('keeps the answers of the calls that succeeded when one fails, so the next delivery asks only for the rest', async () => {
    let calls = 0;
    let failOnce = true;
    const d = await heavyDay({
      reflect: async (req) => {
        calls++;
        if (failOnce && req.prompt.includes('[Turn 1000]')) {
          failOnce = false;
          throw new ModelUnavailableError('ThrottlingException');
        }
        return answer;
      },
    });
    await expect(runNightly(job, d)).rejects.toThrow(ModelUnavailableError);
    const first = calls;
    expect(first).toBeGreaterThan(1);
    const out = await runNightly(job, d);
    expect(out.status).toBe('completed');
    expect(calls).toBe(first + 1);
  });

  it('picks within the budget: a chunk over the budget alone is left out without keeping the others out', () => {
    // Chunk 2 is one huge turn: the rest still fit, spread over the day.
    expect(pickWithinBudget([6000, 6000, 90_000, 6000, 6000, 6000, 6000], 5, 30_000)).toEqual([0, 1, 4, 5, 6]);
    expect(pickWithinBudget([7000, 7000, 7000, 7000, 7000, 7000], 5, 30_000)).toEqual([0, 2, 3, 5]);
    expect(pickWithinBudget([40_000], 5, 30_000)).toEqual([]);
  });

  it('picks chunks spread over the day, first and last included, and names the turns left out', () => {
    expect(pickChunks(34, 5)).toEqual([0, 8, 17, 25, 33]);
    expect(pickChunks(3, 5)).toEqual([0, 1, 2]);
    expect(pickChunks(10, 1)).toEqual([9]);
    const chunks = [[1, 2], [3, 4], [5], [6, 7], [8]].map((ids) => ({
      text: '',
      turns: ids.map((turnId) => turn({ turnId })),
    }));
    expect(leftOut(chunks, new Set([0, 4]))).toEqual({
      chunksSkipped: 3,
      messagesNotReviewed: 5,
      turnRanges: [[3, 7]],
    });
    expect(leftOut(chunks, new Set([0, 2, 4]))).toEqual({
      chunksSkipped: 2,
      messagesNotReviewed: 4,
      turnRanges: [
        [3, 4],
        [6, 7],
      ],
    });
  });
});

describe('self-assessment (req R-SLP-10)', () => {
  const run = (day: number, sessions: number, corrections: number, unresolved = 0): AssessedRun => ({
    startedAt: `2026-02-${String(day).padStart(2, '0')}T03:00:00Z`,
    sessionsReviewed: sessions,
    findingsByCategory: { correction: corrections, unresolved },
  });

  it('classifies the trend from the first half of recent runs to the second', () => {
    expect(computeSelfAssessment([run(1, 2, 2), run(2, 2, 1)]).trend).toBe('insufficient_data');
    expect(computeSelfAssessment([run(1, 2, 4), run(2, 2, 3), run(3, 2, 1), run(4, 2, 0)]).trend).toBe('improving');
    expect(computeSelfAssessment([run(4, 2, 4), run(3, 2, 3), run(2, 2, 1), run(1, 2, 0)]).trend).toBe('degrading');
    expect(computeSelfAssessment([run(1, 2, 1, 1), run(2, 2, 1, 1), run(3, 2, 2), run(4, 2, 0, 2)]).trend).toBe(
      'stable',
    );
    expect(computeSelfAssessment([run(1, 4, 2, 2), run(2, 4, 0, 0)])).toMatchObject({
      runs: 2,
      sessionsReviewed: 8,
      correctionRate: 0.25,
      unresolvedRate: 0.25,
      contradictionCount: 0,
    });
  });

  it('reads the sleep-time run log of the last 30 days', async () => {
    const runs = new MemorySleepTimeLog();
    for (const r of [run(1, 2, 4), run(2, 2, 3), run(3, 2, 1), run(4, 2, 0)])
      await runs.put({ ...r, userId: 'alice', kind: 'nightly', runId: r.startedAt } as never);
    expect((await selfAssessment('alice', runs, new Date('2026-02-05T00:00:00Z'))).trend).toBe('improving');
  });
});

describe('expiry sweep (req R-PRO-3)', () => {
  it('deletes exactly the staged items older than 30 days with fewer than 2 promotions, each logged with its reason', async () => {
    const knowledge = new MemoryKnowledgeStore();
    const stage = (
      path: string,
      stagedAt: string,
      promotedBy: string[] = [],
      status: 'staged' | 'promoted' = 'staged',
    ) =>
      knowledge.records.set(`alice/${path}`, {
        path,
        kind: 'fact',
        title: path,
        category: 'Facts',
        text: 't',
        confidence: 0.6,
        sourceTurns: [1],
        batchId: 'b',
        stagedAt,
        meta: {},
        body: 't',
        promotedBy,
        status,
      });
    stage('Facts/old--b1.md', '2026-01-05T10:00:00Z');
    stage('Facts/old_once--b1.md', '2026-01-05T10:00:00Z', ['b2']);
    stage('Facts/young--b3.md', '2026-01-20T10:00:00Z');
    stage('Facts/promoted--b1.md', '2026-01-05T10:00:00Z', ['b2', 'b3'], 'promoted');
    const expiryLog = new MemoryExpiryLog();
    const r = await expirySweep(now, {
      activity: new MemoryActivity(),
      runs: new MemorySleepTimeLog(),
      turns: new MemoryTurnStore(),
      jobs: new MemoryJobQueue(),
      knowledge,
      expiryLog,
      items: new MemoryItems(),
      config: defaultSleepTimeConfig,
      log: new RecordingLog(),
    });
    expect(r.deleted).toBe(2);
    expect([...knowledge.records.keys()].sort()).toEqual(['alice/Facts/promoted--b1.md', 'alice/Facts/young--b3.md']);
    expect(expiryLog.entries[0]?.deletions.map((d) => [d.path, d.promotionCount])).toEqual([
      ['Facts/old--b1.md', 0],
      ['Facts/old_once--b1.md', 1],
    ]);
    expect(expiryLog.entries[0]?.deletions[0]?.reason).toMatch(/more than 30 days ago, with promotion_count 0 < 2/);
  });
});

describe('cost per run', () => {
  it('prices tokens per model id, cross-region prefixes included; unknown models cost null', () => {
    expect(estimateCostUsd('us.anthropic.claude-haiku-4-5-20251001-v1:0', 1_000_000, 100_000)).toBeCloseTo(1.5);
    expect(estimateCostUsd('offline.rule-reflector-v1', 5000, 5000)).toBe(0);
    expect(estimateCostUsd('someone.else', 1, 1)).toBeNull();
  });
});

describe('a nightly run delivered again after it stored its findings', () => {
  /** Bob's first night, and on the second (100 days on) a run whose log write fails once when `failOnce`. */
  async function secondNight(failOnce: boolean) {
    const turns = new MemoryTurnStore();
    const runs = new MemorySleepTimeLog();
    const d = {
      turns,
      knowledge: new MemoryKnowledgeStore(),
      runs,
      summaries: new MemorySummarySource(),
      graph: new MemoryGraphStore(),
      costs: new MemoryCostLedger(),
      items: new MemoryItems(),
      model: new ScriptedModel((req) => nightlyOffline(req.prompt)),
      clock: fixedClock(),
      log: new RecordingLog(),
      config: defaultSleepTimeConfig,
    };
    const first = ['I love jazz records', 'I love jazz clubs', 'My sister Ana works at the hospital in Porto'];
    const second = [
      'I love jazz records',
      'I love jazz clubs',
      'I started pottery classes on Tuesdays',
      'I love pottery and clay',
    ];
    await turns.saveTurns(
      [...first, ...second].map((query, i) =>
        turn({
          userId: 'bob',
          turnId: i + 1,
          query,
          timestamp: i < first.length ? '2026-02-06T20:00:00Z' : '2026-05-17T20:00:00Z',
        }),
      ),
    );
    const night = (jobId: string, at: Date, turnIds: number[]): Job => ({
      type: 'reflector.job',
      version: 1,
      jobId,
      userId: 'bob',
      kind: 'nightly',
      trigger: 'schedule',
      urgency: 0,
      turnIds,
      requestedAt: at.toISOString(),
    });
    await runNightly(night('nightly-1', now, [1, 2, 3]), d);
    const job = night('nightly-2', new Date(now.getTime() + 100 * 86_400_000), [4, 5, 6, 7]);
    if (failOnce) {
      const put = runs.put.bind(runs);
      runs.put = async () => {
        runs.put = put;
        throw new Error('the invocation died before the run was logged');
      };
      await expect(runNightly(job, d)).rejects.toThrow(/died/);
    }
    const outcome = await runNightly(job, d);
    if (outcome.status !== 'completed') throw new Error(outcome.reason);
    return {
      run: { ...outcome.run, durationMs: 0 },
      knowledge: await d.knowledge.loadKnowledge(),
      log: await d.graph.log('bob', 100),
    };
  }

  it('logs the same run and leaves the same state as one delivery: its findings stored, facts seen again and decayed', async () => {
    const once = await secondNight(false);
    expect(once.run.memoriesStored).toBeGreaterThan(0);
    expect(once.run.facts).toMatchObject({ verified: expect.any(Number), decayed: expect.any(Number) });
    expect((once.run.facts?.verified ?? 0) + (once.run.facts?.decayed ?? 0)).toBeGreaterThan(0);
    expect(await secondNight(true)).toEqual(once);
  });
});

describe('nightly reflection on a second night', () => {
  it('does not store a finding again that Knowledge already holds', async () => {
    const turns = new MemoryTurnStore();
    await turns.saveTurns(
      ['I love jazz', 'I love jazz records', 'I love jazz clubs'].map((query, i) =>
        turn({ userId: 'bob', turnId: i + 1, query, timestamp: '2026-02-06T20:00:00Z' }),
      ),
    );
    const d = {
      turns,
      knowledge: new MemoryKnowledgeStore(),
      runs: new MemorySleepTimeLog(),
      summaries: new MemorySummarySource(),
      graph: new MemoryGraphStore(),
      costs: new MemoryCostLedger(),
      items: new MemoryItems(),
      model: new ScriptedModel((req) => nightlyOffline(req.prompt)),
      clock: fixedClock(),
      log: new RecordingLog(),
      config: defaultSleepTimeConfig,
    };
    const night = (jobId: string) => ({
      type: 'reflector.job' as const,
      version: 1 as const,
      jobId,
      userId: 'bob',
      kind: 'nightly' as const,
      trigger: 'schedule',
      urgency: 0,
      turnIds: [1, 2, 3],
      requestedAt: now.toISOString(),
    });
    const first = await runNightly(night('nightly-1'), d);
    const second = await runNightly(night('nightly-2'), d);
    if (first.status !== 'completed' || second.status !== 'completed') throw new Error('expected runs');
    expect(first.run.memoriesStored).toBeGreaterThan(0);
    expect(second.run.memoriesStored).toBe(0);
    // Req R-SLP-5: the second night's prompt lists what the first stored, to spot contradictions.
    const stored = (await d.knowledge.loadKnowledge()).map((k) => k.id);
    const [firstPrompt, secondPrompt] = [d.model.requests[0]?.prompt ?? '', d.model.requests.at(-1)?.prompt ?? ''];
    expect(firstPrompt).toContain('## Existing knowledge\n(none yet)');
    expect(stored.filter((id) => secondPrompt.includes(id))).not.toEqual([]);
    expect(second.run.findingsRejected.every((r) => /already known|LOW|instances|HIGH/.test(r.reason))).toBe(true);
    // Same schedule time: the facts are seen again, but nothing is newer than their promotion, nothing old enough to decay.
    const known = second.run.findingsRejected.flatMap((r) => /already known: (.+)$/.exec(r.reason)?.[1] ?? []);
    expect(known.length).toBeGreaterThan(0);
    expect(second.run.facts).toEqual({ verified: new Set(known).size, decayed: 0, pruned: 0, removed: 0 });
    expect((await d.knowledge.loadKnowledge()).every((k) => k.verifiedAt === undefined)).toBe(true);
    // 100 days on, the same words again: the facts they repeat are verified at that night's time, not decayed.
    const later = new Date(now.getTime() + 100 * 86_400_000).toISOString();
    const third = await runNightly({ ...night('nightly-3'), requestedAt: later }, d);
    if (third.status !== 'completed') throw new Error(third.reason);
    expect(third.run.facts?.verified).toBe(new Set(known).size);
    for (const doc of (await d.knowledge.loadKnowledge()).filter((k) => known.includes(k.id)))
      expect(doc).toMatchObject({ verifiedAt: later, confidence: doc.baseConfidence ?? doc.confidence });
  });
});
