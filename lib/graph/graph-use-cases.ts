/**
 * The relation graph's use cases: record observed relations (the reflector's connections,
 * the nightly run's triples, edges users add), the hygiene sweep (with the nightly run), and
 * what the memory API offers on it: neighbours, restore a pruned edge, split a merge, the log.
 */
import {
  type Edge,
  type EdgeObservation,
  type Entity,
  edgeId,
  entityKey,
  type GraphLogEntry,
  neighbours,
  observeEdge,
  relationKey,
  restoreEdge,
} from './relation-graph.js';
import { graphHygiene } from './graph-hygiene.js';
import type { GraphStore } from './graph.port.js';
import { MemoryApiError } from '../memory-api/memory-api.js';

/**
 * Add observations at `at`: new edges and entities, or edges seen again. Returns the edges
 * the observations name, as they stand after: a redelivered batch or run (whose provenance
 * the edge already carries) names the same edges and changes nothing.
 */
export async function recordRelations(
  userId: string,
  observations: readonly EdgeObservation[],
  at: string,
  graph: GraphStore,
): Promise<Edge[]> {
  if (observations.length === 0) return [];
  const { edges, entities } = await graph.load(userId);
  const byId = new Map(edges.map((e) => [e.id, e]));
  const known = new Set(entities.map((e) => e.key));
  const changed = new Map<string, Edge>();
  const named = new Map<string, Edge>();
  const created: Entity[] = [];
  for (const o of observations) {
    const from = entityKey(o.from);
    const to = entityKey(o.to);
    if (!from || !to || from === to) continue;
    const id = edgeId(from, relationKey(o.relation), to);
    const before = byId.get(id);
    const after = observeEdge(before, o, at);
    named.set(id, after);
    if (after === before) continue;
    byId.set(id, after);
    changed.set(id, after);
    for (const [key, label] of [
      [from, o.from],
      [to, o.to],
    ] as const) {
      if (known.has(key)) continue;
      known.add(key);
      created.push({ key, label: label.slice(0, 200), createdAt: at, userCreated: o.userCreated ?? false });
    }
  }
  if (changed.size > 0) await graph.apply(userId, { edges: [...changed.values()], entities: created });
  return [...named.values()];
}

export interface HygieneReport {
  merged: number;
  mergesProposed: number;
  decayed: number;
  pruned: number;
  removed: number;
  orphansRemoved: number;
}

/**
 * One hygiene sweep of a user's graph at `now` (deterministic in `now`: a rerun changes
 * nothing). Reports what the sweep at `now` did, read back from the log, so a redelivered
 * run whose first delivery already swept reports the same.
 */
export async function maintainGraph(userId: string, now: Date, graph: GraphStore): Promise<HygieneReport> {
  const { edges, entities } = await graph.load(userId);
  await graph.indexAdjacency(userId, { edges, entities });
  const result = graphHygiene(edges, entities, now);
  if (result.log.length > 0) await graph.apply(userId, result);
  const log = (await graph.logAt(userId, now.toISOString())).filter((l) => l.fact === undefined);
  const count = (action: GraphLogEntry['action']) => log.filter((l) => l.action === action).length;
  // `decayed`: the active edges below their verified confidence at `now` (computed, so a redelivered run counts the same).
  return {
    merged: count('merge'),
    mergesProposed: count('merge_proposed'),
    decayed: result.decaying,
    pruned: count('prune'),
    removed: count('remove'),
    orphansRemoved: count('orphan_removed'),
  };
}

export interface GraphApiDeps {
  graph: GraphStore;
  clock: { now(): Date };
}

export async function graphNeighbours(deps: GraphApiDeps, userId: string, entity: string, includePruned: boolean) {
  const { edges, entities } = await deps.graph.neighbourhood(userId, entityKey(entity));
  const byKey = new Map(entities.map((e) => [e.key, e]));
  return neighbours(entity, edges, byKey, deps.clock.now(), includePruned);
}

/** An edge a user (or their agent) states: never decayed, pruned or merged away by the sweep. */
export async function createGraphEdge(
  deps: GraphApiDeps,
  actor: string,
  userId: string,
  body: { from: string; relation: string; to: string; note?: string | undefined },
) {
  if (entityKey(body.from) === '' || entityKey(body.to) === '')
    throw new MemoryApiError('invalid', 'from and to must name entities (letters or digits)');
  if (entityKey(body.from) === entityKey(body.to))
    throw new MemoryApiError('invalid', 'an edge joins two different entities');
  const at = deps.clock.now().toISOString();
  const [edge] = await recordRelations(
    userId,
    [
      {
        ...body,
        confidence: 0.9,
        userCreated: true,
        provenance: { source: 'user', id: actor, turns: [], at },
        ...(body.note ? { note: body.note } : {}),
      },
    ],
    at,
    deps.graph,
  );
  return { edge };
}

export async function restoreGraphEdge(deps: GraphApiDeps, actor: string, userId: string, id: string) {
  const { edges } = await deps.graph.load(userId);
  const edge = edges.find((e) => e.id === id);
  if (!edge)
    throw new MemoryApiError(
      'not_found',
      `edge ${id} not found (removed for good after the recovery window, or never there)`,
    );
  if (edge.status !== 'pruned') throw new MemoryApiError('conflict', `edge ${id} is not pruned`);
  const at = deps.clock.now().toISOString();
  const restored = restoreEdge(edge, at);
  await deps.graph.apply(userId, {
    edges: [restored],
    log: [{ at, action: 'restore', edge: id, detail: `restored by ${actor}` }],
  });
  return { edge: restored };
}

export async function splitGraphEntity(deps: GraphApiDeps, actor: string, userId: string, entity: string) {
  const { entities } = await deps.graph.load(userId);
  const key = entityKey(entity);
  const found = entities.find((e) => e.key === key);
  if (!found) throw new MemoryApiError('not_found', `entity ${key} not found`);
  if (!found.mergedInto) throw new MemoryApiError('conflict', `entity ${key} is not merged into another`);
  const at = deps.clock.now().toISOString();
  const { mergedInto, ...split } = found;
  // A user split: the entity is now the user's call, so the sweep will not merge it again.
  const kept: Entity = { ...split, userCreated: true };
  await deps.graph.apply(userId, {
    entities: [kept],
    log: [{ at, action: 'split', entity: key, into: mergedInto, detail: `split from ${mergedInto} by ${actor}` }],
  });
  return { entity: kept };
}

export async function graphLog(deps: GraphApiDeps, userId: string, limit: number) {
  return { entries: await deps.graph.log(userId, limit) };
}
