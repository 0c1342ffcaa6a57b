/**
 * Contradicting a promoted Knowledge fact, and undoing it (req R-TIER-8; the rule is
 * fact-contradiction.ts). Two callers: a batch that stages a correction of the fact
 * (lib/batches/batch-contradictions.ts) and a person (POST …/memory/items/{id}/contradict).
 * Each change is one conditional write of the user's Knowledge index, then the fact's file,
 * its audit entry (`knowledge:<path>`, keyed at the change's own time and written once, so a
 * retry after a lost write records it still) and a line in the user's hygiene log (the
 * graph's, beside corrections and reverts).
 */
import { knowledgeRelative } from '../kernel/memory-paths.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { AuditTrail } from '../items/memory-item.port.js';
import { revertLatest } from './correction.js';
import {
  contradictFact,
  contradictionBy,
  demotedBy,
  type FactContradiction,
  lastChangeIsContradiction,
  loweredConfidence,
} from './fact-contradiction.js';
import type { KnowledgeChange, KnowledgeDoc } from './knowledge.js';
import type { KnowledgeStore } from './knowledge.port.js';
import { writeChangedFile } from './promote-staged.js';

type Deps = {
  knowledge: Pick<KnowledgeStore, 'updateKnowledgeIndex' | 'rewriteKnowledgeFile'>;
  graph: Pick<GraphStore, 'apply'>;
  audit: Pick<AuditTrail, 'appendOnce'>;
};

/**
 * Knowledge/`path` contradicted. The fact as it is after (also when this evidence counted
 * already: a redelivery rewrites its file, in case the first delivery stopped before it), or
 * null when there is no such live fact.
 */
export async function contradictKnowledgeFact(
  deps: Deps,
  actor: string,
  userId: string,
  path: string,
  c: FactContradiction,
): Promise<KnowledgeDoc | null> {
  const id = knowledgeRelative(path);
  const done = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const current = docs.find((d) => d.id === id);
    if (!current || current.prunedAt) return { result: null };
    const next = contradictFact(current, c);
    // Null only when this evidence counted already: nothing to write but what may have been lost after.
    if (!next) return { result: current };
    return { docs: docs.map((d) => (d.id === id ? next : d)), result: next };
  });
  if (!done) return null;
  await writeChangedFile(deps, userId, done);
  // Both keyed at the time the evidence first counted (audit: time, item, action; log: time, action, fact), so a
  // retry writes what an earlier attempt lost, and a repeat of the evidence writes nothing new.
  const counted = contradictionBy(done, c.by);
  if (!counted) return done;
  await deps.audit.appendOnce(auditOf(userId, `knowledge:${id}`, actor, counted, c));
  await deps.graph.apply(userId, {
    log: [
      {
        at: counted.at,
        action: 'contradict',
        fact: id,
        detail: `contradicted by ${c.by}: ${counted.reason ?? ''}; undo to revert`,
      },
    ],
  });
  return done;
}

/** The fact's latest contradiction undone (its confidence, and tier, as before); null when its latest change is none. */
export async function undoFactContradiction(
  deps: Deps,
  actor: string,
  userId: string,
  path: string,
  at: string,
): Promise<KnowledgeDoc | null> {
  const id = knowledgeRelative(path);
  const doc = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const current = docs.find((d) => d.id === id);
    // The demotion as it was before the contradiction comes back with it (its history entry keeps it).
    const reverted =
      current && lastChangeIsContradiction(current) ? revertLatest(current, actor, at, 'contradiction undone') : null;
    if (!reverted) return { result: null };
    return { docs: docs.map((d) => (d.id === id ? reverted : d)), result: reverted };
  });
  if (!doc) return null;
  await writeChangedFile(deps, userId, doc);
  const undone = doc.history?.at(-1);
  await deps.audit.appendOnce({
    userId,
    itemId: `knowledge:${id}`,
    action: 'undo_contradict',
    actor,
    at,
    from: String(undone?.confidence),
    to: String(doc.confidence),
  });
  await deps.graph.apply(userId, {
    log: [{ at, action: 'revert', fact: id, detail: `last contradiction undone by ${actor}` }],
  });
  return doc;
}

/** As a tier entry's (lib/tiers/contradiction.ts): a demotion names the tiers, a contradiction the confidences. */
function auditOf(userId: string, itemId: string, actor: string, counted: KnowledgeChange, c: FactContradiction) {
  const why = `contradicted by ${c.by}: ${counted.reason ?? ''}`;
  const base = { userId, itemId, actor, at: counted.at };
  if (demotedBy(counted))
    return {
      ...base,
      action: 'demote',
      from: 'long_term',
      to: 'short_term',
      reason: 'contradiction',
      note: why,
    } as const;
  const to = String(loweredConfidence(counted.confidence, c.cost));
  return { ...base, action: 'contradict', from: String(counted.confidence), to, reason: why } as const;
}
