/**
 * Removing memory items (req R-DEL): one item by id (DELETE …/memory/items/{id}) and, reused
 * by the forget by provenance (forget-turns.ts), each kind's removal. Hard or soft per kind
 * (docs/memory-api.md, "Deleting an item" says why): turns, agent.event episodes, staged
 * records, Knowledge documents (facts and nightly findings) and diary entries are deleted,
 * with every S3 version; a summary and a mem: item deleted one by one are soft-deleted (the
 * summary quality metrics and the tier audit keep them), erased when forgotten by provenance.
 * A deleted staged record or Knowledge document leaves a tombstone (lib/forget/tombstone.ts)
 * that the reflector's and the nightly run's gates consult, so the fact does not come back.
 */
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import { GLOBAL_USER, type MemoryItem } from '../items/memory-item.js';
import {
  claimsPrefix,
  episodeKey,
  eventEpisodeKey,
  keys,
  knowledgePrefix,
  pad,
  summaryDocKey,
  turnsFolder,
  userPrefix,
} from '../kernel/memory-paths.js';
import type { StagedRecord } from '../knowledge/promotion.js';
import type { Edge } from '../graph/relation-graph.js';
import { tombstonesOf } from './tombstone.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import { type MemoryApiDeps, notFound } from '../memory-api/deps.js';
import { findItem } from '../search/search-api.js';
import { updateItem } from '../tiers/tiers-api.js';

/** The kinds a removal reports (the receipt's keys). */
export const ERASED_KINDS = [
  'turn',
  'episode',
  'staged',
  'knowledge',
  'summary',
  'diary',
  'memory',
  'graphEdge',
] as const;
export type ErasedKind = (typeof ERASED_KINDS)[number];

/** What an edge's evidence is matched against: the removed turns and, for a derived item, the batch or run that wrote it. */
export interface Evidence {
  turns: ReadonlySet<number>;
  /** Only provenance of this batch or run counts as the item's (absent: any). */
  by?: string | undefined;
}

/**
 * The edges whose only evidence the removed items were: every provenance entry cites turns,
 * all of them removed (and, for a derived item, it is the entry of the batch or run that wrote
 * it). An edge a person stated (`user` provenance) or that other turns also support stays.
 */
export function edgesOnlyEvidencedBy(edges: readonly Edge[], evidence: Evidence): Edge[] {
  return edges.filter(
    (e) =>
      e.provenance.length > 0 &&
      e.provenance.every(
        (p) =>
          p.source !== 'user' &&
          p.turns.length > 0 &&
          p.turns.every((t) => evidence.turns.has(t)) &&
          (evidence.by === undefined || p.id === evidence.by),
      ),
  );
}

export async function removeEdges(
  deps: MemoryApiDeps,
  userId: string,
  edges: readonly Edge[],
  at: string,
  why: string,
): Promise<void> {
  if (edges.length === 0) return;
  await deps.graph.apply(userId, {
    removeEdges: edges.map((e) => e.id),
    log: edges.map((e) => ({ at, action: 'remove' as const, edge: e.id, detail: why })),
  });
}

/** Turns: their index entries (and change marks), then their documents, claim checks and episode documents, every version. */
export async function eraseTurns(deps: MemoryApiDeps, userId: string, turnIds: readonly number[]): Promise<void> {
  if (turnIds.length === 0) return;
  await deps.eraser.deleteRecords(
    userId,
    turnIds.map(keys.turnSk),
    turnIds.map((t) => `turn:${t}`),
  );
  await deps.eraser.deleteObjects(
    turnIds.flatMap((t) => [
      `${userPrefix(userId)}${turnsFolder}${pad(t)}/`,
      `${claimsPrefix(userId)}${pad(t)}-`,
      episodeKey(userId, t),
    ]),
  );
}

export async function eraseEventEpisodes(
  deps: MemoryApiDeps,
  userId: string,
  episodeIds: readonly string[],
): Promise<void> {
  if (episodeIds.length === 0) return;
  await deps.eraser.deleteRecords(
    userId,
    episodeIds.map(keys.eventEpisodeSk),
    episodeIds.map((e) => `episode:${e}`),
  );
  await deps.eraser.deleteObjects(episodeIds.map((e) => eventEpisodeKey(userId, e)));
}

/** Staged records: buried first (a reflection running meanwhile is gated), then deleted through the knowledge store. */
export async function eraseStaged(
  deps: MemoryApiDeps,
  userId: string,
  records: readonly StagedRecord[],
  at: string,
): Promise<void> {
  if (records.length === 0) return;
  await deps.erasures.bury(
    userId,
    records.flatMap((r) => tombstonesOf(r)),
    at,
  );
  for (const r of records) await deps.knowledge.deleteStaged(userId, r.path);
}

/** Knowledge documents (facts and findings): buried, out of the index (which deletes their files), then every version of their files. */
export async function eraseKnowledge(
  deps: MemoryApiDeps,
  userId: string,
  docs: readonly KnowledgeDoc[],
  at: string,
): Promise<void> {
  if (docs.length === 0) return;
  await deps.erasures.bury(
    userId,
    docs.flatMap((d) => tombstonesOf(d)),
    at,
  );
  const ids = new Set(docs.map((d) => d.id));
  await deps.knowledge.updateKnowledgeIndex(userId, (current) => {
    const gone = current.filter((d) => ids.has(d.id)).map((d) => d.id);
    return gone.length === 0
      ? { result: undefined }
      : { docs: current.filter((d) => !ids.has(d.id)), remove: gone, result: undefined };
  });
  await deps.eraser.deleteObjects(docs.map((d) => `${knowledgePrefix(userId)}${d.id}`));
}

/** Summaries erased (a forget): the records and any document of the older one-object-per-summary format. */
export async function eraseSummaries(deps: MemoryApiDeps, userId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await deps.eraser.deleteRecords(
    userId,
    ids.map(keys.summarySk),
    ids.map((id) => `summary:${id}`),
  );
  await deps.eraser.deleteObjects(ids.map((id) => summaryDocKey(userId, id)));
}

export async function eraseDiary(deps: MemoryApiDeps, userId: string, ids: readonly string[]): Promise<void> {
  if (ids.length > 0)
    await deps.eraser.deleteRecords(
      userId,
      ids.map(keys.diarySk),
      ids.map((id) => `diary:${id}`),
    );
}

/** mem: items erased (a forget): their records (the audit trail keeps who changed them, not what they said). */
export async function eraseMemories(deps: MemoryApiDeps, userId: string, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await deps.eraser.deleteRecords(userId, ids.map(keys.memorySk), ids);
}

/**
 * What removed items leave elsewhere: a derived item's trust record (TRUST#{id}, req R-SCOPE-2),
 * and the old text its edits kept in the audit trail (`previous`), so no deleted words stay.
 */
export async function eraseTraces(deps: MemoryApiDeps, userId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const derived = ids.filter((id) => !id.startsWith('mem:'));
  if (derived.length > 0) await deps.eraser.deleteRecords(userId, derived.map(keys.trustSk), []);
  await deps.audit.dropWords(userId, ids);
}

type ItemKind = Exclude<ErasedKind, 'graphEdge'>;
const KIND_OF_PREFIX: ReadonlyArray<[string, ItemKind]> = [
  ['turn:', 'turn'],
  ['episode:', 'episode'],
  ['staged:', 'staged'],
  ['knowledge:', 'knowledge'],
  ['summary:', 'summary'],
  ['diary:', 'diary'],
  ['mem:', 'memory'],
];
export const kindOfId = (id: string): ItemKind | null => KIND_OF_PREFIX.find(([p]) => id.startsWith(p))?.[1] ?? null;
const after = (id: string, prefix: string) => id.slice(prefix.length);

/** DELETE …/memory/items/{id}: the live item, removed as its kind is; the audit entry names who, when and why (no content). */
export async function deleteItem(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
  reason: string | undefined,
): Promise<{ deleted: { id: string; kind: ItemKind }; at: string }> {
  const kind = kindOfId(id);
  if (!kind)
    throw new MemoryApiError(
      'invalid',
      `id: ${JSON.stringify(id)} is no memory item id (turn:, episode:, staged:, knowledge:, summary:, diary:, mem:)`,
      [{ path: 'params.id', message: 'unknown id kind' }],
    );
  const item = await findItem(deps, userId, id);
  if (!item || item.userId !== userId) throw notFound(`memory item ${id}`);
  const at = deps.clock.now().toISOString();
  const edges = await removeOne(deps, { actor, userId, at, reason }, item, kind);
  await eraseTraces(deps, userId, [id]);
  // A mem: item's soft deletion wrote its audit entry with the tier's own change.
  if (kind !== 'memory')
    await deps.audit.append([
      {
        userId,
        itemId: id,
        action: 'delete',
        actor,
        at,
        from: item.tier,
        ...(reason ? { reason } : {}),
        note: edges > 0 ? `${edges} graph edge(s) whose only evidence it was removed` : `${kind} deleted`,
      },
    ]);
  return { deleted: { id, kind }, at };
}

/** The item's removal by kind; returns how many graph edges went with it. */
async function removeOne(
  deps: MemoryApiDeps,
  by: { actor: string; userId: string; at: string; reason: string | undefined },
  item: MemoryItem,
  kind: ItemKind,
): Promise<number> {
  const { userId, at, reason } = by;
  const edgesOf = async (evidence: Evidence) =>
    userId === GLOBAL_USER ? [] : edgesOnlyEvidencedBy((await deps.graph.load(userId)).edges, evidence);
  let edges: Edge[] = [];
  if (kind === 'turn') {
    const turnId = Number(after(item.id, 'turn:'));
    edges = await edgesOf({ turns: new Set([turnId]) });
    await eraseTurns(deps, userId, [turnId]);
  } else if (kind === 'episode') await eraseEventEpisodes(deps, userId, [after(item.id, 'episode:')]);
  else if (kind === 'staged') {
    const [record] = await deps.knowledge.stagedRecords(userId, [after(item.id, 'staged:')]);
    if (!record) throw notFound(`memory item ${item.id}`);
    edges = await edgesOf({ turns: new Set(record.sourceTurns), by: record.batchId });
    await eraseStaged(deps, userId, [record], at);
  } else if (kind === 'knowledge') {
    const doc = (await deps.knowledge.loadKnowledge(userId)).find((d) => d.id === after(item.id, 'knowledge:'));
    if (!doc) throw notFound(`memory item ${item.id}`);
    // A nightly finding's relationship became an edge of its run; a promoted fact names no batch, so no edge is its alone.
    edges = doc.storedBy ? await edgesOf({ turns: new Set(doc.sourceTurns), by: doc.storedBy }) : [];
    await eraseKnowledge(deps, userId, [doc], at);
  } else if (kind === 'summary') {
    if (!(await deps.summaries.softDelete(userId, after(item.id, 'summary:'))))
      throw notFound(`memory item ${item.id}`);
  } else if (kind === 'diary') await eraseDiary(deps, userId, [after(item.id, 'diary:')]);
  else {
    // Soft: the tier's own deletion, kept for the audit trail and never returned again (its audit entry is this one).
    await updateItem(
      deps,
      userId,
      item.id,
      (i) => ({
        item: { ...i, deleted: true },
        audit: {
          action: 'delete',
          from: i.tier,
          ...(reason ? { reason } : {}),
          note: 'soft: kept for the audit trail',
        },
      }),
      by.actor,
    );
  }
  await removeEdges(deps, userId, edges, at, `its only evidence, ${item.id}, was deleted`);
  return edges.length;
}
