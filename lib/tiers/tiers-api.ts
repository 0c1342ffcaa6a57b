/** Tiers with promotion and demotion (req R-TIER): entries written through the API (mem:…), listed per tier, deleted, promoted (to GLOBAL by an administrator) and demoted. */
import { GLOBAL_USER, isLive, type MemoryItem, mergeAttributes, type Tier } from '../items/memory-item.js';
import { itemKey, SearchSegments } from '../search/search-segments.js';
import type { IndexedItem } from '../search/indexed-item.js';
import { contradictEntry, corroborateEntry, recurEntry, undoContradictionOf } from './tier-review.js';
import { DEFAULT_TIER_POLICY } from './tier-settings.js';
import {
  type AuditEntry,
  type DemotionReason,
  demoteTier,
  type NewTierEntry,
  newTierItem,
  nextUpdatedAt,
  promoteTier,
} from './memory-tiers.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import { type MemoryApiDeps, notFound } from '../memory-api/deps.js';
import { pageCursor, encodeCursor } from '../memory-api/paging.js';
import { PAGE_SPARE, viewOf, pageItems, findItem, trusted } from '../search/search-api.js';
import { deleteSummary } from '../summaries/summaries-api.js';
import { reviewPromote } from '../knowledge/review-api.js';
import { contradictKnowledgeFact, undoFactContradiction } from '../knowledge/contradict-fact.js';

/** What writing a tier entry needs: the API's deps, or a pipeline's (lib/tiers/tier-entries.ts). */
export type TierWriteDeps = Pick<MemoryApiDeps, 'clock' | 'items' | 'audit' | 'tierPolicy'> & {
  turns: Pick<MemoryApiDeps['turns'], 'turnIndex'>;
};

export async function createTierEntry(
  deps: TierWriteDeps,
  actor: string,
  userId: string,
  tier: Tier,
  entry: NewTierEntry,
): Promise<{ item: MemoryItem; created: boolean }> {
  const now = deps.clock.now();
  const policy = deps.tierPolicy ?? DEFAULT_TIER_POLICY;
  const attrs = entry.sourceTurns?.length ? await attributesOf(deps, userId, entry.sourceTurns) : {};
  const fresh = newTierItem(userId, tier, entry, now, attrs, policy.ttlSeconds);
  const item = { ...fresh, path: `memory/${tier}/${fresh.id}` };
  const res = await deps.items.create(item);
  // An entry of that id that expired, was collected or cleared is written anew (its id no longer names a session).
  const anew = { ...item, updatedAt: nextUpdatedAt(res.item.updatedAt, now) };
  const reborn = !res.created && !isLive(res.item, now) && (await deps.items.replace(anew, res.item.updatedAt));
  const created = (at: string): AuditEntry => ({
    userId,
    itemId: fresh.id,
    action: 'create',
    actor,
    at,
    to: tier,
    ...(entry.reason ? { reason: entry.reason } : {}),
  });
  if (res.created || reborn) {
    await deps.audit.append([created(now.toISOString())]);
    return { item: reborn ? anew : res.item, created: true };
  }
  if (res.item.tier !== tier || !isLive(res.item, now)) return { item: res.item, created: false };
  // A retry whose first attempt wrote the entry and died before its audit entry: the create is
  // recorded now, at the entry's own createdAt, unless it already was (the same key).
  await deps.audit.appendOnce(created(res.item.createdAt));
  // The same ephemeral entry again in its session: a recurrence or a new sign of significance (req R-TIER-11).
  if (tier === 'ephemeral')
    return { item: (await recurEntry(deps.items, actor, userId, res.item.id, entry, now)) ?? res.item, created: false };
  // The same short-term entry from another session: seen again (req R-TIER-6's corroboration), maybe promoted.
  const seen = await corroborateEntry(deps.items, actor, userId, res.item.id, entry.sessionId, now, policy);
  return { item: seen ?? res.item, created: false };
}

async function attributesOf(
  deps: TierWriteDeps,
  userId: string,
  turnIds: readonly number[],
): Promise<Record<string, string>> {
  const index = new Map((await deps.turns.turnIndex(userId, turnIds)).map((t) => [t.turnId, t.attributes]));
  return mergeAttributes(turnIds, (t) => index.get(t));
}

export async function queryTier(
  deps: MemoryApiDeps,
  userId: string,
  tier: Tier,
  q: {
    type?: string | undefined;
    sessionId?: string | undefined;
    since?: string | undefined;
    until?: string | undefined;
    minConfidence?: number | undefined;
    kind?: string | undefined;
    limit: number;
    nextToken?: string | undefined;
  },
): Promise<{ items: MemoryItem[]; nextToken?: string }> {
  const now = deps.clock.now();
  const owners = userId === GLOBAL_USER ? [userId] : [userId, GLOBAL_USER];
  const views = await Promise.all(owners.map((owner) => viewOf(deps, owner)));
  const after = q.nextToken === undefined ? null : pageCursor(q.nextToken, tierCursor);
  const [since, until] = [
    q.since === undefined ? -Infinity : Date.parse(q.since),
    q.until === undefined ? Infinity : Date.parse(q.until),
  ];
  const newestFirst = (a: IndexedItem, b: IndexedItem) =>
    b.createdAt - a.createdAt || a.id.localeCompare(b.id) || a.userId.localeCompare(b.userId);
  const matches = [...new SearchSegments(views.flatMap((v) => v.entries)).visible()]
    .filter((i) => i.tier === tier && (i.expiresAt === null || i.expiresAt > now.getTime()))
    .filter(
      (i) => (q.type === undefined || i.contentTypes.includes(q.type)) && (q.kind === undefined || i.kind === q.kind),
    )
    .filter(
      (i) => (q.sessionId === undefined || i.sessionId === q.sessionId) && i.createdAt >= since && i.createdAt <= until,
    )
    .filter(
      (i) =>
        (q.minConfidence === undefined || i.confidence >= q.minConfidence) &&
        (after === null || newestFirst(after, i) < 0),
    )
    .sort(newestFirst);
  const page = matches.slice(0, q.limit + PAGE_SPARE);
  const read = await pageItems(
    deps,
    owners,
    views,
    page.map((item) => ({ item })),
  );
  const items = page.flatMap((i) => {
    const item = read.get(itemKey(i));
    return item && isLive(item, now) ? [{ indexed: i, item: trusted(item, i) }] : [];
  });
  const more = items.length > q.limit || matches.length > page.length;
  const last = !more ? undefined : items.length > q.limit ? items[q.limit - 1]?.indexed : page.at(-1);
  return {
    items: items.slice(0, q.limit).map((i) => i.item),
    ...(last ? { nextToken: encodeCursor([last.createdAt, last.id, last.userId]) } : {}),
  };
}

/** A tier page's end: the last item's time, id and owner. */
const tierCursor = (p: unknown): IndexedItem | null => {
  const [createdAt, id, userId] = p as unknown[];
  return typeof createdAt === 'number' && typeof id === 'string' && typeof userId === 'string'
    ? ({ createdAt, id, userId } as IndexedItem)
    : null;
};

/** Read-modify-write of an API-written item with an optimistic check, retried on a race. */
export async function updateItem(
  deps: MemoryApiDeps,
  userId: string,
  id: string,
  change: (item: MemoryItem) => { item: MemoryItem; audit: Omit<AuditEntry, 'userId' | 'itemId' | 'at' | 'actor'> },
  actor: string,
): Promise<MemoryItem> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await deps.items.get(userId, id);
    if (!current || !isLive(current, deps.clock.now())) throw notFound(`memory item ${id} of ${userId}`);
    const { item, audit } = change(current);
    const next = { ...item, updatedAt: nextUpdatedAt(current.updatedAt, deps.clock.now()) };
    if (await deps.items.replace(next, current.updatedAt)) {
      await deps.audit.append([{ userId, itemId: id, actor, at: next.updatedAt, ...audit }]);
      return next;
    }
  }
  throw new MemoryApiError('conflict', `memory item ${id} kept changing; try again`);
}

export async function deleteTierEntry(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  tier: Tier,
  id: string,
): Promise<{ item: MemoryItem }> {
  if (id.startsWith('summary:')) {
    const summary = await findItem(deps, userId, id);
    if (!summary) throw notFound(`memory item ${id}`);
    await deleteSummary(deps, actor, userId, id.slice('summary:'.length));
    return { item: { ...summary, deleted: true } };
  }
  if (!id.startsWith('mem:'))
    throw new MemoryApiError(
      'conflict',
      `${id}: only API-written items (mem:…) and summaries (summary:…) are deleted here; discard staged items through review`,
    );
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      if (i.tier !== tier) throw new MemoryApiError('not_found', `memory item ${id} is ${i.tier}, not ${tier}`);
      return { item: { ...i, deleted: true }, audit: { action: 'delete', from: i.tier } };
    },
    actor,
  );
  return { item };
}

export async function promote(
  deps: MemoryApiDeps,
  actor: string,
  isAdmin: boolean,
  userId: string,
  id: string,
  req: { reason?: string | undefined; to?: 'global' | undefined },
): Promise<{ item: MemoryItem }> {
  if (id.startsWith('staged:')) {
    const { knowledgePath } = await reviewPromote(deps, actor, userId, id.slice('staged:'.length), req.reason);
    const item = await findItem(deps, userId, `knowledge:${knowledgePath}`);
    if (!item) throw notFound(`knowledge:${knowledgePath}`);
    return { item };
  }
  if (!id.startsWith('mem:'))
    throw new MemoryApiError(
      'conflict',
      `${id} cannot be promoted: only API-written items (mem:…) and staged items (staged:…) move between tiers`,
    );
  if (req.to === 'global') return { item: await shareGlobally(deps, actor, isAdmin, userId, id, req.reason) };
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      const move = promoteTier(i, deps.clock.now());
      if (!move.ok) throw new MemoryApiError('conflict', move.reason);
      return {
        item: move.item,
        audit: { action: 'promote', from: move.from, to: move.to, ...(req.reason ? { reason: req.reason } : {}) },
      };
    },
    actor,
  );
  return { item };
}

/** USER → GLOBAL (req R-SCOPE-4): an administrator shares a long-term item with every user. */
async function shareGlobally(
  deps: MemoryApiDeps,
  actor: string,
  isAdmin: boolean,
  userId: string,
  id: string,
  reason: string | undefined,
): Promise<MemoryItem> {
  if (!isAdmin) throw new MemoryApiError('forbidden', 'only an administrator may promote an item to GLOBAL scope');
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      if (i.tier !== 'long_term')
        throw new MemoryApiError('conflict', `${id} is ${i.tier}: only long-term items may become GLOBAL`);
      return {
        item: { ...i, scope: 'global', expiresAt: null },
        audit: { action: 'scope_up', from: i.scope, to: 'global', ...(reason ? { reason } : {}) },
      };
    },
    actor,
  );
  const shared = await deps.items.create({ ...item, userId: GLOBAL_USER, path: `memory/global/${id}` });
  return shared.item;
}

export async function demote(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
  req: { reason: DemotionReason; note?: string | undefined },
): Promise<{ item: MemoryItem }> {
  if (!id.startsWith('mem:'))
    throw new MemoryApiError('conflict', `${id} cannot be demoted: only API-written items (mem:…) move between tiers`);
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      if (i.scope === 'global' && i.userId === GLOBAL_USER) {
        return {
          item: { ...i, deleted: true },
          audit: {
            action: 'scope_down',
            from: 'global',
            to: 'user',
            reason: req.reason,
            ...(req.note ? { note: req.note } : {}),
          },
        };
      }
      const move = demoteTier(i, deps.clock.now());
      if (!move.ok) throw new MemoryApiError('conflict', move.reason);
      return {
        item: move.item,
        audit: {
          action: 'demote',
          from: move.from,
          to: move.to,
          reason: req.reason,
          ...(req.note ? { note: req.note } : {}),
        },
      };
    },
    actor,
  );
  return { item };
}

/**
 * Req R-TIER-8: an API-written entry contradicted: confidence down by the stage's cost, one tier
 * down below its tier's floor (reason `contradiction`), audited. 404 when it is not live; the
 * same `evidence` twice counts once (the entry unchanged).
 */
export async function contradictItem(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
  req: { evidence?: string | undefined; note?: string | undefined },
): Promise<{ item: MemoryItem }> {
  if (id.startsWith('knowledge:')) return contradictFactItem(deps, actor, userId, id, req);
  if (!id.startsWith('mem:'))
    throw new MemoryApiError(
      'conflict',
      `${id} cannot be contradicted: only tier entries (mem:…) and Knowledge facts (knowledge:…) carry a tier's confidence`,
    );
  const now = deps.clock.now();
  const current = await deps.items.get(userId, id);
  if (!current || !isLive(current, now)) throw notFound(`memory item ${id} of ${userId}`);
  const done = await contradictEntry(
    deps.items,
    userId,
    id,
    { by: actor, evidence: req.evidence, note: req.note },
    now,
    deps.tierPolicy ?? DEFAULT_TIER_POLICY,
  );
  return { item: done?.item ?? current };
}

/**
 * A Knowledge fact contradicted by a person (lib/knowledge/contradict-fact.ts): the evidence
 * they name counts once; without one, each call is evidence of its own.
 */
async function contradictFactItem(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
  req: { evidence?: string | undefined; note?: string | undefined },
): Promise<{ item: MemoryItem }> {
  const policy = deps.tierPolicy ?? DEFAULT_TIER_POLICY;
  const at = deps.clock.now().toISOString();
  const fact = await contradictKnowledgeFact(deps, actor, userId, id.slice('knowledge:'.length), {
    by: req.evidence ?? `${actor} at ${at}`,
    at,
    cost: policy.contradictionCost,
    floor: policy.floors.long_term,
    note: req.note,
  });
  const item = fact ? await findItem(deps, userId, id) : null;
  if (!item) throw notFound(`memory item ${id} of ${userId}`);
  return { item };
}

/** A reviewer undoes an entry's, or a Knowledge fact's, last contradiction (req R-TIER-8). */
export async function undoContradiction(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
): Promise<{ item: MemoryItem }> {
  const now = deps.clock.now();
  if (id.startsWith('knowledge:')) {
    const path = id.slice('knowledge:'.length);
    const done = await undoFactContradiction(deps, actor, userId, path, now.toISOString());
    if (!done) throw new MemoryApiError('conflict', `${id} has no contradiction to undo (its last change is none)`);
    const item = await findItem(deps, userId, id);
    if (!item) throw notFound(`memory item ${id} of ${userId}`);
    return { item };
  }
  const current = await deps.items.get(userId, id);
  if (!current || current.deleted) throw notFound(`memory item ${id} of ${userId}`);
  const done = await undoContradictionOf(deps.items, actor, userId, id, now);
  if (!done) throw new MemoryApiError('conflict', `${id} has no contradiction to undo`);
  return { item: done.item };
}
