/**
 * Fact hygiene's use cases (lib/knowledge/knowledge-hygiene.ts): the nightly sweep over a
 * user's promoted Knowledge, facts seen again by a batch or a nightly run, and a person's
 * restore of a pruned fact through the API. Changes are logged in the user's hygiene log
 * (the relation graph's), next to the edges'.
 */
import { factHygiene, restoreFact, verifyFacts } from './knowledge-hygiene.js';
import type { KnowledgeDoc } from './knowledge.js';
import { knowledgeRelative } from '../kernel/memory-paths.js';
import type { GraphLogEntry } from '../graph/relation-graph.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { KnowledgeEntry, KnowledgeStore } from './knowledge.port.js';
import { MemoryApiError } from '../memory-api/memory-api.js';

export interface FactHygieneReport {
  decayed: number;
  pruned: number;
  removed: number;
}

/**
 * One sweep at `now` (deterministic in `now`: a rerun changes nothing), after adding the
 * documents `added` (the nightly run's new findings: their files written first) and verifying
 * the facts `seen` again (its "already known"): one change of the index — one snapshot for
 * the run, not one for its findings and one for the sweep — its log written first
 * (changeLoggedFirst). Reports what the sweep at `now` did, read back from the log, so a
 * redelivered run reports the same.
 */
export async function maintainFacts(
  userId: string,
  now: Date,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
  seen: ReadonlyMap<string, { at: string; by: string }> = new Map(),
  added: ReadonlyArray<KnowledgeEntry> = [],
): Promise<FactHygieneReport> {
  await deps.knowledge.writeKnowledgeFiles(userId, added);
  // By id, the last entry winning, as putKnowledge indexes them.
  const byId = new Map(added.map((e) => [e.doc.id, e.doc]));
  await changeLoggedFirst(userId, deps, (current) => {
    const docs = byId.size === 0 ? current : [...current.filter((d) => !byId.has(d.id)), ...byId.values()];
    const verified = verifyFacts(docs, seen);
    const swept = factHygiene(verified.docs, now);
    const changed = byId.size > 0 || verified.verified.length > 0 || swept.log.length > 0;
    return {
      ...(changed ? { docs: swept.docs, remove: swept.removed } : {}),
      log: [...verified.log, ...swept.log],
      result: undefined,
    };
  });
  const done = (await deps.graph.logAt(userId, now.toISOString())).filter((l) => l.fact !== undefined);
  const count = (action: GraphLogEntry['action']) => done.filter((l) => l.action === action).length;
  return { decayed: count('decay'), pruned: count('prune'), removed: count('remove') };
}

/**
 * Facts seen again (path relative to Knowledge/ → the time of the turns that saw them, and
 * by what): verified then, on the index as it is when written (a warm container reads it
 * again only if it changed), the log of the pruned ones it brings back written first.
 * Returns the paths that changed (older sightings change nothing).
 */
export async function verifySeenFacts(
  userId: string,
  seen: ReadonlyMap<string, { at: string; by: string }>,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
): Promise<string[]> {
  if (seen.size === 0) return [];
  return changeLoggedFirst(userId, deps, (docs) => {
    const verified = verifyFacts(docs, seen);
    return {
      ...(verified.verified.length > 0 ? { docs: verified.docs } : {}),
      log: verified.log,
      result: verified.verified,
    };
  });
}

/**
 * One change of the user's Knowledge index and its hygiene log, the log written first: its
 * entries are keyed by time, action and fact, so writing them again is a no-op, and a delivery
 * that dies between the two writes leaves entries its rerun writes again, never a change
 * without its entry. `change` is pure: it runs on a preview of the index, then again in the
 * conditional write. (A fact a person changed between the two can leave a previewed entry the
 * change did not make; the change's own entries are written too.)
 */
async function changeLoggedFirst<R>(
  userId: string,
  deps: { knowledge: KnowledgeStore; graph: GraphStore },
  change: (docs: readonly KnowledgeDoc[]) => {
    docs?: KnowledgeDoc[];
    remove?: string[];
    log: GraphLogEntry[];
    result: R;
  },
): Promise<R> {
  const preview = change(await deps.knowledge.loadKnowledge(userId)).log;
  if (preview.length > 0) await deps.graph.apply(userId, { log: preview });
  const { log, result } = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const { log, result, ...index } = change(docs);
    return { ...index, result: { log, result } };
  });
  if (log.length > 0 && JSON.stringify(log) !== JSON.stringify(preview)) await deps.graph.apply(userId, { log });
  return result;
}

/** A person brings a pruned fact back (POST /v1/users/{u}/knowledge/restore): verified now. */
export async function restorePrunedFact(
  deps: { knowledge: KnowledgeStore; graph: GraphStore; clock: { now(): Date } },
  actor: string,
  userId: string,
  path: string,
) {
  const id = knowledgeRelative(path);
  const at = deps.clock.now().toISOString();
  const restored = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const doc = docs.find((d) => d.id === id);
    if (!doc)
      throw new MemoryApiError(
        'not_found',
        `fact Knowledge/${id} not found (removed for good after the recovery window, or never there)`,
      );
    if (!doc.prunedAt) throw new MemoryApiError('conflict', `fact Knowledge/${id} is not pruned`);
    const fact = restoreFact(doc, at);
    return { docs: docs.map((d) => (d.id === id ? fact : d)), result: fact };
  });
  await deps.graph.apply(userId, { log: [{ at, action: 'restore', fact: id, detail: `restored by ${actor}` }] });
  return { fact: restored };
}
