/**
 * A staged record reaches Knowledge: by recurrence (run-reflection.ts) or by a reviewer
 * (memory-api.ts), the same way. A correction whose target is still in Knowledge changes the
 * target (lib/knowledge/correction.ts; a pruned target comes back, as when a fact is seen again)
 * and is settled as promoted into it; any other record — and a correction whose target was
 * removed since it was staged — becomes its own document. Each correction and revert is
 * logged in the user's hygiene log (the graph's), beside decay and pruning.
 *
 * Idempotent: the index change is conditional and a correction already in the target's
 * history is not applied again, so a redelivery or a second reviewer changes nothing.
 */
import { applyCorrection, changedMeta, hasApplied, hintOf, revertLatest } from './correction.js';
import { parseFrontMatter, renderFrontMatter } from '../kernel/front-matter.js';
import type { KnowledgeDoc } from './knowledge.js';
import { knowledgeRelative } from '../kernel/memory-paths.js';
import { knowledgePathFor, promotedDocument, type StagedRecord } from './promotion.js';
import type { GraphStore } from '../graph/graph.port.js';
import type { KnowledgeStore } from './knowledge.port.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';

export interface Promotion {
  knowledgePath: string;
  /** Set when a correction changed an existing document (knowledgePath is that document). */
  corrected?: true;
}

type Deps = { knowledge: KnowledgeStore; graph: Pick<GraphStore, 'apply'> };

export async function promoteStaged(
  deps: Deps,
  userId: string,
  record: StagedRecord,
  taken: ReadonlySet<string>,
  at: string,
): Promise<Promotion> {
  if (record.kind === 'correction') {
    const target = await correctTarget(deps, userId, record, at);
    if (target) return { knowledgePath: target, corrected: true };
  }
  const knowledgePath = knowledgePathFor(record, taken);
  const doc = promotedDocument(record, knowledgePath, at);
  await deps.knowledge.promote(userId, record, knowledgePath, doc.markdown, doc.doc);
  return { knowledgePath };
}

/** Apply a promoted correction to its target; the target's path, or null when there is none to correct. */
async function correctTarget(deps: Deps, userId: string, record: StagedRecord, at: string): Promise<string | null> {
  const target = knowledgeRelative(String(record.meta.existing_file ?? ''));
  const by = `Knowledge_staging/${record.path}`;
  const result = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const doc = docs.find((d) => d.id === target);
    if (!doc) return { result: null };
    if (hasApplied(doc, by)) return { result: { doc, fresh: false } };
    const corrected = applyCorrection(doc, { by, text: record.text, hint: hintOf(record.meta), at });
    return { docs: docs.map((d) => (d.id === target ? corrected : d)), result: { doc: corrected, fresh: true } };
  });
  if (!result) return null;
  await writeChangedFile(deps, userId, result.doc);
  if (result.fresh) {
    const before = result.doc.history?.at(-1)?.confidence;
    await deps.graph.apply(userId, {
      log: [
        {
          at,
          action: 'correct',
          fact: target,
          detail: `corrected by ${by} (confidence ${before} → ${result.doc.confidence}); revert to undo`,
        },
      ],
    });
  }
  await deps.knowledge.settlePromoted(userId, record, target);
  return target;
}

/** The document's markdown rewritten from its index entry: front matter kept, confidence and history updated. */
export async function writeChangedFile(
  deps: { knowledge: Pick<KnowledgeStore, 'rewriteKnowledgeFile'> },
  userId: string,
  doc: KnowledgeDoc,
): Promise<void> {
  await deps.knowledge.rewriteKnowledgeFile(userId, doc.id, (current) => {
    const { meta } = parseFrontMatter(current ?? '');
    return renderFrontMatter(
      changedMeta({ title: doc.title, category: doc.category, ...meta }, doc),
      `# ${doc.title}\n\n${doc.text}`,
    );
  });
}

/** Undo the latest correction or revert of a Knowledge document (POST /v1/users/{u}/knowledge/revert). */
export async function revertKnowledgeChange(
  deps: Deps & { clock: { now(): Date } },
  actor: string,
  userId: string,
  path: string,
  reason: string | undefined,
) {
  const id = knowledgeRelative(path);
  const at = deps.clock.now().toISOString();
  const doc = await deps.knowledge.updateKnowledgeIndex(userId, (docs) => {
    const current = docs.find((d) => d.id === id);
    if (!current) throw new MemoryApiError('not_found', `Knowledge/${id} not found`);
    const reverted = revertLatest(current, actor, at, reason);
    if (!reverted) throw new MemoryApiError('conflict', `Knowledge/${id} has no correction to revert`);
    return { docs: docs.map((d) => (d.id === id ? reverted : d)), result: reverted };
  });
  await writeChangedFile(deps, userId, doc);
  await deps.graph.apply(userId, {
    log: [{ at, action: 'revert', fact: id, detail: `latest change undone by ${actor}${reason ? `: ${reason}` : ''}` }],
  });
  return { fact: doc };
}
