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
 * facts `seen` again (the nightly run's "already known"): one change of the index. Its log
 * is written first (keyed by time and fact, so writing it again is a no-op): a delivery that
 * dies between the two writes leaves entries the next delivery writes again, never a change
 * without its entry. Reports what the sweep at `now` did, read back from the log, so a
 * redelivered run reports the same. (A fact changed by a person between the preview and the
 * change can leave a previewed entry the change did not make; the change's own are written too.)
 */
export async function maintainFacts(
  userId: string,
  now: Date,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
  seen: ReadonlyMap<string, { at: string; by: string }> = new Map(),
): Promise<FactHygieneReport> {
  const sweep = (docs: readonly KnowledgeDoc[]) => {
    const verified = verifyFacts(docs, seen);
    const swept = factHygiene(verified.docs, now);
    return { verified, swept, log: [...verified.log, ...swept.log] };
  };
  const preview = sweep(await deps.knowledge.loadKnowledge(userId)).log;
  if (preview.length > 0) await deps.graph.apply(userId, { log: preview });
  const log = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const { verified, swept, log } = sweep(docs);
    const changed = verified.verified.length > 0 || swept.log.length > 0;
    return { ...(changed ? { docs: swept.docs, remove: swept.removed } : {}), result: log };
  });
  if (log.length > 0 && JSON.stringify(log) !== JSON.stringify(preview)) await deps.graph.apply(userId, { log });
  const done = (await deps.graph.logAt(userId, now.toISOString())).filter((l) => l.fact !== undefined);
  const count = (action: GraphLogEntry['action']) => done.filter((l) => l.action === action).length;
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
