/**
 * The relation graph's nightly hygiene (req R-GRAPH): entity deduplication, pruning of decayed
 * edges, removal of what stayed pruned past the recovery window, orphan cleanup. Pure: the
 * store keeps what graphHygiene returns. The numbers and rules: relation-graph.ts's header.
 */
import { DAY_MS, PRUNE_BELOW, pastRecovery, RECOVERY_DAYS } from '../knowledge/confidence-decay.js';
import {
  decayedConfidence,
  type Edge,
  type Entity,
  type GraphLogEntry,
  ORPHAN_DAYS,
  sameEntity,
} from './relation-graph.js';
export interface HygieneResult {
  edges: Edge[];
  /** Edge ids to remove for good (pruned longer than the recovery window). */
  removeEdges: string[];
  entities: Entity[];
  removeEntities: string[];
  log: GraphLogEntry[];
  /** Active edges below the confidence they were verified at (and above the prune line): their confidence is computed when read, nothing is written. */
  decaying: number;
}

/**
 * One hygiene sweep over a user's graph at `now`: deduplicate entities, prune what decayed
 * below the line, remove what stayed pruned past the recovery window, clean up orphans.
 * Returns only what changed. Decay itself writes nothing: an edge's confidence is a function
 * of its verified confidence and the time since (`decayedConfidence`), computed by whoever
 * reads it — rewriting every decaying edge each night would cost writes in proportion to the
 * graph, night after night.
 */
export function graphHygiene(edges: readonly Edge[], entities: readonly Entity[], now: Date): HygieneResult {
  const at = now.toISOString();
  const log: GraphLogEntry[] = [];
  const byKey = new Map(entities.map((e) => [e.key, { ...e }]));
  const changedEntities = new Set<string>();
  mergeSimilarEntities(edges, byKey, changedEntities, log, at);
  const { changedEdges, removeEdges, decaying } = pruneDecayedEdges(edges, now, log);
  const removeEntities = removeOrphans(edges, removeEdges, byKey, changedEntities, log, now);
  return {
    edges: changedEdges,
    removeEdges,
    entities: [...changedEntities].map((k) => byKey.get(k)!),
    removeEntities,
    log,
    decaying,
  };
}

/**
 * Hygiene step 1, deduplication: similar keys merge into the one with more edges (ties: the
 * shorter key, then alphabetical); a merge involving an entity a user created is only proposed.
 * Marks the merged entities in `byKey` and `changed`.
 */
function mergeSimilarEntities(
  edges: readonly Edge[],
  byKey: Map<string, Entity>,
  changed: Set<string>,
  log: GraphLogEntry[],
  at: string,
): void {
  const degree = new Map<string, number>();
  for (const e of edges)
    if (e.status === 'active') for (const k of [e.from, e.to]) degree.set(k, (degree.get(k) ?? 0) + 1);
  const roots = [...byKey.values()]
    .filter((e) => !e.mergedInto)
    .sort(
      (a, b) =>
        (degree.get(b.key) ?? 0) - (degree.get(a.key) ?? 0) ||
        a.key.length - b.key.length ||
        a.key.localeCompare(b.key),
    );
  for (let i = 0; i < roots.length; i++) {
    const keep = roots[i]!;
    if (byKey.get(keep.key)?.mergedInto) continue;
    for (const other of roots.slice(i + 1)) {
      if (byKey.get(other.key)?.mergedInto || !sameEntity(keep.key, other.key)) continue;
      if (keep.userCreated || other.userCreated) {
        log.push({
          at,
          action: 'merge_proposed',
          entity: other.key,
          into: keep.key,
          detail: `"${other.label}" looks like "${keep.label}"; a user created one of them, so the merge waits for confirmation`,
        });
        continue;
      }
      byKey.set(other.key, { ...other, mergedInto: keep.key });
      changed.add(other.key);
      log.push({
        at,
        action: 'merge',
        entity: other.key,
        into: keep.key,
        detail: `"${other.label}" merged into "${keep.label}" (similar names); split to undo`,
      });
    }
  }
}

/** Hygiene step 2: prune what decayed below the line, remove what stayed pruned past the recovery window; counts the edges decaying. */
function pruneDecayedEdges(
  edges: readonly Edge[],
  now: Date,
  log: GraphLogEntry[],
): { changedEdges: Edge[]; removeEdges: string[]; decaying: number } {
  const at = now.toISOString();
  const changedEdges: Edge[] = [];
  const removeEdges: string[] = [];
  let decaying = 0;
  for (const e of edges) {
    if (e.userCreated) continue;
    if (e.status === 'pruned') {
      if (e.prunedAt && pastRecovery(e.prunedAt, now)) {
        removeEdges.push(e.id);
        log.push({
          at,
          action: 'remove',
          edge: e.id,
          detail: `pruned on ${e.prunedAt.slice(0, 10)}, not restored within ${RECOVERY_DAYS} days`,
        });
      }
      continue;
    }
    const confidence = decayedConfidence(e, now);
    if (confidence < PRUNE_BELOW) {
      changedEdges.push({ ...e, confidence, status: 'pruned', prunedAt: at });
      log.push({
        at,
        action: 'prune',
        edge: e.id,
        detail: `confidence ${confidence} below ${PRUNE_BELOW}, unverified since ${e.verifiedAt.slice(0, 10)}; restorable for ${RECOVERY_DAYS} days`,
      });
    } else if (confidence < e.baseConfidence) decaying += 1;
  }
  return { changedEdges, removeEdges, decaying };
}

/**
 * Hygiene step 3, orphans: entities no edge refers to any more (restorable ones count), past
 * ORPHAN_DAYS; returns their keys (no longer among the `changed` ones).
 */
function removeOrphans(
  edges: readonly Edge[],
  removeEdges: readonly string[],
  byKey: ReadonlyMap<string, Entity>,
  changed: Set<string>,
  log: GraphLogEntry[],
  now: Date,
): string[] {
  const at = now.toISOString();
  const removed = new Set(removeEdges);
  const referenced = new Set(edges.filter((e) => !removed.has(e.id)).flatMap((e) => [e.from, e.to]));
  const aliasTargets = new Set([...byKey.values()].flatMap((e) => (e.mergedInto ? [e.mergedInto] : [])));
  const removeEntities: string[] = [];
  for (const entity of byKey.values()) {
    if (entity.userCreated || referenced.has(entity.key) || aliasTargets.has(entity.key)) continue;
    if (now.getTime() - Date.parse(entity.createdAt) < ORPHAN_DAYS * DAY_MS) continue;
    removeEntities.push(entity.key);
    changed.delete(entity.key);
    log.push({ at, action: 'orphan_removed', entity: entity.key, detail: `no edge left since ${ORPHAN_DAYS}+ days` });
  }
  return removeEntities;
}
