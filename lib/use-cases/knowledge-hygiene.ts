/**
 * Fact hygiene's use cases (lib/domain/knowledge-hygiene.ts): the nightly sweep over a
 * user's promoted Knowledge, facts seen again by a batch or a nightly run, and a person's
 * restore of a pruned fact through the API. Changes are logged in the user's hygiene log
 * (the relation graph's), next to the edges'.
 */
import { factHygiene, restoreFact, verifyFacts } from '../domain/knowledge-hygiene.js';
import type { KnowledgeDoc } from '../domain/knowledge.js';
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
 * facts `seen` again (the nightly run's "already known"): one read and at most one write of
 * the index.
 */
export async function maintainFacts(
  userId: string,
  now: Date,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
  seen: ReadonlyMap<string, { at: string; by: string }> = new Map(),
): Promise<FactHygieneReport> {
  const verified = verifyFacts(await deps.knowledge.loadKnowledge(userId), seen);
  const result = factHygiene(verified.docs, now);
  const log = [...verified.log, ...result.log];
  if (verified.verified.length > 0 || result.log.length > 0) await deps.knowledge.saveKnowledgeIndex(userId, result.docs, result.removed);
  if (log.length > 0) await deps.graph.apply(userId, { log });
  const count = (action: GraphLogEntry['action']) => result.log.filter((l) => l.action === action).length;
  return { decayed: count('decay'), pruned: count('prune'), removed: count('remove') };
}

/**
 * Facts seen again (path relative to Knowledge/ → the time of the turns that saw them, and
 * by what): verified then. `docs` is the index when the caller holds it already (unchanged
 * since it was read). Returns the paths that changed (older sightings change nothing).
 */
export async function verifySeenFacts(
  userId: string,
  seen: ReadonlyMap<string, { at: string; by: string }>,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
  docs?: readonly KnowledgeDoc[],
): Promise<string[]> {
  if (seen.size === 0) return [];
  const result = verifyFacts(docs ?? (await deps.knowledge.loadKnowledge(userId)), seen);
  if (result.verified.length === 0) return [];
  await deps.knowledge.saveKnowledgeIndex(userId, result.docs);
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
  const docs = await deps.knowledge.loadKnowledge(userId);
  const doc = docs.find((d) => d.id === id);
  if (!doc) throw new MemoryApiError(404, `fact Knowledge/${id} not found (removed for good after the recovery window, or never there)`);
  if (!doc.prunedAt) throw new MemoryApiError(409, `fact Knowledge/${id} is not pruned`);
  const at = deps.clock.now().toISOString();
  const restored = restoreFact(doc, at);
  await deps.knowledge.saveKnowledgeIndex(userId, docs.map((d) => (d.id === id ? restored : d)));
  await deps.graph.apply(userId, { log: [{ at, action: 'restore', fact: id, detail: `restored by ${actor}` }] });
  return { fact: restored };
}
