/**
 * Fact hygiene's use cases (lib/domain/knowledge-hygiene.ts): the nightly sweep over a
 * user's promoted Knowledge, facts seen again by a batch or a nightly run, and a person's
 * restore of a pruned fact through the API. Changes are logged in the user's hygiene log
 * (the relation graph's), next to the edges'.
 */
import { factHygiene, restoreFact, verifyFacts } from '../domain/knowledge-hygiene.js';
import type { GraphLogEntry } from '../domain/relation-graph.js';
import type { GraphStore, KnowledgeStore } from '../ports.js';
import { MemoryApiError } from './memory-api.js';

export interface FactHygieneReport {
  decayed: number;
  pruned: number;
  removed: number;
}

/**
 * One sweep at `now` (deterministic in `now`: a rerun changes nothing), after verifying the
 * facts `seen` again (the nightly run's "already known"): one change of the index.
 */
export async function maintainFacts(
  userId: string,
  now: Date,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
  seen: ReadonlyMap<string, { at: string; by: string }> = new Map(),
): Promise<FactHygieneReport> {
  const { result, log } = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const verified = verifyFacts(docs, seen);
    const swept = factHygiene(verified.docs, now);
    const changed = verified.verified.length > 0 || swept.log.length > 0;
    return { ...(changed ? { docs: swept.docs, remove: swept.removed } : {}), result: { result: swept, log: [...verified.log, ...swept.log] } };
  });
  if (log.length > 0) await deps.graph.apply(userId, { log });
  const count = (action: GraphLogEntry['action']) => result.log.filter((l) => l.action === action).length;
  return { decayed: count('decay'), pruned: count('prune'), removed: count('remove') };
}

/**
 * Facts seen again (path relative to Knowledge/ → the time of the turns that saw them, and
 * by what): verified then, on the index as it is when written (a warm container reads it
 * again only if it changed). Returns the paths that changed (older sightings change nothing).
 */
export async function verifySeenFacts(
  userId: string,
  seen: ReadonlyMap<string, { at: string; by: string }>,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
): Promise<string[]> {
  if (seen.size === 0) return [];
  const result = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const verified = verifyFacts(docs, seen);
    return { ...(verified.verified.length > 0 ? { docs: verified.docs } : {}), result: verified };
  });
  if (result.log.length > 0) await deps.graph.apply(userId, { log: result.log });
  return result.verified;
}

/** A person brings a pruned fact back (POST /v1/users/{u}/knowledge/restore): verified now. */
export async function restorePrunedFact(
  deps: { knowledge: KnowledgeStore; graph: GraphStore; clock: { now(): Date } },
  actor: string,
  userId: string,
  path: string,
) {
  const id = path.replace(/^\/*(Knowledge\/)?/, '');
  const at = deps.clock.now().toISOString();
  const restored = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const doc = docs.find((d) => d.id === id);
    if (!doc) throw new MemoryApiError(404, `fact Knowledge/${id} not found (removed for good after the recovery window, or never there)`);
    if (!doc.prunedAt) throw new MemoryApiError(409, `fact Knowledge/${id} is not pruned`);
    const fact = restoreFact(doc, at);
    return { docs: docs.map((d) => (d.id === id ? fact : d)), result: fact };
  });
  await deps.graph.apply(userId, { log: [{ at, action: 'restore', fact: id, detail: `restored by ${actor}` }] });
  return { fact: restored };
}
