/**
 * Req R-SUM-9: POST …/summaries {reflect: true} answers `reflect: false` and why when there is
 * nothing to reflect on, instead of promising a reflection that the signal function would not run.
 */
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../lib/tiers/memory-tiers.js';
import { initialSignalState } from '../../lib/signals/signal-state.js';
import { MAX_PENDING_BATCHES } from '../../lib/signals/signal-accumulator.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import * as api from '../../lib/memory-api/memory-api.js';
import { whyNoReflection } from '../../lib/summaries/summaries-api.js';
import { runReflection } from '../../lib/batches/run-reflection.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { MemoryJobQueue } from '../../lib/jobs/job-queue.fake.js';
import { MemoryEventPublisher, turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { MemorySummaryStore } from '../../lib/summaries/summary.fake.js';

function setup() {
  const ingest = ingestDeps();
  const audit: AuditEntry[] = [];
  const deps = {
    signalState: ingest.signalState,
    summaries: new MemorySummaryStore(),
    jobs: new MemoryJobQueue(),
    events: new MemoryEventPublisher(),
    audit: { append: async (entries: readonly AuditEntry[]) => void audit.push(...entries), list: async () => [] },
    clock: ingest.clock,
  } as unknown as api.MemoryApiDeps & { events: MemoryEventPublisher; jobs: MemoryJobQueue };
  let n = 0;
  const deliver = (messages: readonly object[]) =>
    ingestTurns(
      messages.map((m) => ({ messageId: `m${++n}`, body: JSON.stringify(m) })),
      ingest,
    );
  return { ingest, deps, audit, deliver };
}

describe('a summary asked for with a reflection (req R-SUM-9)', () => {
  it('sends the reflection while turns wait; with none waiting, answers reflect: false and why, and sends nothing', async () => {
    const { ingest, deps, audit, deliver } = setup();
    await deliver(
      [1, 2, 3].map((turnId) => turn({ userId: 'bob', turnId, query: `The reef tank sump, part ${turnId}` })),
    );
    const first = await api.requestSummary(deps, 'local-admin', 'bob', { reflect: true });
    expect(first).toMatchObject({ turnIds: [1, 2, 3], reflect: true });
    expect(first).not.toHaveProperty('reason');
    expect(deps.events.events).toEqual([expect.objectContaining({ type: 'agent.event', trigger: 'user_request' })]);
    // The signal function cuts the batch from the waiting turns; the reflector runs it.
    await deliver(deps.events.events);
    const [job] = ingest.jobs.jobs;
    expect(job).toMatchObject({ kind: 'event', turnIds: [1, 2, 3] });
    expect((await runReflection(job!, reflectionDeps(ingest, new ScriptedModel(() => ({}))))).status).toBe('completed');

    const again = await api.requestSummary(deps, 'local-admin', 'bob', { reflect: true });
    expect(again).toEqual({
      jobId: first.jobId,
      turnIds: [1, 2, 3],
      reflect: false,
      reason: 'no turn is waiting for a reflection: the turns up to 3 are reflected already',
    });
    expect(deps.events.events).toHaveLength(1);
    expect(deps.jobs.jobs).toHaveLength(2);
    expect(audit.at(-1)?.reason).toBe(`manual summary; no reflection: ${again.reason}`);
    // Without `reflect`, the answer says nothing of one.
    expect(await api.requestSummary(deps, 'local-admin', 'bob', {})).toEqual({
      jobId: first.jobId,
      turnIds: [1, 2, 3],
    });
  });

  it('names the batches waiting, and the limit on them', () => {
    const pending = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        jobId: `batch-${i + 1}-${i + 1}`,
        turnIds: [i + 1],
        since: '2026-02-06T14:00:00Z',
        episodeIds: [],
      }));
    const state = initialSignalState();
    expect(whyNoReflection({ ...state, lastTurnId: 4, pendingBatches: pending(2) })).toBe(
      'no turn is waiting for a reflection: the turns up to 4 are reflected already, or are in the 2 batches waiting for the reflector',
    );
    const full = {
      ...state,
      lastTurnId: 30,
      pendingBatches: pending(MAX_PENDING_BATCHES),
      unassigned: { turnIds: [21, 22], urgency: 0, episodeIds: [] },
    };
    expect(whyNoReflection(full)).toMatch(/^20 batches wait for the reflector already .*the 2 waiting turns/);
    expect(whyNoReflection({ ...full, pendingBatches: pending(1) })).toBeNull();
  });
});
