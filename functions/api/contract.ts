/**
 * The memory API's contract: every route with its zod schemas. The handler validates with
 * them and the OpenAPI document (/openapi.json) is generated from them, so the two cannot
 * drift apart. `POST /v1/users/{userId}/memory/search` is a fixed contract: tools outside
 * this repository call it.
 */
import * as z from 'zod';
import { SettingsChangeSchema } from '../../lib/settings/user-settings.js';
import { DomainSchema, UserIdSchema } from '../../events/common.js';
import { ValidationOutcomeSchema } from '../../events/turn-saved.js';
import { MemoryItemSchema, SignificanceSchema, TierSchema } from '../../lib/items/memory-item.js';
import { SearchFiltersSchema } from '../../lib/search/memory-search.js';
import { SearchExplainSchema } from '../../lib/search/search-explain.js';
import { DemotionReasonSchema } from '../../lib/tiers/memory-tiers.js';

export const API_VERSION = '1.0.0';

export const UserParam = z.object({ userId: UserIdSchema.or(z.literal('GLOBAL')) });
export const ItemId = z.string().min(1).max(600);
const Limit = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt);

export const SearchRequestSchema = z
  .object({
    query: z.string().min(1).max(4000),
    limit: z.number().int().min(1).max(100).default(10),
    filters: SearchFiltersSchema.optional(),
    /** The confidence floor: results whose similarity to the query is below it are left out. */
    minSimilarity: z.number().min(0).max(1).optional(),
    /** Each result says why it ranked (its `explain`): the rankings that placed it and where, the terms matched, quality, recency. @default false */
    explain: z.boolean().optional(),
  })
  .strict();

export const SearchResultSchema = z.object({
  id: z.string(),
  kind: z.string(),
  text: z.string(),
  score: z.number(),
  sourceTurns: z.array(z.number().int()),
  attributes: z.record(z.string(), z.string()),
  title: z.string(),
  path: z.string(),
  userId: z.string(),
  scope: z.string(),
  tier: z.string(),
  quality: z.number(),
  contentTypes: z.array(z.string()),
  primaryTopic: z.string(),
  createdAt: z.string(),
  /** Present when the request asked for `explain`. */
  explain: SearchExplainSchema.optional(),
});

const Metadata = {
  title: z.string().min(1).max(200).optional(),
  type: z.string().min(1).max(64).optional(),
  primaryTopic: z.string().max(200).optional(),
  keywords: z.array(z.string().min(1).max(64)).max(50).optional(),
  userPurpose: z.string().max(1000).optional(),
  dataRequirements: z.array(z.string().min(1).max(64)).max(20).optional(),
  contentTypes: z.array(z.string().min(1).max(64)).min(1).max(20).optional(),
  confidence: z.number().min(0).max(1).optional(),
};

export const CandidateSchema = z.object({ text: z.string().min(1).max(20_000), ...Metadata }).strict();

export const SaveRequestSchema = z
  .object({
    /** The turn the candidates come from; its stored validation decides (req R-CAND-1). */
    turnId: z.number().int().min(1).optional(),
    sessionId: z.string().min(1).max(256).optional(),
    /** The turn's validation outcome, when the turn has not arrived yet. */
    validation: ValidationOutcomeSchema.optional(),
    candidates: z.array(CandidateSchema).min(1).max(20),
  })
  .strict();

/** memory.retrieve's fields (the MCP tool takes them as they are; the route checks exactly one is given). */
export const RetrieveRequestShape = { id: ItemId.optional(), path: z.string().min(1).max(600).optional() };
export const RetrieveRequestSchema = z
  .object(RetrieveRequestShape)
  .strict()
  .refine((r) => (r.id === undefined) !== (r.path === undefined), { message: 'give exactly one of id and path', path: ['id'] });

export const TierEntrySchema = z
  .object({
    text: z.string().min(1).max(20_000),
    ...Metadata,
    sessionId: z.string().min(1).max(256).optional(),
    sourceTurns: z.array(z.number().int().min(1)).max(100).optional(),
    ttlSeconds: z.number().int().min(1).max(30 * 86_400).optional(),
    /** Idempotency key: the same key is the same entry. */
    clientId: z.string().min(1).max(128).optional(),
    /** An ephemeral entry's signs of significance (req R-TIER-11): its session's close promotes it to short-term. */
    significance: z.array(SignificanceSchema).max(4).optional(),
  })
  .strict();

export const TierQuerySchema = z.object({
  type: z.string().min(1).max(64).optional(),
  kind: z.string().min(1).max(32).optional(),
  sessionId: z.string().min(1).max(256).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  minConfidence: z.coerce.number().min(0).max(1).optional(),
  limit: Limit(500, 100),
  /** The `nextToken` of the previous page: the items after it. */
  nextToken: z.string().min(1).max(2048).optional(),
});

export const PromoteRequestSchema = z
  .object({ reason: z.string().min(1).max(1000).optional(), to: z.literal('global').optional() })
  .strict();
export const DemoteRequestSchema = z.object({ reason: DemotionReasonSchema, note: z.string().max(1000).optional() }).strict();
/** Req R-TIER-8: what contradicts the entry (the same `evidence` counts once), and a note for the audit trail. */
export const ContradictRequestSchema = z.object({ evidence: z.string().min(1).max(256).optional(), note: z.string().max(1000).optional() }).strict();
export const OutcomeRequestSchema = z
  .object({ ids: z.array(ItemId).min(1).max(100), validation: ValidationOutcomeSchema, turnId: z.number().int().min(1).optional() })
  .strict();
export const ReviewRequestSchema = z.object({ path: z.string().min(1).max(600), reason: z.string().min(1).max(1000).optional() }).strict();
/** Req R-SUM-9's manual summary: the instruction for this summary (the user's or the stage's when absent). */
export const SummaryRequestSchema = z
  .object({
    prompt: z.string().min(1).max(4000).optional(),
    /** Also reflect now on the turns no batch has taken yet (an agent.event, trigger user_request). */
    reflect: z.boolean().optional(),
  })
  .strict();

const ItemResponse = z.object({ item: MemoryItemSchema });
const Looseobject = z.record(z.string(), z.unknown());

/** An entity of the relation graph by its label (normalised to its key by the API). */
const EntityParam = z.string().min(1).max(200);
export const GraphEdgeRequestSchema = z
  .object({
    from: EntityParam,
    relation: z.string().min(1).max(100),
    to: EntityParam,
    note: z.string().max(1000).optional(),
  })
  .strict();
export const GraphRestoreRequestSchema = z.object({ id: z.string().min(1).max(700) }).strict();
/** A pruned fact by its path (`Knowledge/…` or relative to it). */
/** A person's correction of an item's text (itemEdit) and its undoing (itemRestore). */
export const ItemEditRequestSchema = z.object({ text: z.string().trim().min(1).max(32_000), reason: z.string().trim().min(1).max(1000) }).strict();
export const ItemRestoreRequestSchema = z.object({ at: z.iso.datetime({ offset: true }), reason: z.string().trim().min(1).max(1000) }).strict();

export const KnowledgeRestoreRequestSchema = z.object({ path: z.string().min(1).max(600) }).strict();
/** A corrected fact by its path, and why its latest change is undone. */
export const KnowledgeRevertRequestSchema = z.object({ path: z.string().min(1).max(600), reason: z.string().max(1000).optional() }).strict();

/** Most domains one reliability request may ask for. */
export const MAX_DOMAINS_PER_REQUEST = 20;

/** `?domains=docs.example.com,www.example.org`: host names, comma-separated. */
export const SourcesQuerySchema = z.object({
  domains: z
    .string()
    .min(1)
    .max(MAX_DOMAINS_PER_REQUEST * 254)
    .refine((list) => list.split(',').length <= MAX_DOMAINS_PER_REQUEST, `at most ${MAX_DOMAINS_PER_REQUEST} domains`)
    .refine((list) => list.split(',').every((d) => DomainSchema.safeParse(d.trim().toLowerCase()).success), 'comma-separated host names such as docs.example.com (no scheme, port or path)'),
});

/** Why an item is deleted (kept in the audit trail; never the item's content). */
export const DeleteQuerySchema = z.object({ reason: z.string().min(1).max(500).optional() });
/** Most turns one forget by provenance removes (lib/forget/forget-turns.ts MAX_FORGET_TURNS). */
const FORGET_TURNS_MAX = 500;
/** Forget by provenance: exactly one of `turns` and `sessionId`; a dry run changes nothing. */
/** Its fields (the MCP tool takes them as they are; the route checks exactly one of turns and sessionId is given). */
export const ForgetRequestShape = {
  turns: z.array(z.number().int().min(1)).min(1).max(FORGET_TURNS_MAX).optional(),
  sessionId: z.string().min(1).max(256).optional(),
  dryRun: z.boolean(),
  reason: z.string().min(1).max(500).optional(),
};
export const ForgetRequestSchema = z
  .object(ForgetRequestShape)
  .strict()
  .refine((r) => (r.turns === undefined) !== (r.sessionId === undefined), { message: 'give exactly one of turns and sessionId', path: ['turns'] });
const ErasedIds = z.array(z.string());
/** What a forget by provenance removes (or, in a dry run, would remove), ids by kind; never content. */
export const ForgetReceiptSchema = z.object({
  dryRun: z.boolean(),
  turns: z.array(z.number().int()),
  removed: z.object({ turn: ErasedIds, episode: ErasedIds, staged: ErasedIds, knowledge: ErasedIds, summary: ErasedIds, diary: ErasedIds, memory: ErasedIds, graphEdge: ErasedIds }),
  total: z.number().int(),
});

/** `admin`: administrators only — the whole stage's (no `{userId}`), or an operation on a user's data (a search index rebuild). */
export type Access = 'public' | 'read' | 'write' | 'admin';

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway style: `{name}` path parameters. */
  path: string;
  operationId: string;
  summary: string;
  access: Access;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  response: z.ZodType;
  /** Content type of a non-JSON answer. */
  produces?: string;
}

const u = '/v1/users/{userId}';

/** One user's own id, not GLOBAL (which every user shares): forget, export and import act on one user. */
const OneUserParam = z.object({ userId: UserIdSchema.refine((id) => id !== 'GLOBAL', 'GLOBAL is shared by every user: it is not forgotten, exported or imported as one (delete its items one by one)') });
const ForgetCountsSchema = z.object({ items: z.number().int(), objects: z.number().int(), globalItems: z.number().int(), globalIndexObjects: z.number().int() });
/** An archived object (lib/archive/user-archive.ts): its text, or its bytes in base64. */
const ArchiveDocumentBase = { path: z.string().min(1).max(1024), contentType: z.string().max(200).optional() };
/** A user's memory as one archive (lib/archive/user-archive.ts): what export answers and import takes. */
export const UserArchiveSchema = z
  .object({
    format: z.literal('reflective-memory/user-archive'),
    version: z.literal(1),
    userId: UserIdSchema,
    exportedAt: z.string(),
    records: z.array(z.record(z.string(), z.unknown())).max(200_000),
    documents: z
      .array(
        z.union([
          z.object({ ...ArchiveDocumentBase, text: z.string() }).strict(),
          z.object({ ...ArchiveDocumentBase, base64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64') }).strict(),
        ]),
      )
      .max(200_000),
  })
  .strict();
/** A forget's receipt (lib/forget/forget-user.ts): counts per store, never content. */
const ForgetReceiptResponse = z.object({
  receipt: z.object({ userId: z.string(), requestedAt: z.string(), requestedBy: z.string(), status: z.enum(['pending', 'done']), completedAt: z.string().optional(), counts: ForgetCountsSchema }),
});

export const routes = [
  { method: 'GET', path: '/openapi.json', operationId: 'openapi', summary: 'This document', access: 'public', response: Looseobject },
  { method: 'GET', path: '/console', operationId: 'console', summary: 'The review console (a web page)', access: 'public', response: z.string(), produces: 'text/html' },
  {
    method: 'POST', path: `${u}/memory/search`, operationId: 'memorySearch', access: 'read', params: UserParam, body: SearchRequestSchema,
    summary: 'memory.search: every kind of memory item, ranked by relevance blended with quality and recency; best first',
    response: z.object({ results: z.array(SearchResultSchema) }),
  },
  {
    method: 'POST', path: `${u}/memory/save`, operationId: 'memorySave', access: 'write', params: UserParam, body: SaveRequestSchema,
    summary: "memory.save: commit memory candidates when the turn's validation is APPROVE; discard them otherwise",
    response: z.object({ committed: z.array(MemoryItemSchema), discarded: z.number().int(), reason: z.string().optional() }),
  },
  { method: 'POST', path: `${u}/memory/retrieve`, operationId: 'memoryRetrieve', access: 'read', params: UserParam, body: RetrieveRequestSchema, summary: 'memory.retrieve: one item by id or path', response: ItemResponse },
  {
    method: 'POST', path: `${u}/memory/tiers/{tier}`, operationId: 'tierCreate', access: 'write', params: UserParam.extend({ tier: TierSchema }), body: TierEntrySchema,
    summary: 'Create an entry in a tier (ephemeral: until its session closes; short_term: 7 days by default); the same short-term entry from another session corroborates it, and may promote it', response: ItemResponse.extend({ created: z.boolean() }),
  },
  {
    method: 'GET', path: `${u}/memory/tiers/{tier}`, operationId: 'tierQuery', access: 'read', params: UserParam.extend({ tier: TierSchema }), query: TierQuerySchema,
    summary: 'Query a tier by type, kind, session, time window and confidence; newest first', response: z.object({ items: z.array(MemoryItemSchema), nextToken: z.string().optional() }),
  },
  {
    method: 'DELETE', path: `${u}/memory/tiers/{tier}/{id}`, operationId: 'tierDelete', access: 'write', params: UserParam.extend({ tier: TierSchema, id: ItemId }),
    summary: 'Delete an entry (soft: kept for the audit trail, never returned again)', response: ItemResponse,
  },
  {
    method: 'POST', path: `${u}/memory/items/{id}/promote`, operationId: 'itemPromote', access: 'write', params: UserParam.extend({ id: ItemId }), body: PromoteRequestSchema,
    summary: 'Promote one tier up (staged items: to Knowledge); `to: global` shares a long-term item with every user (administrators only)', response: ItemResponse,
  },
  {
    method: 'POST', path: `${u}/memory/items/{id}/demote`, operationId: 'itemDemote', access: 'write', params: UserParam.extend({ id: ItemId }), body: DemoteRequestSchema,
    summary: 'Demote one tier down, with a reason (contradiction, decay, superseded, other)', response: ItemResponse,
  },
  {
    method: 'POST', path: `${u}/memory/items/{id}/contradict`, operationId: 'itemContradict', access: 'write', params: UserParam.extend({ id: ItemId }), body: ContradictRequestSchema,
    summary: "Contradict an entry (mem:…): confidence −0.3 (the stage's contradiction cost); below its tier's floor (short-term 0.3, long-term 0.5) one tier down with reason `contradiction`; audited. The same `evidence` counts once",
    response: ItemResponse,
  },
  {
    method: 'POST', path: `${u}/memory/items/{id}/contradict/undo`, operationId: 'itemContradictUndo', access: 'write', params: UserParam.extend({ id: ItemId }),
    summary: "Undo an entry's last contradiction: its tier and confidence as before it, audited (`undo_contradict`); 409 when it has none", response: ItemResponse,
  },
  {
    method: 'POST', path: `${u}/memory/items/{id}`, operationId: 'itemEdit', access: 'write', params: UserParam.extend({ id: ItemId }), body: ItemEditRequestSchema,
    summary:
      "Correct an item's text: a Knowledge fact or nightly finding (`knowledge:<path>`) or a summary (`summary:<id>`); any other kind is a 400 naming `id`. The old text stays in the item's history and in the audit entry (`previous`); search finds the new text only. 409 when the item's text changed meanwhile",
    response: ItemResponse,
  },
  {
    method: 'POST', path: `${u}/memory/items/{id}/restore`, operationId: 'itemRestore', access: 'write', params: UserParam.extend({ id: ItemId }), body: ItemRestoreRequestSchema,
    summary: 'Bring back the text an edit (or restore) replaced: `at` is that change\'s audit entry time. A change in its own right, audited and itself restorable; 404 when no edit of the item has that `at`',
    response: ItemResponse,
  },
  {
    method: 'POST', path: `${u}/memory/outcomes`, operationId: 'memoryOutcomes', access: 'write', params: UserParam, body: OutcomeRequestSchema,
    summary: 'Report the validation outcome of a turn that used these items, of any kind (mem:, knowledge:, turn:, summary:, staged:, episode:, diary:): APPROVE raises trust, RETRY and FAIL lower it, REVISE does nothing; search ranks by it; a mem: item\'s trust moves its scope; skipped: ids of no live item',
    response: z.object({ changes: z.array(Looseobject), skipped: z.array(z.object({ id: z.string(), reason: z.string() })) }),
  },
  {
    method: 'GET', path: `${u}/memory/audit`, operationId: 'auditList', access: 'read', params: UserParam,
    query: z.object({ itemId: ItemId.optional(), limit: Limit(1000, 100) }),
    summary: 'The audit trail: promotions, demotions, scope changes, deletions, reviews (who, what, when, why); newest first', response: z.object({ entries: z.array(Looseobject) }),
  },
  {
    method: 'GET', path: `${u}/sleep-time/runs`, operationId: 'sleepTimeRuns', access: 'read', params: UserParam, query: z.object({ limit: Limit(500, 20) }),
    summary: 'The sleep-time run log: nightly and weekly runs, newest first', response: z.object({ runs: z.array(Looseobject) }),
  },
  { method: 'GET', path: `${u}/sleep-time/runs/latest`, operationId: 'sleepTimeLatest', access: 'read', params: UserParam, summary: 'The most recent sleep-time run (nightly or weekly)', response: z.object({ run: Looseobject }) },
  {
    method: 'GET', path: `${u}/summaries/quality`, operationId: 'summaryQuality', access: 'read', params: UserParam,
    summary: "Req R-SUM-10's summary quality metrics: summaries deleted (high: inaccurate), resurrected by search or retrieve (high: useful), resurrected while deleted (must stay 0), the topics they cover",
    response: z.object({ quality: Looseobject }),
  },
  {
    method: 'GET', path: `${u}/sleep-time/assessment`, operationId: 'sleepTimeAssessment', access: 'read', params: UserParam, query: z.object({ days: Limit(365, 30) }),
    summary: 'Self-assessment over the nightly runs (rates and trend) with one point per run', response: Looseobject,
  },
  {
    method: 'GET', path: `${u}/summaries`, operationId: 'summaryList', access: 'read', params: UserParam,
    query: z.object({ includeDeleted: z.enum(['true', 'false']).default('false'), limit: Limit(500, 50) }),
    summary: 'Context summaries (turn pairs written after inactivity): the newest `limit`, newest first by the turns they cover (the last turn, then the id)', response: z.object({ summaries: z.array(Looseobject) }),
  },
  {
    method: 'POST', path: `${u}/summaries`, operationId: 'summaryRequest', access: 'write', params: UserParam, body: SummaryRequestSchema,
    summary: 'A summary now (req R-SUM-9 manual summary), with its own prompt if given, over the turns since the last summary (or those the last one covered); answers the job id, the summary follows in GET …/summaries',
    response: z.object({
      jobId: z.string(),
      turnIds: z.array(z.number()),
      /** With `reflect` asked for: true when a batch reflection was sent for, false (with `reason`) when there was nothing to reflect on. */
      reflect: z.boolean().optional(),
      reason: z.string().optional(),
    }),
  },
  {
    method: 'POST', path: `${u}/summaries/{id}`, operationId: 'summaryEdit', access: 'write', params: UserParam.extend({ id: z.string().min(1).max(200) }),
    body: z.object({ text: z.string().trim().min(1).max(32_000), reason: z.string().max(1000).optional() }).strict(),
    summary: "Edit a summary's text (req R-SUM-6, R-SUM-7: the user's correction of the AI's understanding); the old text is kept in the record's `edits`", response: z.object({ summary: Looseobject }),
  },
  {
    method: 'DELETE', path: `${u}/summaries/{id}`, operationId: 'summaryDelete', access: 'write', params: UserParam.extend({ id: z.string().min(1).max(200) }),
    summary: 'Soft-delete a summary: it is kept for audit and never returned by search again', response: z.object({ id: z.string(), deleted: z.boolean() }),
  },
  {
    method: 'GET', path: `${u}/diary`, operationId: 'diaryList', access: 'read', params: UserParam,
    query: z.object({
      limit: Limit(100, 20),
      nextToken: z.string().min(1).max(2048).optional(),
      type: z.enum(['reflection', 'observation']).optional(),
      include: z.enum(['visible', 'all']).default('visible'),
    }),
    summary: "The diary (req R-EVT, R-DIARY), newest first: observations the impact criteria wrote and reflections on agent.events (trigger, insight, recommendation, confidence, emotion state); `include=all` adds the rejected attempts",
    response: z.object({ entries: z.array(Looseobject), nextToken: z.string().optional() }),
  },
  {
    method: 'POST', path: `${u}/diary/{id}`, operationId: 'diaryOverride', access: 'write', params: UserParam.extend({ id: z.string().min(1).max(200) }),
    body: z.object({ decision: z.enum(['keep', 'drop']), reason: z.string().max(1000).optional() }).strict(),
    summary: "A person keeps a diary entry the criteria rejected, or drops one they wrote (audited; search follows)", response: z.object({ entry: Looseobject }),
  },
  {
    method: 'GET', path: `${u}/review/staged`, operationId: 'reviewList', access: 'read', params: UserParam,
    query: z.object({ includeDecided: z.enum(['true', 'false']).default('false'), limit: Limit(200, 50), nextToken: z.string().min(1).max(2048).optional() }),
    summary: 'Staged items with their gate history, a page at a time in path order (a page reads at most `limit` records; without includeDecided it shows the undecided among them, so it can hold fewer)',
    response: z.object({ staged: z.array(Looseobject), nextToken: z.string().optional() }),
  },
  {
    method: 'POST', path: `${u}/review/promote`, operationId: 'reviewPromote', access: 'write', params: UserParam, body: ReviewRequestSchema,
    summary: 'Promote a staged item to Knowledge now', response: z.object({ knowledgePath: z.string() }),
  },
  {
    method: 'POST', path: `${u}/review/discard`, operationId: 'reviewDiscard', access: 'write', params: UserParam, body: ReviewRequestSchema,
    summary: 'Discard a staged item (it is kept, so the same knowledge is not staged again)', response: z.object({ path: z.string(), status: z.literal('discarded') }),
  },
  {
    method: 'GET', path: `${u}/graph/entities/{entity}/neighbours`, operationId: 'graphNeighbours', access: 'read', params: UserParam.extend({ entity: EntityParam }),
    query: z.object({ includePruned: z.enum(['true', 'false']).optional() }),
    summary: 'An entity\'s neighbours in the relation graph (aliases resolved), best first; pruned edges with includePruned=true', response: Looseobject,
  },
  {
    method: 'POST', path: `${u}/graph/edges`, operationId: 'graphEdgeCreate', access: 'write', params: UserParam, body: GraphEdgeRequestSchema,
    summary: 'State an edge (from, relation, to): user-created edges are never decayed, pruned or merged away', response: z.object({ edge: Looseobject.optional() }),
  },
  {
    method: 'POST', path: `${u}/graph/edges/restore`, operationId: 'graphEdgeRestore', access: 'write', params: UserParam, body: GraphRestoreRequestSchema,
    summary: 'Restore a pruned edge within its recovery window', response: z.object({ edge: Looseobject }),
  },
  {
    method: 'POST', path: `${u}/knowledge/restore`, operationId: 'knowledgeRestore', access: 'write', params: UserParam, body: KnowledgeRestoreRequestSchema,
    summary: 'Restore a Knowledge fact the hygiene sweep pruned (confidence decayed while unverified), within its recovery window', response: z.object({ fact: Looseobject }),
  },
  {
    method: 'POST', path: `${u}/knowledge/revert`, operationId: 'knowledgeRevert', access: 'write', params: UserParam, body: KnowledgeRevertRequestSchema,
    summary: 'Undo the latest change of a Knowledge fact: a promoted correction, or a revert (itself undone the same way); the fact keeps every version in its history', response: z.object({ fact: Looseobject }),
  },
  {
    method: 'POST', path: `${u}/graph/entities/{entity}/split`, operationId: 'graphEntitySplit', access: 'write', params: UserParam.extend({ entity: EntityParam }),
    summary: 'Undo a merge: the entity stands on its own again (and is not merged automatically again)', response: z.object({ entity: Looseobject }),
  },
  {
    method: 'GET', path: `${u}/graph/log`, operationId: 'graphLog', access: 'read', params: UserParam, query: z.object({ limit: Limit(500, 50) }),
    summary: 'The relation graph\'s hygiene log (merges, splits, decay, pruning, restores, removals), newest first', response: z.object({ entries: z.array(Looseobject) }),
  },
  {
    method: 'GET', path: `${u}/capabilities`, operationId: 'capabilityConfidence', access: 'read', params: UserParam,
    summary: 'Capability confidence from the user\'s episodes (req R-EPI): uses, successes, confidence, recent success rate and trend per capability', response: z.object({ capabilities: z.array(Looseobject) }),
  },
  {
    method: 'GET', path: `${u}/sources`, operationId: 'sourceReliability', access: 'read', params: UserParam, query: SourcesQuerySchema,
    summary: 'Reliability of web domains as sources (req R-SRC): counts from every user\'s reported outcomes, not only this user\'s', response: z.object({ sources: z.array(Looseobject) }),
  },
  {
    method: 'GET', path: `${u}/settings`, operationId: 'settingsRead', access: 'read', params: UserParam,
    summary: "The user's own summary settings (req R-SUM-8): enabled, prompt, maxTokens, idleMinutes; a field not set follows the stage's default",
    response: z.object({ settings: Looseobject }),
  },
  {
    method: 'POST', path: `${u}/settings`, operationId: 'settingsChange', access: 'write', params: UserParam, body: SettingsChangeSchema,
    summary: 'Change the user\'s summary settings: each field named is set, or cleared with null (the stage default again); idleMinutes 1–1440, maxTokens 100–8000',
    response: z.object({ settings: Looseobject }),
  },
  {
    method: 'GET', path: `${u}/costs`, operationId: 'userCosts', access: 'read', params: UserParam, query: z.object({ days: Limit(90, 7) }),
    summary: "The user's model cost by UTC day (today's included, oldest first): jobs, tokens, USD at the price table's rates, by kind (batch, summary, nightly, weekly)",
    response: z.object({ days: z.array(Looseobject) }),
  },
  {
    method: 'DELETE', path: u, operationId: 'userForget', access: 'write', params: OneUserParam,
    summary:
      "Forget the user: every item, object and object version of theirs, their search index, graph and episodes, and their contributions to GLOBAL are erased by a job on their queue group; turns and jobs asked for before now are dropped when they arrive. Answers the receipt (pending; GET …/forget shows it done, with counts per store). A retry while pending answers the same receipt",
    response: ForgetReceiptResponse,
  },
  {
    method: 'GET', path: `${u}/forget`, operationId: 'userForgetReceipt', access: 'read', params: OneUserParam,
    summary: "The user's newest forget receipt: pending or done, when, by whom, and what was erased per store (counts only); 404 if never forgotten",
    response: ForgetReceiptResponse,
  },
  {
    method: 'GET', path: `${u}/export`, operationId: 'userExport', access: 'read', params: OneUserParam,
    summary:
      "Everything the user has, as one archive: `records` (every item of their partition as stored — turns, summaries, Knowledge and staged records, graph, episodes, diary, tier entries, logs) and `documents` (every object under their folder: markdown and JSON as text, search segments in base64). 413 over 5 MB (Lambda's 6 MB response limit)",
    response: z.object({ archive: UserArchiveSchema }),
  },
  {
    method: 'POST', path: `${u}/import`, operationId: 'userImport', access: 'write', params: OneUserParam, body: z.object({ archive: UserArchiveSchema }).strict(),
    summary: "Restore an archive of this user (from `GET …/export`, in this stage or another) into a user with no memory yet: a new user, or one forgotten. 409 once the user has a signal state; a failed import may be asked again",
    response: z.object({ imported: z.object({ records: z.number().int(), documents: z.number().int() }) }),
  },
  {
    method: 'GET', path: '/v1/costs', operationId: 'stageCosts', access: 'admin', query: z.object({ days: Limit(31, 7) }),
    summary: "The stage's model cost by UTC day, every user's (administrators only): as a user's, with how many users had a cost; the stage's cost alarm fires on the last 24 hours' sum",
    response: z.object({ days: z.array(Looseobject) }),
  },
  {
    method: 'POST', path: `${u}/search-index/rebuild`, operationId: 'reindex', access: 'admin', params: OneUserParam,
    summary: 'Rebuild the search index (admins)',
    response: z.object({ rebuilt: Looseobject }),
  },
  {
    method: 'GET', path: `${u}/batches`, operationId: 'batchList', access: 'read', params: UserParam, query: z.object({ limit: Limit(500, 50) }),
    summary: 'Batch logs of the reflector: the newest `limit`, newest first by the turns they cover (the last turn, then the id), not by when they ran', response: z.object({ batches: z.array(Looseobject) }),
  },
  {
    method: 'DELETE', path: `${u}/memory/items/{id}`, operationId: 'itemDelete', access: 'write', params: UserParam.extend({ id: ItemId }), query: DeleteQuerySchema,
    summary: 'Delete any item memory.search returns (turn, episode, staged, knowledge incl. findings, summary, diary, mem:); a deleted fact is not staged again (tombstone); the audit trail records who, when and why',
    response: z.object({ deleted: z.object({ id: z.string(), kind: z.string() }), at: z.string() }),
  },
  {
    method: 'POST', path: `${u}/memory/forget`, operationId: 'memoryForget', access: 'write', params: UserParam, body: ForgetRequestSchema,
    summary: 'Forget by provenance: these turns (or a session\'s, at most 500) and every item derived from them, graph edges they alone support; the receipt names the ids removed by kind; a dry run answers the same receipt and changes nothing',
    response: z.object({ receipt: ForgetReceiptSchema }),
  },
] as const satisfies readonly Route[];

export type OperationId = (typeof routes)[number]['operationId'];
