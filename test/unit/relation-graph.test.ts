/**
 * The relation graph and its hygiene (req R-GRAPH, req R-GRAPH-1's
 * triples, req R-LLM-2's connections): decay, soft pruning and restore; merges that a split
 * undoes; orphans; user-created content left alone.
 */
import { describe, expect, it } from 'vitest';
import { decayedConfidence, entityKey, neighbours, sameEntity } from '../../lib/graph/relation-graph.js';
import {
  createGraphEdge,
  graphLog,
  graphNeighbours,
  maintainGraph,
  recordRelations,
  restoreGraphEdge,
  splitGraphEntity,
} from '../../lib/graph/graph-use-cases.js';
import { MemoryApiError } from '../../lib/memory-api/memory-api.js';
import { fixedClock } from '../../lib/kernel/runtime.fake.js';
import { MemoryGraphStore } from '../../lib/graph/graph.fake.js';

const DAY = 86_400_000;
const T0 = '2026-01-01T00:00:00.000Z';
const day = (n: number) => new Date(Date.parse(T0) + n * DAY);
const seen = (from: string, relation: string, to: string, id = 'batch-1-10', confidence = 0.75) => ({
  from,
  relation,
  to,
  confidence,
  provenance: { source: 'batch' as const, id, turns: [3], at: T0 },
});

describe('relation graph (req R-GRAPH)', () => {
  it('normalises entity labels: case, punctuation, a parenthetical, an article, a plural', () => {
    expect(entityKey('America (band)')).toBe('america');
    expect(entityKey('The Clownfish')).toBe('clownfish');
    expect(entityKey('Knowledge/Facts/reef_tank.md')).toBe('reef_tank');
    expect(entityKey('Knowledge_staging/Patterns/recurring_topic_hiking--batch-1-10.md')).toBe(
      'recurring_topic_hiking',
    );
    expect(sameEntity('melanie', 'melannie')).toBe(true);
    expect(sameEntity('support_group', 'group_support')).toBe(true);
    expect(sameEntity('mel', 'mal')).toBe(false);
  });

  it("an edge's confidence decays when unverified, is pruned softly, and can be restored", async () => {
    const graph = new MemoryGraphStore();
    await recordRelations('alice', [seen('Caroline', 'attends', 'LGBTQ support group')], T0, graph);
    const id = 'caroline|attends|lgbtq_support_group';
    // Within 30 days nothing moves; then half the confidence every 60 days.
    expect(await maintainGraph('alice', day(29), graph)).toMatchObject({ decayed: 0, pruned: 0 });
    expect(decayedConfidence({ baseConfidence: 0.75, verifiedAt: T0, userCreated: false }, day(90))).toBe(0.38);
    // Decay writes nothing: the edge keeps what it was verified at, and readers see it decayed to their time.
    expect(await maintainGraph('alice', day(90), graph)).toMatchObject({ decayed: 1, pruned: 0 });
    expect((await graph.load('alice')).edges[0]).toMatchObject({ id, confidence: 0.75, status: 'active' });
    expect(
      (await graphNeighbours({ graph, clock: fixedClock(day(90).toISOString()) }, 'alice', 'caroline', false))
        .neighbours,
    ).toEqual([expect.objectContaining({ entity: 'lgbtq_support_group', confidence: 0.38 })]);
    // A second sweep at the same time (a redelivered run) changes nothing and reports what the sweep at that time did.
    const before = { edges: await graph.load('alice'), log: await graph.log('alice', 50) };
    expect(await maintainGraph('alice', day(90), graph)).toMatchObject({ decayed: 1, pruned: 0 });
    expect({ edges: await graph.load('alice'), log: await graph.log('alice', 50) }).toEqual(before);
    // Below 0.2: pruned, not deleted — gone from neighbours unless asked for.
    expect(await maintainGraph('alice', day(150), graph)).toMatchObject({ pruned: 1 });
    expect((await graph.load('alice')).edges[0]).toMatchObject({ status: 'pruned', prunedAt: day(150).toISOString() });
    const deps = { graph, clock: fixedClock(day(151).toISOString()) };
    expect((await graphNeighbours(deps, 'alice', 'caroline', false)).neighbours).toEqual([]);
    expect((await graphNeighbours(deps, 'alice', 'caroline', true)).neighbours).toEqual([
      expect.objectContaining({ entity: 'lgbtq_support_group', status: 'pruned' }),
    ]);
    // Restored within the recovery window: active and verified now.
    const { edge } = await restoreGraphEdge(deps, 'reviewer', 'alice', id);
    expect(edge).toMatchObject({ status: 'active', confidence: 0.75, verifiedAt: day(151).toISOString() });
    expect(edge.prunedAt).toBeUndefined();
    await expect(restoreGraphEdge(deps, 'reviewer', 'alice', id)).rejects.toMatchObject({ kind: 'conflict' });
    const log = (await graphLog(deps, 'alice', 10)).entries.map((e) => e.action);
    expect(log).toEqual(['restore', 'prune']);
  });

  it('removes a pruned edge after the recovery window, then its orphaned entities', async () => {
    const graph = new MemoryGraphStore();
    await recordRelations('alice', [seen('Rex', 'is a', 'beagle')], T0, graph);
    await maintainGraph('alice', day(200), graph);
    expect((await graph.load('alice')).edges[0]?.status).toBe('pruned');
    const later = await maintainGraph('alice', day(231), graph);
    expect(later).toMatchObject({ removed: 1, orphansRemoved: 2 });
    expect(await graph.load('alice')).toEqual({ edges: [], entities: [] });
  });

  it('two spellings of one entity merge (logged) and a split undoes it exactly', async () => {
    const graph = new MemoryGraphStore();
    await recordRelations(
      'alice',
      [seen('Melanie', 'sister of', 'Caroline'), seen('Melanie', 'paints', 'sunsets', 'batch-11-20')],
      T0,
      graph,
    );
    await recordRelations('alice', [seen('Melannie', 'likes', 'pottery', 'batch-21-30')], T0, graph);
    const before = await graph.load('alice');
    expect((await maintainGraph('alice', day(1), graph)).merged).toBe(1);
    const deps = { graph, clock: fixedClock(day(2).toISOString()) };
    const merged = await graphNeighbours(deps, 'alice', 'Melannie', false);
    expect(merged).toMatchObject({ entity: 'melanie', aliases: ['melannie'] });
    expect(merged.neighbours.map((n) => n.entity).sort()).toEqual(['caroline', 'pottery', 'sunset']);
    expect((await graph.load('alice')).edges).toEqual(before.edges);
    // Split: back as it was, and the sweep leaves it alone from now on.
    await splitGraphEntity(deps, 'reviewer', 'alice', 'Melannie');
    expect((await graphNeighbours(deps, 'alice', 'melanie', false)).neighbours.map((n) => n.entity).sort()).toEqual([
      'caroline',
      'sunset',
    ]);
    expect((await graphNeighbours(deps, 'alice', 'melannie', false)).neighbours.map((n) => n.entity)).toEqual([
      'pottery',
    ]);
    const again = await maintainGraph('alice', day(3), graph);
    expect(again).toMatchObject({ merged: 0, mergesProposed: 1 });
    expect((await graphLog(deps, 'alice', 10)).entries.map((e) => e.action)).toEqual([
      'merge_proposed',
      'split',
      'merge',
    ]);
    await expect(splitGraphEntity(deps, 'reviewer', 'alice', 'melanie')).rejects.toBeInstanceOf(MemoryApiError);
  });

  it('never decays, prunes or merges what a user created; reinforcement raises confidence once per source', async () => {
    const graph = new MemoryGraphStore();
    const deps = { graph, clock: fixedClock(T0) };
    await createGraphEdge(deps, 'alice', 'alice', { from: 'Reef tank', relation: 'contains', to: 'Clownfish' });
    await recordRelations('alice', [seen('Reef tanks', 'needs', 'salt')], T0, graph);
    expect(await maintainGraph('alice', day(400), graph)).toMatchObject({ pruned: 1 });
    const { edges } = await graph.load('alice');
    expect(edges.find((e) => e.relation === 'contain' || e.relation === 'contains')).toMatchObject({
      status: 'active',
      confidence: 0.9,
      userCreated: true,
    });
    // Seen again by another batch: +0.05 and verified; the same batch again: nothing.
    const [again] = await recordRelations(
      'alice',
      [seen('reef tank', 'needs', 'salt', 'batch-9-9')],
      day(401).toISOString(),
      graph,
    );
    expect(again).toMatchObject({ status: 'active', baseConfidence: 0.8, verifiedAt: day(401).toISOString() });
    // The same batch again (a redelivery): the same edge named, unchanged.
    const edgesBefore = await graph.load('alice');
    expect(
      await recordRelations('alice', [seen('reef tank', 'needs', 'salt', 'batch-9-9')], day(402).toISOString(), graph),
    ).toEqual([again]);
    expect(await graph.load('alice')).toEqual(edgesBefore);
    await expect(
      createGraphEdge(deps, 'alice', 'alice', { from: 'Rex', relation: 'is', to: 'rex' }),
    ).rejects.toMatchObject({ kind: 'invalid' });
  });

  it('resolves neighbours both ways, best first', () => {
    const n = neighbours(
      'b',
      [
        {
          id: 'a|x|b',
          from: 'a',
          relation: 'x',
          to: 'b',
          baseConfidence: 0.5,
          confidence: 0.5,
          verifiedAt: T0,
          createdAt: T0,
          status: 'active',
          userCreated: false,
          provenance: [],
        },
        {
          id: 'b|y|c',
          from: 'b',
          relation: 'y',
          to: 'c',
          baseConfidence: 0.9,
          confidence: 0.9,
          verifiedAt: T0,
          createdAt: T0,
          status: 'active',
          userCreated: false,
          provenance: [],
        },
      ],
      new Map(),
      new Date(T0),
    );
    expect(n.neighbours.map((x) => [x.entity, x.direction])).toEqual([
      ['c', 'out'],
      ['a', 'in'],
    ]);
  });
});
