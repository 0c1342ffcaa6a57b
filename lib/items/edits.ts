/**
 * A person corrects the text of a Knowledge fact, a nightly finding (both `knowledge:<path>`)
 * or a summary (`summary:<id>`), and can bring the old text back (POST …/memory/items/{id} and
 * …/restore; docs/memory-api.md "Edit and restore").
 *
 * Where the old text is kept: in the item's own history — a Knowledge document's `history`
 * (lib/knowledge/correction.ts applyEdit), a summary's `edits` — written by the same conditional
 * write as the new text, and in the audit entry of the change (`previous`), under the same `at`.
 * Restore reads the item's history: it is the item's, so it goes when the item is deleted or
 * forgotten, and a restore is a read-modify-write of one item, not of the item and the trail.
 *
 * Concurrency: the change is conditional on the text this request read. A concurrent edit or
 * restore of the same item that lands first makes this one answer 409 (read it again); writes
 * to other documents of the same knowledge index meanwhile do not. A retry of an edit or
 * restore that already landed (the item reads the same and its latest change is this actor's)
 * writes nothing new and rewrites the same audit entry (it is keyed by time, item and action),
 * so a crash between the item's write and the audit entry's is mended by the retry.
 *
 * Search: both stores mark the item changed for the owner's search index on write (the knowledge
 * index's diff, the summary store's edit; docs/search-index.md), so the next search reads the
 * new text and the old no longer matches.
 */
import type { KnowledgeChange, KnowledgeDoc } from '../knowledge/knowledge.js';
import type { MemoryItem } from './memory-item.js';
import type { SummaryEdit, SummaryRecordView } from './source-items.js';
import type { AuditEntry } from '../tiers/memory-tiers.js';
import { applyEdit, restoreEdit } from '../knowledge/correction.js';
import { capSummaryText } from '../summaries/summary.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import { writeChangedFile } from '../knowledge/promote-staged.js';
import { type MemoryApiDeps, notFound } from '../memory-api/deps.js';

type Target = { kind: 'knowledge'; path: string } | { kind: 'summary'; summaryId: string };
type Change = { text: string; reason?: string | undefined };
/** What one edit or restore did: the history entry it wrote (or a retry found), with the text it replaced. */
type Landed = { at: string; by: string; previous: string; reason?: string | undefined };

const EDITABLE = 'only Knowledge facts and findings (knowledge:<path>) and summaries (summary:<id>) can be edited';

/** The item an id names, if it is an editable kind; any other kind is a 400 naming `id`. */
export function editTarget(id: string): Target {
  if (id.startsWith('knowledge:') && id.length > 'knowledge:'.length)
    return { kind: 'knowledge', path: id.slice('knowledge:'.length).replace(/^Knowledge\//, '') };
  if (id.startsWith('summary:') && id.length > 'summary:'.length)
    return { kind: 'summary', summaryId: id.slice('summary:'.length) };
  throw new MemoryApiError('invalid', `${id.split(':')[0]} items cannot be edited: ${EDITABLE}`, [
    { path: 'params.id', message: EDITABLE },
  ]);
}

/** POST …/memory/items/{id}: the item's text becomes `text`; the old text stays in its history and the audit trail. */
export async function editItem(deps: MemoryApiDeps, actor: string, userId: string, id: string, req: Change) {
  const target = editTarget(id);
  const at = deps.clock.now().toISOString();
  const landed =
    target.kind === 'knowledge'
      ? await changeKnowledge(deps, userId, target.path, actor, 'edit', (doc) => ({
          text: req.text,
          doc: applyEdit(doc, { text: req.text, by: actor, at, reason: req.reason }),
        }))
      : await changeSummary(
          deps,
          actor,
          userId,
          target.summaryId,
          'edit',
          () => capSummaryText(req.text),
          at,
          req.reason,
        );
  await deps.audit.append([auditEntry(userId, id, 'edit', landed)]);
  return { item: await itemOf(deps, userId, id) };
}

/** POST …/memory/items/{id}/restore: the text the edit (or restore) at `at` replaced comes back; a change in its own right. */
export async function restoreItem(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
  req: { at: string; reason?: string | undefined },
) {
  const target = editTarget(id);
  const at = deps.clock.now().toISOString();
  const noChange = () =>
    new MemoryApiError('not_found', `${id} has no edit at ${req.at}`, [
      { path: 'body.at', message: 'names no edit or restore of this item (the `at` of its audit entry)' },
    ]);
  const landed =
    target.kind === 'knowledge'
      ? await changeKnowledge(deps, userId, target.path, actor, 'restore', (doc) => {
          const restored = restoreEdit(doc, req.at, { by: actor, at, reason: req.reason });
          if (!restored) throw noChange();
          return { text: restored.text, doc: restored };
        })
      : await changeSummary(
          deps,
          actor,
          userId,
          target.summaryId,
          'restore',
          (s) => {
            const edit = s.edits?.find((e) => e.at === req.at);
            if (!edit) throw noChange();
            return edit.previous;
          },
          at,
          req.reason,
        );
  await deps.audit.append([
    { ...auditEntry(userId, id, 'restore', landed), note: `the text the change at ${req.at} replaced` },
  ]);
  return { item: await itemOf(deps, userId, id) };
}

const auditEntry = (userId: string, itemId: string, action: 'edit' | 'restore', l: Landed): AuditEntry => ({
  userId,
  itemId,
  action,
  actor: l.by,
  at: l.at,
  previous: l.previous,
  ...(l.reason ? { reason: l.reason } : {}),
});

/** A retry of a change that landed: the item already reads `text` and its latest change is this actor's of the same kind. */
function landedBefore(
  last: (Landed & { change?: string }) | undefined,
  actor: string,
  change: 'edit' | 'restore',
  current: string,
  text: string,
): Landed | null {
  if (current !== text || !last || last.by !== actor || (last.change !== undefined && last.change !== change))
    return null;
  return last;
}

/**
 * One change of a Knowledge document through the knowledge index's conditional write: `change`
 * runs on the document as the index holds it, and again on a newer index if another writer got
 * there first — then refused (409) when that writer changed this document's text.
 */
async function changeKnowledge(
  deps: MemoryApiDeps,
  userId: string,
  path: string,
  actor: string,
  kind: 'edit' | 'restore',
  change: (doc: KnowledgeDoc) => { text: string; doc: KnowledgeDoc },
): Promise<Landed> {
  const live = (docs: readonly KnowledgeDoc[]) => {
    const doc = docs.find((d) => d.id === path);
    if (!doc || doc.prunedAt !== undefined) throw notFound(`knowledge:${path}`);
    return doc;
  };
  const seen = live(await deps.knowledge.loadKnowledge(userId)).text;
  const outcome = await deps.knowledge.updateKnowledgeIndex<{ landed: Landed; doc: KnowledgeDoc | null }>(
    userId,
    (docs) => {
      const doc = live(docs);
      if (doc.text !== seen)
        throw new MemoryApiError('conflict', `knowledge:${path} was changed at the same time: read it again`);
      const next = change(doc);
      const last = doc.history?.at(-1);
      const retry = landedBefore(last ? entryLanded(last) : undefined, actor, kind, doc.text, next.text);
      if (retry) return { result: { landed: retry, doc: null } };
      const entry = next.doc.history?.at(-1) as KnowledgeChange;
      return {
        docs: docs.map((d) => (d.id === path ? next.doc : d)),
        result: { landed: entryLanded(entry), doc: next.doc },
      };
    },
  );
  if (outcome.doc) await writeChangedFile(deps, userId, outcome.doc);
  return outcome.landed;
}

const entryLanded = (h: KnowledgeChange): Landed & { change: string } => ({
  at: h.at,
  by: h.by,
  previous: h.text,
  change: h.change,
  ...(h.reason ? { reason: h.reason } : {}),
});

/** One change of a summary through the summary store's conditional edit (its text must still be the one it read). */
async function changeSummary(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  summaryId: string,
  kind: 'edit' | 'restore',
  textOf: (s: SummaryRecordView) => string,
  at: string,
  reason: string | undefined,
): Promise<Landed> {
  const live = async () => {
    const [s] = await deps.summaries.byIds(userId, [summaryId]);
    if (!s || s.deleted) throw notFound(`summary:${summaryId}`);
    return s;
  };
  const current = await live();
  const text = textOf(current);
  const last = current.edits?.at(-1);
  // A summary's edits do not say whether each was an edit or a restore: the audit entry does.
  const retry = landedBefore(last ? summaryLanded(last) : undefined, actor, kind, current.text, text);
  if (retry) return retry;
  const edited = await deps.summaries.edit(userId, summaryId, { text, by: actor, at, reason });
  if (!edited) {
    await live();
    throw new MemoryApiError('conflict', `summary:${summaryId} was changed at the same time: read it again`);
  }
  // The store's own entry names the text it replaced (read in its conditional write); a store that keeps no edits, what this request read.
  const entry = edited.edits?.find((e) => e.at === at && e.by === actor);
  return summaryLanded(entry ?? { at, by: actor, previous: current.text, ...(reason ? { reason } : {}) });
}

const summaryLanded = (e: SummaryEdit): Landed => ({
  at: e.at,
  by: e.by,
  previous: e.previous,
  ...(e.reason ? { reason: e.reason } : {}),
});

async function itemOf(deps: MemoryApiDeps, userId: string, id: string): Promise<MemoryItem> {
  const item = (await deps.catalog.itemsById(userId, [id])).get(id);
  if (!item) throw notFound(id);
  return item;
}
