/**
 * The memory API's use cases: memory.search / save / retrieve (seed 002 §6), tiers with
 * promotion and demotion (seed 004 P3-M1), scope trust (seed 002 §10), reflections and
 * their summaries (seeds 001 and 003), and the review of staged items. Authorisation is
 * decided before these run (functions/api); every change names its actor in the audit trail.
 */
import type { ValidationOutcome } from '../../events/turn-saved.js';
import { GLOBAL_USER, isLive, itemIdForPath, type MemoryItem, mergeAttributes, summaryMessages, type Tier } from '../domain/memory-item.js';
import { capSummaryText } from '../domain/summary.js';
import { commitDecision } from '../domain/memory-candidates.js';
import { type IndexHit, itemKey, rankIndex, type SearchFilters, SegmentedIndex } from '../domain/memory-search.js';
import type { IndexedItem } from '../domain/search-segment.js';
import { COMPACT_AT, type SearchIndexReader, type SearchView, SegmentRetiredError } from './search-index.js';
import { corroborateEntry } from './tier-policy.js';
import { seenInUse } from '../domain/tier-policy.js';
import { type AuditEntry, type DemotionReason, demoteTier, type NewTierEntry, newTierItem, nextUpdatedAt, promoteTier } from '../domain/memory-tiers.js';
import { applyOutcome, newScopeExpiry } from '../domain/scope-trust.js';
import { PROMOTIONS_TO_KNOWLEDGE, type StagedRecord } from '../domain/promotion.js';
import { MemoryApiError } from './memory-api-error.js';
import { promoteStaged } from './promote-staged.js';
import { computeSelfAssessment } from '../domain/sleep-time/self-assessment.js';
import { reflectionQuality } from '../domain/reflection-quality.js';
import type { AgentEventPublisher, AuditTrail, BatchLogReader, Clock, CostLedger, DiaryStore, ForgetLog, GraphStore, JobQueue, KnowledgeStore, MemoryCatalog, MemoryItemStore, ReflectionLogStore, ReflectionStore, SignalStateStore, SourceReliabilityStore, TurnStore, UserArchiveStore, UserSettingsStore } from '../ports.js';
import { parseSignalState } from '../domain/signal-accumulator.js';
import { fnv1a32 } from '../domain/stable-hash.js';
import { normaliseDomain, reliabilityOf, type SourceReliability } from '../domain/source-reliability.js';
import { type CapabilityConfidence, capabilityConfidence, summariseEpisode } from '../domain/episodes.js';

export interface MemoryApiDeps {
  catalog: MemoryCatalog;
  /** The per-owner search indexes (search-index.ts). */
  search: SearchIndexReader;
  items: MemoryItemStore;
  audit: AuditTrail;
  turns: TurnStore;
  knowledge: KnowledgeStore;
  reflections: ReflectionStore;
  runs: ReflectionLogStore;
  batchLogs: BatchLogReader;
  /** Per-domain source outcomes, shared by all users (read only here). */
  sources: Pick<SourceReliabilityStore, 'stats'>;
  /** The user's relation graph (lib/use-cases/relation-graph.ts serves it). */
  graph: GraphStore;
  /** The ReflectionQueue: summaries asked for on demand (seed 003's manual reflection). */
  jobs: JobQueue;
  /** The TurnQueue: a batch reflection asked for on demand travels as an agent.event. */
  events: AgentEventPublisher;
  /** What each job's model calls cost (read only here: GET …/costs). */
  costs: CostLedger;
  /** The user's own reflection settings (GET and POST …/settings). */
  settings: UserSettingsStore;
  /** The diary's entries (GET …/diary, and a person's keep or drop: lib/use-cases/diary.ts). */
  diary: DiaryStore;
  /** Read only: which turns the user's next summary would cover. */
  signalState: Pick<SignalStateStore, 'load'>;
  /** Users' erasures (lib/use-cases/forget-user.ts): DELETE /v1/users/{u} and its receipt. */
  forgets: ForgetLog;
  /** A user's records and documents whole: GET …/export and POST …/import (lib/use-cases/user-archive.ts). */
  archives: UserArchiveStore;
  clock: Clock;
}

export { MemoryApiError };

const notFound = (what: string) => new MemoryApiError(404, `${what} not found`);

export interface SearchResult {
  id: string;
  kind: string;
  text: string;
  score: number;
  sourceTurns: number[];
  attributes: Record<string, string>;
  title: string;
  path: string;
  userId: string;
  scope: string;
  tier: string;
  quality: number;
  contentTypes: string[];
  primaryTopic: string;
  createdAt: string;
}

const view = (item: MemoryItem, score: number): SearchResult => ({
  id: item.id,
  kind: item.kind,
  text: item.text,
  score,
  sourceTurns: item.sourceTurns,
  attributes: item.attributes,
  title: item.title,
  path: item.path,
  userId: item.userId,
  scope: item.scope,
  tier: item.tier,
  quality: item.quality,
  contentTypes: item.contentTypes,
  primaryTopic: item.primaryTopic,
  createdAt: item.createdAt,
});

/** Results asked of the ranking beyond `limit`, for items a store no longer holds as the index does. */
const PAGE_SPARE = 5;

export async function search(
  deps: MemoryApiDeps,
  userId: string,
  req: { query: string; limit: number; filters?: SearchFilters | undefined; minSimilarity?: number | undefined },
): Promise<{ results: SearchResult[] }> {
  const now = deps.clock.now();
  const owners = userId === GLOBAL_USER || req.filters?.includeGlobal === false ? [userId] : [userId, GLOBAL_USER];
  const views = await Promise.all(owners.map((owner) => viewOf(deps, owner)));
  const hits = rankIndex(new SegmentedIndex(views.flatMap((v) => v.entries)), req, now, PAGE_SPARE);
  // The page's items first; the spare hits only when a store no longer holds some as indexed.
  const first = await pageItems(deps, owners, views, hits.slice(0, req.limit));
  const live = (h: IndexHit, items: ReadonlyMap<string, MemoryItem>) => {
    const item = items.get(itemKey(h.item));
    return item && isLive(item, now) ? [view(item, h.score)] : [];
  };
  const results = hits.slice(0, req.limit).flatMap((h) => live(h, first));
  if (results.length < req.limit && hits.length > req.limit) {
    const spare = hits.slice(req.limit);
    const more = await pageItems(deps, owners, views, spare);
    results.push(...spare.flatMap((h) => live(h, more)));
  }
  const page = results.slice(0, req.limit);
  await countResurrections(deps, userId, page);
  return { results: page };
}

/** Seed 003's quality metrics: each summary an agent is given back counts as resurrected once more. */
async function countResurrections(deps: MemoryApiDeps, userId: string, items: ReadonlyArray<Pick<SearchResult, 'id' | 'kind'>>): Promise<void> {
  const ids = items.filter((i) => i.kind === 'reflection' && i.id.startsWith('reflection:')).map((i) => i.id.slice('reflection:'.length));
  if (ids.length > 0 && userId !== GLOBAL_USER) await deps.reflections.countResurrections(userId, ids);
}

/** How summaries fare (seed 003): deletions, resurrections, topics (lib/domain/reflection-quality.ts). */
export async function reflectionQualityOf(deps: MemoryApiDeps, userId: string) {
  return { quality: reflectionQuality(await deps.reflections.list(userId)) };
}

/**
 * An owner's index view; an owner whose changes piled up (no job compacts it) is compacted
 * first. A compaction that fails (another one retired the segments it was merging) leaves the
 * marks for the next: the view it had still serves this request.
 */
async function viewOf(deps: MemoryApiDeps, owner: string): Promise<SearchView> {
  const v = await deps.search.view(owner);
  if (v.changes < COMPACT_AT) return v;
  try {
    await deps.search.compact(owner);
  } catch (error) {
    if (error instanceof SegmentRetiredError) return v;
    throw error;
  }
  return deps.search.view(owner);
}

/** The page's items as their stores hold them now: changed ones from the view, the rest read by id. */
async function pageItems(deps: MemoryApiDeps, owners: readonly string[], views: readonly SearchView[], hits: ReadonlyArray<Pick<IndexHit, 'item'>>): Promise<Map<string, MemoryItem>> {
  const out = new Map<string, MemoryItem>();
  await Promise.all(
    owners.map(async (owner, i) => {
      const fresh = views[i]?.fresh ?? new Map<string, MemoryItem | null>();
      const mine = hits.map((h) => h.item).filter((it) => it.userId === owner);
      for (const it of mine) {
        const item = fresh.get(it.id);
        if (item) out.set(itemKey(it), item);
      }
      const rest = mine.filter((it) => !fresh.has(it.id));
      if (rest.length === 0) return;
      const read = await deps.catalog.itemsById(
        owner,
        rest.map((it) => it.id),
        // Derived items carry their source turns' attributes: those turns are read with them.
        { sourceTurns: [...new Set(rest.filter((it) => it.kind !== 'turn' && it.kind !== 'episode').flatMap((it) => it.sourceTurns))] },
      );
      for (const [id, item] of read) out.set(itemKey({ userId: owner, id }), item);
    }),
  );
  return out;
}

/** One live item by id: API-written items first (the user's, then GLOBAL's), then the other stores. */
async function findItem(deps: MemoryApiDeps, userId: string, id: string): Promise<MemoryItem | null> {
  const now = deps.clock.now();
  if (id.startsWith('mem:')) {
    for (const owner of userId === GLOBAL_USER ? [GLOBAL_USER] : [userId, GLOBAL_USER]) {
      const item = await deps.items.get(owner, id);
      if (item && isLive(item, now)) return item;
    }
    return null;
  }
  const item = (await deps.catalog.itemsById(userId, [id])).get(id);
  return item && isLive(item, now) ? item : null;
}

export async function retrieve(deps: MemoryApiDeps, userId: string, req: { id?: string | undefined; path?: string | undefined }): Promise<{ item: MemoryItem }> {
  const id = req.id ?? (req.path !== undefined ? itemIdForPath(req.path) : null);
  if (!id) throw new MemoryApiError(400, `path: ${JSON.stringify(req.path)} names no memory item (turns/N, Knowledge/…, Knowledge_staging/…, reflections/ID, memory/mem:…)`);
  const item = await findItem(deps, userId, id);
  if (!item) throw notFound(`memory item ${id}`);
  await countResurrections(deps, userId, [item]);
  if (item.kind === 'turn') {
    // The index holds the turn's words capped; retrieve returns the whole turn.
    const { turns } = await deps.turns.getTurns(userId, item.sourceTurns);
    const t = turns[0];
    if (t) return { item: { ...item, text: `${t.query}\n${t.response}` } };
  }
  return { item };
}

export interface Candidate extends Omit<NewTierEntry, 'sourceTurns' | 'clientId' | 'ttlSeconds' | 'sessionId'> {}

/** memory.save: commit the candidates of a turn if (and only if) its validation is APPROVE. */
export async function save(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: { turnId?: number | undefined; sessionId?: string | undefined; validation?: ValidationOutcome | undefined; candidates: Candidate[] },
): Promise<{ committed: MemoryItem[]; discarded: number; reason?: string }> {
  const now = deps.clock.now();
  const entry = req.turnId !== undefined ? (await deps.turns.turnIndex(userId, [req.turnId]))[0] : undefined;
  const stored = entry?.validation as ValidationOutcome | undefined;
  const decision = commitDecision(stored, req.validation);
  if (!decision.commit) {
    await deps.audit.append([
      { userId, itemId: `turn:${req.turnId ?? 'none'}`, action: 'discard_candidates', actor, at: now.toISOString(), reason: decision.reason, note: `${req.candidates.length} candidate(s)` },
    ]);
    return { committed: [], discarded: req.candidates.length, reason: decision.reason };
  }
  const sourceTurns = req.turnId !== undefined ? [req.turnId] : [];
  const attributes = mergeAttributes(sourceTurns, () => entry?.attributes);
  const committed: MemoryItem[] = [];
  for (const c of req.candidates) {
    const fresh = newTierItem(userId, 'long_term', { ...c, sessionId: req.sessionId, sourceTurns, clientId: undefined }, now, attributes);
    // Seed 002 §10: a new document is NEW scope, which expires unless use earns it trust.
    const item: MemoryItem = { ...fresh, expiresAt: newScopeExpiry(now), path: `memory/long_term/${fresh.id}` };
    const res = await deps.items.create(item);
    if (res.created) await deps.audit.append([{ userId, itemId: item.id, action: 'commit', actor, at: now.toISOString(), to: 'long_term', reason: `turn ${req.turnId ?? '(none)'} validated APPROVE` }]);
    committed.push(res.item);
  }
  return { committed, discarded: 0 };
}

export async function createTierEntry(deps: MemoryApiDeps, actor: string, userId: string, tier: Tier, entry: NewTierEntry): Promise<{ item: MemoryItem; created: boolean }> {
  const now = deps.clock.now();
  const attrs = entry.sourceTurns?.length ? await attributesOf(deps, userId, entry.sourceTurns) : {};
  const fresh = newTierItem(userId, tier, entry, now, attrs);
  const item = { ...fresh, path: `memory/${tier}/${fresh.id}` };
  const res = await deps.items.create(item);
  // An entry of that id that expired, was collected or cleared is written anew (its id no longer names a session).
  const anew = { ...item, updatedAt: nextUpdatedAt(res.item.updatedAt, now) };
  const reborn = !res.created && !isLive(res.item, now) && (await deps.items.replace(anew, res.item.updatedAt));
  if (res.created || reborn) {
    await deps.audit.append([{ userId, itemId: fresh.id, action: 'create', actor, at: now.toISOString(), to: tier }]);
    return { item: reborn ? anew : res.item, created: true };
  }
  // The same short-term entry from another session: seen again (seed 004's corroboration), maybe promoted.
  const seen = res.item.tier === tier && isLive(res.item, now) ? await corroborateEntry(deps.items, actor, userId, res.item.id, entry.sessionId, now) : null;
  return { item: seen ?? res.item, created: false };
}

async function attributesOf(deps: MemoryApiDeps, userId: string, turnIds: readonly number[]): Promise<Record<string, string>> {
  const index = new Map((await deps.turns.turnIndex(userId, turnIds)).map((t) => [t.turnId, t.attributes]));
  return mergeAttributes(turnIds, (t) => index.get(t));
}

export async function queryTier(
  deps: MemoryApiDeps,
  userId: string,
  tier: Tier,
  q: { type?: string | undefined; sessionId?: string | undefined; since?: string | undefined; until?: string | undefined; minConfidence?: number | undefined; kind?: string | undefined; limit: number; nextToken?: string | undefined },
): Promise<{ items: MemoryItem[]; nextToken?: string }> {
  const now = deps.clock.now();
  const owners = userId === GLOBAL_USER ? [userId] : [userId, GLOBAL_USER];
  const views = await Promise.all(owners.map((owner) => viewOf(deps, owner)));
  const after = q.nextToken === undefined ? null : pageCursor(q.nextToken, tierCursor);
  const [since, until] = [q.since === undefined ? -Infinity : Date.parse(q.since), q.until === undefined ? Infinity : Date.parse(q.until)];
  const newestFirst = (a: IndexedItem, b: IndexedItem) => b.createdAt - a.createdAt || a.id.localeCompare(b.id) || a.userId.localeCompare(b.userId);
  const matches = [...new SegmentedIndex(views.flatMap((v) => v.entries)).visible()]
    .filter((i) => i.tier === tier && (i.expiresAt === null || i.expiresAt > now.getTime()))
    .filter((i) => (q.type === undefined || i.contentTypes.includes(q.type)) && (q.kind === undefined || i.kind === q.kind))
    .filter((i) => (q.sessionId === undefined || i.sessionId === q.sessionId) && i.createdAt >= since && i.createdAt <= until)
    .filter((i) => (q.minConfidence === undefined || i.confidence >= q.minConfidence) && (after === null || newestFirst(after, i) < 0))
    .sort(newestFirst);
  const page = matches.slice(0, q.limit + PAGE_SPARE);
  const read = await pageItems(deps, owners, views, page.map((item) => ({ item })));
  const items = page.flatMap((i) => {
    const item = read.get(itemKey(i));
    return item && isLive(item, now) ? [{ indexed: i, item }] : [];
  });
  const more = items.length > q.limit || matches.length > page.length;
  const last = !more ? undefined : items.length > q.limit ? items[q.limit - 1]?.indexed : page.at(-1);
  return { items: items.slice(0, q.limit).map((i) => i.item), ...(last ? { nextToken: pageToken([last.createdAt, last.id, last.userId]) } : {}) };
}

/** A page's end as an opaque token: the values that locate it, as JSON in base64url. */
export const pageToken = (at: readonly unknown[]): string => Buffer.from(JSON.stringify(at)).toString('base64url');

/** The values a pageToken carried, in the shape `read` accepts (null: not this route's); otherwise a 400 naming the field. */
export function pageCursor<T>(token: string, read: (parts: unknown) => T | null): T {
  let parts: unknown = null;
  try {
    parts = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    // not JSON: refused below
  }
  const cursor = Array.isArray(parts) ? read(parts) : null;
  if (cursor === null) throw new MemoryApiError(400, 'nextToken: not a token this API returned');
  return cursor;
}

/** A tier page's end: the last item's time, id and owner. */
const tierCursor = (p: unknown): IndexedItem | null => {
  const [createdAt, id, userId] = p as unknown[];
  return typeof createdAt === 'number' && typeof id === 'string' && typeof userId === 'string' ? ({ createdAt, id, userId } as IndexedItem) : null;
};

/** Read-modify-write of an API-written item with an optimistic check, retried on a race. */
async function updateItem(deps: MemoryApiDeps, userId: string, id: string, change: (item: MemoryItem) => { item: MemoryItem; audit: Omit<AuditEntry, 'userId' | 'itemId' | 'at' | 'actor'> }, actor: string): Promise<MemoryItem> {
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
  throw new MemoryApiError(409, `memory item ${id} kept changing; try again`);
}

export async function deleteTierEntry(deps: MemoryApiDeps, actor: string, userId: string, tier: Tier, id: string): Promise<{ item: MemoryItem }> {
  if (id.startsWith('reflection:')) {
    const summary = await findItem(deps, userId, id);
    if (!summary) throw notFound(`memory item ${id}`);
    await deleteSummary(deps, actor, userId, id.slice('reflection:'.length));
    return { item: { ...summary, deleted: true } };
  }
  if (!id.startsWith('mem:')) throw new MemoryApiError(409, `${id}: only API-written items (mem:…) and summaries (reflection:…) are deleted here; discard staged items through review`);
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      if (i.tier !== tier) throw new MemoryApiError(404, `memory item ${id} is ${i.tier}, not ${tier}`);
      return { item: { ...i, deleted: true }, audit: { action: 'delete', from: i.tier } };
    },
    actor,
  );
  return { item };
}

export async function promote(deps: MemoryApiDeps, actor: string, isAdmin: boolean, userId: string, id: string, req: { reason?: string | undefined; to?: 'global' | undefined }): Promise<{ item: MemoryItem }> {
  if (id.startsWith('staged:')) {
    const { knowledgePath } = await reviewPromote(deps, actor, userId, id.slice('staged:'.length), req.reason);
    const item = await findItem(deps, userId, `knowledge:${knowledgePath}`);
    if (!item) throw notFound(`knowledge:${knowledgePath}`);
    return { item };
  }
  if (!id.startsWith('mem:')) throw new MemoryApiError(409, `${id} cannot be promoted: only API-written items (mem:…) and staged items (staged:…) move between tiers`);
  if (req.to === 'global') return { item: await shareGlobally(deps, actor, isAdmin, userId, id, req.reason) };
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      const move = promoteTier(i, deps.clock.now());
      if (!move.ok) throw new MemoryApiError(409, move.reason);
      return { item: move.item, audit: { action: 'promote', from: move.from, to: move.to, ...(req.reason ? { reason: req.reason } : {}) } };
    },
    actor,
  );
  return { item };
}

/** USER → GLOBAL (seed 002 §10): an administrator shares a long-term item with every user. */
async function shareGlobally(deps: MemoryApiDeps, actor: string, isAdmin: boolean, userId: string, id: string, reason: string | undefined): Promise<MemoryItem> {
  if (!isAdmin) throw new MemoryApiError(403, 'only an administrator may promote an item to GLOBAL scope');
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      if (i.tier !== 'long_term') throw new MemoryApiError(409, `${id} is ${i.tier}: only long-term items may become GLOBAL`);
      return { item: { ...i, scope: 'global', expiresAt: null }, audit: { action: 'scope_up', from: i.scope, to: 'global', ...(reason ? { reason } : {}) } };
    },
    actor,
  );
  const shared = await deps.items.create({ ...item, userId: GLOBAL_USER, path: `memory/global/${id}` });
  return shared.item;
}

export async function demote(deps: MemoryApiDeps, actor: string, userId: string, id: string, req: { reason: DemotionReason; note?: string | undefined }): Promise<{ item: MemoryItem }> {
  if (!id.startsWith('mem:')) throw new MemoryApiError(409, `${id} cannot be demoted: only API-written items (mem:…) move between tiers`);
  const item = await updateItem(
    deps,
    userId,
    id,
    (i) => {
      if (i.scope === 'global' && i.userId === GLOBAL_USER) {
        return { item: { ...i, deleted: true }, audit: { action: 'scope_down', from: 'global', to: 'user', reason: req.reason, ...(req.note ? { note: req.note } : {}) } };
      }
      const move = demoteTier(i, deps.clock.now());
      if (!move.ok) throw new MemoryApiError(409, move.reason);
      return { item: move.item, audit: { action: 'demote', from: move.from, to: move.to, reason: req.reason, ...(req.note ? { note: req.note } : {}) } };
    },
    actor,
  );
  return { item };
}

/** Seed 002 §10: the validation outcome of a turn that used these items moves their trust. */
export async function recordOutcome(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: { ids: string[]; validation: ValidationOutcome; turnId?: number | undefined },
): Promise<{ changes: Array<{ id: string; trustFrom: number; trustTo: number; scopeFrom: string; scopeTo: string }>; skipped: Array<{ id: string; reason: string }> }> {
  const changes: Array<{ id: string; trustFrom: number; trustTo: number; scopeFrom: string; scopeTo: string }> = [];
  const skipped: Array<{ id: string; reason: string }> = [];
  for (const id of [...new Set(req.ids)]) {
    if (!id.startsWith('mem:')) {
      skipped.push({ id, reason: 'trust is tracked for API-written items (mem:…); derived knowledge gains trust by recurring' });
      continue;
    }
    let change: ReturnType<typeof applyOutcome> | undefined;
    try {
      await updateItem(
        deps,
        userId,
        id,
        (i) => {
          change = applyOutcome(i, req.validation, deps.clock.now());
          const action = change.scopeTo === change.scopeFrom ? 'trust' : scopeRank(change.scopeTo) > scopeRank(change.scopeFrom) ? 'scope_up' : 'scope_down';
          // A turn the item helped pass is the item seen in use: its decay starts again (lib/domain/tier-policy.ts).
          const used = req.validation === 'APPROVE' ? seenInUse(change.item, deps.clock.now()) : change.item;
          return {
            item: used,
            audit: { action, from: `${change.scopeFrom} (trust ${change.trustFrom})`, to: `${change.scopeTo} (trust ${change.trustTo})`, reason: `validation ${req.validation}${req.turnId !== undefined ? ` of turn ${req.turnId}` : ''}` },
          };
        },
        actor,
      );
    } catch (error) {
      if (error instanceof MemoryApiError && error.status === 404) {
        skipped.push({ id, reason: error.message });
        continue;
      }
      throw error;
    }
    if (change) changes.push({ id, trustFrom: change.trustFrom, trustTo: change.trustTo, scopeFrom: change.scopeFrom, scopeTo: change.scopeTo });
  }
  return { changes, skipped };
}

const scopeRank = (s: string) => ['new', 'user', 'global'].indexOf(s);

// ── Reflections (seeds 001 and 003) ──────────────────────────────────────────────

export async function reflectionLog(deps: MemoryApiDeps, userId: string, limit: number) {
  const now = deps.clock.now();
  const from = '0000';
  const [nightly, weekly] = await Promise.all([deps.runs.list(userId, 'nightly', from, now.toISOString()), deps.runs.list(userId, 'weekly', from, now.toISOString())]);
  const runs = [...nightly, ...weekly].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, limit);
  return { runs };
}

export async function latestReflection(deps: MemoryApiDeps, userId: string) {
  const [nightly, weekly] = await Promise.all([deps.runs.latest(userId, 'nightly'), deps.runs.latest(userId, 'weekly')]);
  const run = [nightly, weekly].filter((r) => r !== null).sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
  if (!run) throw notFound(`a reflection of ${userId}`);
  return { run };
}

/** Seed 001 phase 3, plus the per-run points the console charts. */
export async function assessment(deps: MemoryApiDeps, userId: string, days: number) {
  const now = deps.clock.now();
  const runs = await deps.runs.list(userId, 'nightly', new Date(now.getTime() - days * 86_400_000).toISOString(), now.toISOString());
  const points = runs.map((r) => {
    const issues = (r.findingsByCategory.correction ?? 0) + (r.findingsByCategory.unresolved ?? 0) + (r.findingsByCategory.contradiction ?? 0);
    return { startedAt: r.startedAt, sessionsReviewed: r.sessionsReviewed, issuesPerSession: r.sessionsReviewed > 0 ? Math.round((issues / r.sessionsReviewed) * 1000) / 1000 : 0 };
  });
  return { days, assessment: computeSelfAssessment(runs), points };
}

/** Newest first; each with its turn pair (seed 003): the place after its last turn, the system and assistant messages. */
export async function listSummaries(deps: MemoryApiDeps, userId: string, includeDeleted: boolean) {
  const summaries = (await deps.reflections.list(userId)).filter((s) => includeDeleted || !s.deleted).map((s) => ({ ...s, ...summaryMessages(s) }));
  return { summaries };
}

/** A person corrects a summary's text (POST …/summaries/{id}); the old text stays in its record, the change in the audit trail. */
export async function editSummary(deps: MemoryApiDeps, actor: string, userId: string, id: string, req: { text: string; reason?: string | undefined }) {
  const at = deps.clock.now().toISOString();
  const edited = await deps.reflections.edit(userId, id, { text: capSummaryText(req.text), by: actor, at, reason: req.reason });
  if (!edited) {
    if (await deps.reflections.exists(userId, id)) throw new MemoryApiError(409, `summary ${id} is deleted, or was edited at the same time: read it again`);
    throw notFound(`summary ${id}`);
  }
  await deps.audit.append([{ userId, itemId: `reflection:${id}`, action: 'summary_edit', actor, at, ...(req.reason ? { reason: req.reason } : {}) }]);
  return { summary: { ...edited, ...summaryMessages(edited) } };
}

/**
 * Seed 003's manual reflection: a summary now, with the caller's own instruction if given.
 * It covers the turns since the user's last summary (as the idle rule would), or, when there
 * are none, the turns the last summary covered (summarised again, e.g. with another prompt);
 * it does not reset the idle rule's count. The job id is derived from its turns and prompt,
 * so the same request twice makes one summary (FIFO deduplication, then the reflector's
 * check of the id); the summary appears in GET …/summaries once the reflector has run.
 * With `reflect`, also a batch reflection over the turns no batch has taken yet: an
 * `agent.event` (trigger `user_request`) on the TurnQueue, so the signal function assigns
 * those turns to the batch in the user's signal state, as for an agent's own request.
 */
export async function requestSummary(deps: MemoryApiDeps, actor: string, userId: string, req: { prompt?: string | undefined; reflect?: boolean | undefined }) {
  const { state } = parseSignalState((await deps.signalState.load(userId)).raw);
  const turnIds = state.summaryTurnIds.length > 0 ? state.summaryTurnIds : ((await deps.reflections.list(userId)).find((s) => !s.deleted)?.sourceTurns ?? []);
  if (turnIds.length === 0) throw new MemoryApiError(409, `user ${userId} has no turns to summarise yet`);
  const prompt = req.prompt?.trim() || undefined;
  const jobId = `manual-${turnIds[0]}-${turnIds.at(-1)}-${fnv1a32(prompt ?? '').toString(16).padStart(8, '0')}`;
  const requestedAt = deps.clock.now().toISOString();
  await deps.jobs.enqueue({ type: 'reflection.job', version: 1, jobId, userId, kind: 'manual', trigger: 'manual', urgency: 0, turnIds: [...turnIds], ...(prompt ? { prompt } : {}), requestedAt });
  if (req.reflect) {
    await deps.events.publish([{ type: 'agent.event', version: 1, userId, timestamp: requestedAt, trigger: 'user_request', detail: prompt ?? `reflection asked for by ${actor} through the API` }]);
  }
  await deps.audit.append([
    { userId, itemId: `reflection:${jobId}`, action: 'summary_request', actor, at: requestedAt, reason: `${prompt ? 'manual summary with its own prompt' : 'manual summary'}${req.reflect ? ', and a batch reflection' : ''}` },
  ]);
  return { jobId, turnIds: [...turnIds], ...(req.reflect ? { reflect: true } : {}) };
}

export async function deleteSummary(deps: MemoryApiDeps, actor: string, userId: string, id: string) {
  if (!(await deps.reflections.softDelete(userId, id))) throw notFound(`summary ${id}`);
  await deps.audit.append([{ userId, itemId: `reflection:${id}`, action: 'reflection_delete', actor, at: deps.clock.now().toISOString(), reason: 'deleted by a person (seed 003: never shown again)' }]);
  return { id, deleted: true };
}

// ── Review of staged items ──────────────────────────────────────────────────────

/**
 * The review list, a page at a time in path order: a page reads at most `limit` staged
 * records (and the batch logs of those it shows), however long the user's history; without
 * `includeDecided` a page shows only the undecided ones among them, so it can hold fewer.
 */
export async function listStagedForReview(deps: MemoryApiDeps, userId: string, q: { includeDecided: boolean; limit: number; nextToken?: string | undefined }) {
  const after = q.nextToken === undefined ? undefined : pageCursor(q.nextToken, (p) => {
    const [kind, path] = p as unknown[];
    return kind === 'staged' && typeof path === 'string' ? path : null;
  });
  const page = await deps.knowledge.stagedPage(userId, { limit: q.limit, after, undecidedOnly: !q.includeDecided });
  const records = page.records;
  const batchIds = [...new Set(records.flatMap((r) => [r.batchId, ...r.promotedBy]))];
  const logs = new Map((await Promise.all(batchIds.map(async (b) => [b, await deps.batchLogs.get(userId, b)] as const))).filter(([, l]) => l !== null));
  const staged = records.map((r) => ({
    id: `staged:${r.path}`,
    path: `Knowledge_staging/${r.path}`,
    kind: r.kind,
    title: r.title,
    text: r.text,
    confidence: r.confidence,
    sourceTurns: r.sourceTurns,
    status: r.status,
    promotionCount: r.promotedBy.length,
    promotionsNeeded: PROMOTIONS_TO_KNOWLEDGE,
    ...(r.review ? { review: r.review } : {}),
    history: gateHistory(r, logs),
  }));
  return { staged, ...(page.next !== undefined ? { nextToken: pageToken(['staged', page.next]) } : {}) };
}


/** A staged item's way through the gates: the batch that staged it, the batches that reinforced it, the review. */
function gateHistory(r: StagedRecord, logs: ReadonlyMap<string, { timestamp: string; quality_gate_results: { rejections: Array<{ gate: string; item: string; reason: string }> }; reinforced: Array<{ staged_file: string; similarity: number }> } | null>) {
  const staging = logs.get(r.batchId);
  const events: Array<{ at: string; batchId?: string; event: string; detail: string }> = [
    {
      at: r.stagedAt,
      batchId: r.batchId,
      event: 'staged',
      detail: `passed turn_existence, keyword_match, related_file_exists, dedup and drift_guard${staging ? `; the same batch's gates rejected ${staging.quality_gate_results.rejections.length} other item(s)` : ''}`,
    },
  ];
  for (const b of r.promotedBy) {
    const log = logs.get(b);
    const hit = log?.reinforced.find((x) => x.staged_file === `Knowledge_staging/${r.path}`);
    events.push({ at: log?.timestamp ?? '', batchId: b, event: 'reinforced', detail: hit ? `recurred with similarity ${hit.similarity}` : 'recurred' });
  }
  if (r.status === 'promoted') events.push({ at: '', event: 'promoted', detail: `to Knowledge/${r.knowledgePath ?? ''}` });
  if (r.review) events.push({ at: r.review.at, event: `review_${r.review.decision}`, detail: `by ${r.review.by}${r.review.reason ? `: ${r.review.reason}` : ''}` });
  return events;
}

async function stagedRecord(deps: MemoryApiDeps, userId: string, path: string): Promise<StagedRecord> {
  const rel = path.replace(/^Knowledge_staging\//, '');
  const [record] = await deps.knowledge.stagedRecords(userId, [rel]);
  if (!record) throw notFound(`staged item ${path}`);
  return record;
}

export async function reviewPromote(deps: MemoryApiDeps, actor: string, userId: string, path: string, reason: string | undefined): Promise<{ knowledgePath: string; corrected?: true }> {
  const record = await stagedRecord(deps, userId, path);
  if (record.status === 'promoted' && record.knowledgePath) return { knowledgePath: record.knowledgePath };
  if (record.status === 'discarded') throw new MemoryApiError(409, `staged item ${record.path} was discarded`);
  const now = deps.clock.now();
  const taken = new Set((await deps.knowledge.loadKnowledge(userId)).map((d) => d.id));
  const { knowledgePath, corrected } = await promoteStaged(deps, userId, record, taken, now.toISOString());
  const review = { decision: 'promoted' as const, by: actor, at: now.toISOString(), ...(reason ? { reason } : {}) };
  await deps.knowledge.recordReview(userId, record.path, review);
  await deps.audit.append([{ userId, itemId: `staged:${record.path}`, action: 'review_promote', actor, at: review.at, from: 'proposed', to: `Knowledge/${knowledgePath}`, ...(corrected ? { note: 'a correction: the target document changed (revert to undo)' } : {}), ...(reason ? { reason } : {}) }]);
  return { knowledgePath, ...(corrected ? { corrected } : {}) };
}

export async function reviewDiscard(deps: MemoryApiDeps, actor: string, userId: string, path: string, reason: string | undefined): Promise<{ path: string; status: 'discarded' }> {
  const record = await stagedRecord(deps, userId, path);
  if (record.status === 'promoted') throw new MemoryApiError(409, `staged item ${record.path} is already promoted to Knowledge/${record.knowledgePath ?? ''}`);
  if (record.status !== 'discarded') {
    const at = deps.clock.now().toISOString();
    await deps.knowledge.recordReview(userId, record.path, { decision: 'discarded', by: actor, at, ...(reason ? { reason } : {}) });
    await deps.audit.append([{ userId, itemId: `staged:${record.path}`, action: 'review_discard', actor, at, from: 'proposed', ...(reason ? { reason } : {}) }]);
  }
  return { path: `Knowledge_staging/${record.path}`, status: 'discarded' };
}

export async function batches(deps: MemoryApiDeps, userId: string, limit: number) {
  return { batches: await deps.batchLogs.list(userId, limit) };
}

export async function auditTrail(deps: MemoryApiDeps, userId: string, itemId: string | undefined, limit: number) {
  return { entries: await deps.audit.list(userId, { itemId, limit }) };
}

/**
 * Seed 002 §9: how reliable these domains have been as sources — counts, success rate,
 * extraction quality, reliability and advice — from every user's reported outcomes. Domains
 * are normalised (lower case, no `www.`); one nobody reported gets the neutral prior.
 */
export async function sourceReliability(deps: MemoryApiDeps, domains: string): Promise<{ sources: SourceReliability[] }> {
  const wanted = [...new Set(domains.split(',').map((d) => normaliseDomain(d.trim())))];
  return { sources: (await deps.sources.stats(wanted)).map(reliabilityOf) };
}

/** Seed 004 P3-M4: how well each capability has worked for this user, from their episodes (turns' and agent.events'). */
export async function capabilities(deps: MemoryApiDeps, userId: string): Promise<{ capabilities: CapabilityConfidence[] }> {
  const [entries, events] = await Promise.all([deps.turns.episodes(userId), deps.turns.eventEpisodes(userId)]);
  return {
    capabilities: capabilityConfidence([
      ...entries.flatMap((e) => (e.episode ? [{ turnId: e.turnId, timestamp: e.timestamp, episode: e.episode }] : [])),
      ...events.map((e) => ({ episodeId: e.episodeId, timestamp: e.timestamp, episode: summariseEpisode(e.episode) })),
    ]),
  };
}
