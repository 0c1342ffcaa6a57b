/**
 * Req R-TIER-8 in the pipeline: a correction a batch stages contradicts the Knowledge fact it
 * names — confidence −0.3, demoted below the long-term floor, audited and logged, once however
 * often the job is delivered — and, once promoted, rewrites the fact from its confidence before
 * the contradiction. Through the reflector's job dispatcher, on the in-memory stores.
 */
import { describe, expect, it } from 'vitest';
import type { BatchAnswer } from '../../lib/batches/batch-answer.js';
import { MemoryBatchLogStore } from '../../lib/batches/batch-log.fake.js';
import { MemoryErasureLog } from '../../lib/forget/forget.fake.js';
import { type JobDeps, runJob } from '../../lib/jobs/run-job.js';
import { knowledgeItem } from '../../lib/items/source-items.js';
import type { AuditEntry } from '../../lib/tiers/memory-tiers.js';
import { promoteStaged } from '../../lib/knowledge/promote-staged.js';
import { contradictKnowledgeFact, undoFactContradiction } from '../../lib/knowledge/contradict-fact.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';

const FACT = 'Facts/commute.md';
const TEXT = 'The user cycles to work every day.';

const answer = (turnId: number): BatchAnswer => ({
  new_facts: [],
  connections: [],
  open_questions: [],
  corrections: [
    {
      existing_file: FACT,
      what_changed: 'The user sold the bike and takes the bus to work.',
      source_turns: [turnId],
      new_confidence_hint: 'lower',
    },
  ],
});

async function setup() {
  const ingest = ingestDeps();
  const model = new ScriptedModel(() => answer(3));
  const audit: AuditEntry[] = [];
  let failAudits = 0;
  const trail = {
    appendOnce: async (e: AuditEntry) => {
      if (failAudits > 0) {
        failAudits -= 1;
        throw new Error('connection reset after the fact was written');
      }
      if (!audit.some((a) => a.at === e.at && a.itemId === e.itemId && a.action === e.action)) audit.push(e);
    },
  };
  const reflection = { ...reflectionDeps(ingest, model), audit: trail };
  await reflection.knowledge.putKnowledge('alice', [
    {
      path: FACT,
      markdown: `---\ntitle: commute\n---\n\n# commute\n\n${TEXT}\n`,
      doc: {
        id: FACT,
        title: 'commute',
        text: TEXT,
        summary: TEXT,
        category: 'Facts',
        confidence: 0.75,
        sourceTurns: [1],
        promotedAt: '2026-01-01T00:00:00.000Z',
      },
    },
  ]);
  const deps = (batchLogs = reflection.batchLogs) =>
    ({
      reflection: { ...reflection, batchLogs },
      forgets: { latest: async () => null },
      erasures: new MemoryErasureLog(),
      log: reflection.log,
    }) as unknown as JobDeps;
  const run = async (batchLogs?: MemoryBatchLogStore) => {
    const jobs = ingest.jobs.jobs.splice(0);
    for (const job of jobs)
      await runJob(job, deps(batchLogs), { retryUnusableOutput: false, remainingMs: () => 60_000 });
    return jobs;
  };
  const turns = Array.from({ length: 10 }, (_, i) =>
    turn({
      userId: 'alice',
      sessionId: 's-1',
      turnId: i + 1,
      query: `Actually I sold the bike, I take the bus to work now (${i}).`,
    }),
  );
  await ingestTurns(
    turns.map((t, i) => ({ messageId: `m${i}`, body: JSON.stringify(t) })),
    ingest,
  );
  const failNextAudit = () => {
    failAudits = 1;
  };
  return { ingest, reflection, audit, run, failNextAudit };
}

describe('a staged correction contradicts its Knowledge fact (req R-TIER-8)', () => {
  it('lowers it by 0.3 and demotes it below the long-term floor, audited and logged, once per job', async () => {
    const p = await setup();
    p.failNextAudit();
    const [job] = p.ingest.jobs.jobs;
    await expect(p.run()).rejects.toThrow(/connection reset/);
    // Delivered again after the fact was written but not its audit entry.
    p.ingest.jobs.jobs.push(job as NonNullable<typeof job>);
    await p.run(new MemoryBatchLogStore());
    p.ingest.jobs.jobs.push(job as NonNullable<typeof job>);
    await p.run(new MemoryBatchLogStore());

    const fact = p.reflection.knowledge.knowledge.get(FACT);
    expect(fact).toMatchObject({ text: TEXT, confidence: 0.45, baseConfidence: 0.45 });
    expect(fact?.demotedAt).toEqual(expect.any(String));
    expect(fact?.history).toEqual([
      expect.objectContaining({
        change: 'contradiction',
        by: expect.stringMatching(/^Knowledge_staging\/Corrections\//),
        confidence: 0.75,
      }),
    ]);
    expect(knowledgeItem('alice', fact!, {})).toMatchObject({ tier: 'short_term', status: 'short_term' });
    expect(p.audit).toEqual([
      expect.objectContaining({
        itemId: `knowledge:${FACT}`,
        action: 'demote',
        actor: 'reflector',
        from: 'long_term',
        to: 'short_term',
        reason: 'contradiction',
      }),
    ]);
    const graphLog = p.reflection.graph.entries.get('alice') ?? [];
    expect(graphLog.filter((e) => e.action === 'contradict')).toEqual([expect.objectContaining({ fact: FACT })]);
  });

  it('once promoted, the correction rewrites the fact from its confidence before the contradiction', async () => {
    const p = await setup();
    await p.run();
    const [log] = p.reflection.batchLogs.logs.values();
    expect(log?.contradicted).toEqual([`Knowledge/${FACT}`]);
    const [record] = await p.reflection.knowledge.listStaged('alice');
    await promoteStaged(p.reflection, 'alice', record!, new Set(), '2026-02-01T00:00:00.000Z');
    const fact = p.reflection.knowledge.knowledge.get(FACT);
    // 0.75 with the correction's hint `lower` (−0.1): the contradiction's −0.3 was the old text's.
    expect(fact).toMatchObject({ text: 'The user sold the bike and takes the bus to work.', confidence: 0.65 });
    expect(fact?.demotedAt).toBeUndefined();
    expect(knowledgeItem('alice', fact!, {})).toMatchObject({ tier: 'long_term', status: 'canonical' });
  });
});

describe('a person contradicts a Knowledge fact and undoes it (req R-TIER-8)', () => {
  it('undoing the later of two contradictions keeps the demotion the first made; only the latest change is undone', async () => {
    const p = await setup();
    const deps = p.reflection;
    const at = (day: number) => `2026-03-0${day}T00:00:00.000Z`;
    const policy = { cost: 0.3, floor: 0.5 };
    const first = await contradictKnowledgeFact(deps, 'ana', 'alice', FACT, { by: 'turn:7', at: at(1), ...policy });
    expect(first).toMatchObject({ confidence: 0.45, demotedAt: at(1) });
    const note = 'she says: demoted';
    const second = await contradictKnowledgeFact(deps, 'ana', 'alice', FACT, {
      by: 'turn:8',
      at: at(2),
      ...policy,
      note,
    });
    expect(second).toMatchObject({ confidence: 0.15, demotedAt: at(1) });
    expect(p.audit.map((a) => a.action)).toEqual(['demote', 'contradict']);

    expect(await undoFactContradiction(deps, 'ana', 'alice', FACT, at(3))).toMatchObject({
      confidence: 0.45,
      demotedAt: at(1),
    });
    // Only the latest change is undone: the earlier contradiction is no longer it (a revert is).
    expect(await undoFactContradiction(deps, 'ana', 'alice', FACT, at(4))).toBeNull();
    expect(p.audit.map((a) => a.action)).toEqual(['demote', 'contradict', 'undo_contradict']);
  });
});
