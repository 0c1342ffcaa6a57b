/**
 * Fact hygiene (req R-GRAPH: confidence decay for unverified old
 * facts, pruning as a soft delete with a recovery window): promoted Knowledge decays while
 * nothing sees it again, is hidden when pruned, comes back when restored or seen again, and
 * is removed after the window.
 */
import { describe, expect, it } from 'vitest';
import type { KnowledgeDoc } from '../../lib/knowledge/knowledge.js';
import { factHygiene, verifyFacts } from '../../lib/knowledge/knowledge-hygiene.js';
import { isLive } from '../../lib/items/memory-item.js';
import { knowledgeItem } from '../../lib/items/source-items.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { maintainFacts, restorePrunedFact, verifySeenFacts } from '../../lib/knowledge/maintain-facts.js';
import { graphLog } from '../../lib/graph/graph-use-cases.js';
import { runReflection } from '../../lib/batches/run-reflection.js';
import { fixedClock } from '../../lib/kernel/runtime.fake.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { MemoryGraphStore } from '../../lib/graph/graph.fake.js';
import { MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';

const DAY = 86_400_000;
const T0 = '2026-01-01T00:00:00.000Z';
const day = (n: number) => new Date(Date.parse(T0) + n * DAY);
const fact = (id: string, confidence = 0.8, extra: Partial<KnowledgeDoc> = {}): KnowledgeDoc => ({
  id,
  title: id,
  text: `The user keeps a reef tank (${id}).`,
  category: 'Facts',
  confidence,
  sourceTurns: [3],
  summary: 'reef tank',
  promotedAt: T0,
  ...extra,
});

async function withFacts(...docs: KnowledgeDoc[]) {
  const knowledge = new MemoryKnowledgeStore();
  for (const d of docs) await knowledge.putKnowledge('alice', [{ path: d.id, markdown: `# ${d.title}\n`, doc: d }]);
  return { knowledge, graph: new MemoryGraphStore() };
}

describe('fact hygiene (req R-GRAPH)', () => {
  it('decays an unverified fact, prunes it softly (hidden), and a person can restore it', async () => {
    const deps = await withFacts(fact('Facts/reef_tank.md'));
    // Within 30 days nothing moves; then half the confidence every 60 days.
    expect(await maintainFacts('alice', day(29), deps)).toEqual({ decayed: 0, pruned: 0, removed: 0 });
    // Decay is written in steps of 0.05: on day 33 it has moved 0.8 → 0.77, so the index is not rewritten.
    const snapshot = await deps.knowledge.loadKnowledge();
    expect(await maintainFacts('alice', day(33), deps)).toEqual({ decayed: 0, pruned: 0, removed: 0 });
    expect(await deps.knowledge.loadKnowledge()).toEqual(snapshot);
    expect(await maintainFacts('alice', day(90), deps)).toEqual({ decayed: 1, pruned: 0, removed: 0 });
    const [decayed] = await deps.knowledge.loadKnowledge();
    expect(decayed).toMatchObject({ confidence: 0.4, baseConfidence: 0.8 });
    expect(knowledgeItem('alice', decayed!, {})).toMatchObject({ confidence: 0.4, quality: 0.4 });
    // A second sweep at the same time (a redelivered run) changes nothing and reports what the sweep at that time did.
    const logged = await deps.graph.log('alice', 50);
    expect(await maintainFacts('alice', day(90), deps)).toEqual({ decayed: 1, pruned: 0, removed: 0 });
    expect(await deps.knowledge.loadKnowledge()).toEqual([decayed]);
    expect(await deps.graph.log('alice', 50)).toEqual(logged);
    // Below 0.2 (day 160: 0.8 × 0.5^(130/60)): pruned — still indexed and on S3, hidden from search and retrieve.
    expect(await maintainFacts('alice', day(160), deps)).toEqual({ decayed: 0, pruned: 1, removed: 0 });
    const [pruned] = await deps.knowledge.loadKnowledge();
    expect(pruned).toMatchObject({ confidence: 0.18, prunedAt: day(160).toISOString() });
    expect(deps.knowledge.knowledgeFiles.has('alice/Facts/reef_tank.md')).toBe(true);
    expect(isLive(knowledgeItem('alice', pruned!, {}), day(161))).toBe(false);
    // Restored within the recovery window: its confidence back, verified now, live again.
    const api = { ...deps, clock: fixedClock(day(161).toISOString()) };
    const { fact: restored } = await restorePrunedFact(api, 'reviewer', 'alice', 'Knowledge/Facts/reef_tank.md');
    expect(restored).toMatchObject({ confidence: 0.8, verifiedAt: day(161).toISOString() });
    expect(restored.prunedAt).toBeUndefined();
    expect(isLive(knowledgeItem('alice', restored, {}), day(162))).toBe(true);
    await expect(restorePrunedFact(api, 'reviewer', 'alice', 'Facts/reef_tank.md')).rejects.toMatchObject({
      kind: 'conflict',
    });
    await expect(restorePrunedFact(api, 'reviewer', 'alice', 'Facts/nothing.md')).rejects.toMatchObject({
      kind: 'not_found',
    });
    // Every step is in the user's hygiene log, named by the fact.
    const log = (await graphLog(api, 'alice', 10)).entries;
    expect(log.map((e) => [e.action, e.fact])).toEqual([
      ['restore', 'Facts/reef_tank.md'],
      ['prune', 'Facts/reef_tank.md'],
      ['decay', 'Facts/reef_tank.md'],
    ]);
  });

  it('removes a fact that stayed pruned past the recovery window, its document with it', async () => {
    const deps = await withFacts(
      fact('Facts/old.md', 0.6),
      fact('Facts/kept.md', 0.6, { verifiedAt: day(170).toISOString() }),
    );
    expect(await maintainFacts('alice', day(140), deps)).toMatchObject({ pruned: 1 });
    // 30 days later it is still restorable; a day after that it is gone.
    expect(await maintainFacts('alice', day(170), deps)).toMatchObject({ removed: 0 });
    expect(await maintainFacts('alice', day(171), deps)).toMatchObject({ removed: 1 });
    expect((await deps.knowledge.loadKnowledge()).map((d) => d.id)).toEqual(['Facts/kept.md']);
    expect(deps.knowledge.knowledgeFiles.has('alice/Facts/old.md')).toBe(false);
    expect(deps.knowledge.knowledgeFiles.has('alice/Facts/kept.md')).toBe(true);
  });

  it('a fact seen again is verified at the time of the sighting; a pruned one comes back; an older sighting changes nothing', () => {
    const docs = [
      fact('Facts/a.md', 0.8, { confidence: 0.4, baseConfidence: 0.8 }),
      fact('Facts/b.md', 0.8, { confidence: 0.19, baseConfidence: 0.8, prunedAt: day(150).toISOString() }),
    ];
    const later = day(160).toISOString();
    const out = verifyFacts(
      docs,
      new Map([
        ['Facts/a.md', { at: later, by: 'batch batch-1-10' }],
        ['Facts/b.md', { at: later, by: 'batch batch-1-10' }],
      ]),
    );
    expect(out.verified).toEqual(['Facts/a.md', 'Facts/b.md']);
    expect(out.docs[0]).toMatchObject({ confidence: 0.8, verifiedAt: later });
    expect(out.docs[1]).toMatchObject({ confidence: 0.8, verifiedAt: later });
    expect(out.docs[1]?.prunedAt).toBeUndefined();
    expect(out.log).toEqual([
      { at: later, action: 'restore', fact: 'Facts/b.md', detail: 'seen again by batch batch-1-10' },
    ]);
    // A replayed, older sighting (before promotion) verifies nothing.
    expect(verifyFacts(docs, new Map([['Facts/a.md', { at: '2025-12-01T00:00:00Z', by: 'old' }]])).verified).toEqual(
      [],
    );
    // And a sweep right after the sighting leaves the fact alone.
    expect(factHygiene(out.docs, day(161)).log).toEqual([]);
  });

  it("a batch whose new fact repeats a Knowledge fact verifies it at the batch's last turn", async () => {
    const ingest = ingestDeps();
    const turns = Array.from({ length: 10 }, (_, i) =>
      turn({
        userId: 'alice',
        turnId: i + 1,
        timestamp: `2026-05-0${Math.min(9, i + 1)}T10:00:00Z`,
        query: i === 2 ? 'My reef tank holds two clownfish' : `entry${i}`,
        response: 'ok',
      }),
    );
    await ingestTurns(
      turns.map((t, i) => ({ messageId: `m${i}`, body: JSON.stringify(t) })),
      ingest,
    );
    const deps = reflectionDeps(
      ingest,
      new ScriptedModel(() => ({
        new_facts: [
          {
            title: 'reef_tank',
            content: 'The user keeps a reef tank with two clownfish.',
            source_turns: [3],
            category: 'Facts',
          },
        ],
      })),
    );
    const known = fact('Facts/reef_tank.md', 0.8, {
      text: 'The user keeps a reef tank with two clownfish.',
      title: 'reef_tank',
      confidence: 0.4,
      baseConfidence: 0.8,
    });
    await deps.knowledge.putKnowledge('alice', [{ path: known.id, markdown: '# reef tank\n', doc: known }]);
    const out = await runReflection(ingest.jobs.jobs[0]!, deps);
    expect(out.status).toBe('completed');
    const log = deps.batchLogs.logs.get('alice/batch-1-10');
    expect(log?.quality_gate_results.rejections).toEqual([
      expect.objectContaining({ gate: 'dedup', existing: 'Facts/reef_tank.md' }),
    ]);
    expect(log?.verified).toEqual(['Facts/reef_tank.md']);
    expect((await deps.knowledge.loadKnowledge())[0]).toMatchObject({
      confidence: 0.8,
      verifiedAt: '2026-05-09T10:00:00.000Z',
    });
    // Verifying again with the same sighting changes nothing (a redelivered batch).
    expect(
      await verifySeenFacts(
        'alice',
        new Map([['Facts/reef_tank.md', { at: '2026-05-09T10:00:00.000Z', by: 'again' }]]),
        deps,
      ),
    ).toEqual([]);
  });

  it('never leaves a pruned fact brought back without its log entry when a delivery dies part-way', async () => {
    const deps = await withFacts(
      fact('Facts/kelp.md', 0.18, { baseConfidence: 0.8, prunedAt: day(150).toISOString() }),
    );
    const seen = new Map([['Facts/kelp.md', { at: day(155).toISOString(), by: 'batch batch-1-9' }]]);
    // The first delivery dies at its first hygiene-log write.
    const apply = deps.graph.apply.bind(deps.graph);
    deps.graph.apply = async () => {
      deps.graph.apply = apply;
      throw new Error('the invocation died');
    };
    await expect(verifySeenFacts('alice', seen, deps)).rejects.toThrow(/died/);
    // Its redelivery: the fact is back and the log says why, once.
    await verifySeenFacts('alice', seen, deps);
    expect((await deps.knowledge.loadKnowledge())[0]).toMatchObject({
      confidence: 0.8,
      verifiedAt: day(155).toISOString(),
    });
    expect((await deps.graph.log('alice', 10)).map((e) => [e.action, e.fact])).toEqual([['restore', 'Facts/kelp.md']]);
  });
});
