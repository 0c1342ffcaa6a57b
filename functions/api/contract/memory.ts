/** The memory routes: search, save, retrieve, tiers, item changes, outcomes, the audit trail; and the public document and console. */
import * as z from 'zod';
import { SessionIdSchema } from '../../../events/common.js';
import { ValidationOutcomeSchema } from '../../../events/turn-saved.js';
import { MemoryItemSchema, SignificanceSchema, TierSchema } from '../../../lib/items/memory-item.js';
import { SearchFiltersSchema } from '../../../lib/search/search-filters.js';
import { SearchExplainSchema } from '../../../lib/search/search-explain.js';
import { DemotionReasonSchema } from '../../../lib/tiers/memory-tiers.js';
import { ItemId, ItemResponse, Limit, Looseobject, type Route, USER_PATH as u, UserParam } from './shared.js';

export const SearchRequestSchema = z
  .object({
    query: z.string().min(1).max(4000),
    limit: z.number().int().min(1).max(100).default(10),
    filters: SearchFiltersSchema.optional(),
    /** The confidence floor: results whose similarity to the query is below it are left out. */
    minSimilarity: z.number().min(0).max(1).optional(),
    /** Each result says why it ranked (its `explain`): the rankings that placed it and where, the terms matched, quality, recency. @default false */
    explain: z.boolean().optional(),
    /** The session the search is made in: only its own ephemeral entries are found, never another's (req R-TIER-1). */
    sessionId: SessionIdSchema.optional(),
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
  .refine((r) => (r.id === undefined) !== (r.path === undefined), {
    message: 'give exactly one of id and path',
    path: ['id'],
  });

export const TierEntrySchema = z
  .object({
    text: z.string().min(1).max(20_000),
    ...Metadata,
    sessionId: z.string().min(1).max(256).optional(),
    sourceTurns: z.array(z.number().int().min(1)).max(100).optional(),
    ttlSeconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .optional(),
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
export const DemoteRequestSchema = z
  .object({ reason: DemotionReasonSchema, note: z.string().max(1000).optional() })
  .strict();
/** Req R-TIER-8: what contradicts the entry (the same `evidence` counts once), and a note for the audit trail. */
export const ContradictRequestSchema = z
  .object({ evidence: z.string().min(1).max(256).optional(), note: z.string().max(1000).optional() })
  .strict();
export const OutcomeRequestSchema = z
  .object({
    ids: z.array(ItemId).min(1).max(100),
    validation: ValidationOutcomeSchema,
    turnId: z.number().int().min(1).optional(),
  })
  .strict();
/** A person's correction of an item's text (itemEdit) and its undoing (itemRestore). */
export const ItemEditRequestSchema = z
  .object({ text: z.string().trim().min(1).max(32_000), reason: z.string().trim().min(1).max(1000) })
  .strict();
export const ItemRestoreRequestSchema = z
  .object({ at: z.iso.datetime({ offset: true }), reason: z.string().trim().min(1).max(1000) })
  .strict();

export const memoryRoutes = [
  {
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document',
    access: 'public',
    response: Looseobject,
  },
  {
    method: 'GET',
    path: '/console',
    operationId: 'console',
    summary: 'The review console (a web page)',
    access: 'public',
    response: z.string(),
    produces: 'text/html',
  },
  {
    method: 'POST',
    path: `${u}/memory/search`,
    operationId: 'memorySearch',
    access: 'read',
    params: UserParam,
    body: SearchRequestSchema,
    summary:
      'memory.search: every kind of memory item, ranked by relevance blended with quality and recency; best first',
    response: z.object({ results: z.array(SearchResultSchema) }),
  },
  {
    method: 'POST',
    path: `${u}/memory/save`,
    operationId: 'memorySave',
    access: 'write',
    params: UserParam,
    body: SaveRequestSchema,
    summary: "memory.save: commit memory candidates when the turn's validation is APPROVE; discard them otherwise",
    response: z.object({
      committed: z.array(MemoryItemSchema),
      discarded: z.number().int(),
      reason: z.string().optional(),
    }),
  },
  {
    method: 'POST',
    path: `${u}/memory/retrieve`,
    operationId: 'memoryRetrieve',
    access: 'read',
    params: UserParam,
    body: RetrieveRequestSchema,
    summary: 'memory.retrieve: one item by id or path',
    response: ItemResponse,
  },
  {
    method: 'POST',
    path: `${u}/memory/tiers/{tier}`,
    operationId: 'tierCreate',
    access: 'write',
    params: UserParam.extend({ tier: TierSchema }),
    body: TierEntrySchema,
    summary:
      'Create an entry in a tier (ephemeral: until its session closes, which promotes it to short-term when it matters; ' +
      'short_term: 7 days by default); the same short-term entry from another session corroborates it, and may promote it',
    response: ItemResponse.extend({ created: z.boolean() }),
  },
  {
    method: 'GET',
    path: `${u}/memory/tiers/{tier}`,
    operationId: 'tierQuery',
    access: 'read',
    params: UserParam.extend({ tier: TierSchema }),
    query: TierQuerySchema,
    summary: 'Query a tier by type, kind, session, time window and confidence; newest first',
    response: z.object({ items: z.array(MemoryItemSchema), nextToken: z.string().optional() }),
  },
  {
    method: 'DELETE',
    path: `${u}/memory/tiers/{tier}/{id}`,
    operationId: 'tierDelete',
    access: 'write',
    params: UserParam.extend({ tier: TierSchema, id: ItemId }),
    summary: 'Delete an entry (soft: kept for the audit trail, never returned again)',
    response: ItemResponse,
  },
  {
    method: 'POST',
    path: `${u}/memory/items/{id}/promote`,
    operationId: 'itemPromote',
    access: 'write',
    params: UserParam.extend({ id: ItemId }),
    body: PromoteRequestSchema,
    summary:
      'Promote one tier up (staged items: to Knowledge); `to: global` shares a long-term item with every user (administrators only)',
    response: ItemResponse,
  },
  {
    method: 'POST',
    path: `${u}/memory/items/{id}/demote`,
    operationId: 'itemDemote',
    access: 'write',
    params: UserParam.extend({ id: ItemId }),
    body: DemoteRequestSchema,
    summary: 'Demote one tier down, with a reason (contradiction, decay, superseded, other)',
    response: ItemResponse,
  },
  {
    method: 'POST',
    path: `${u}/memory/items/{id}/contradict`,
    operationId: 'itemContradict',
    access: 'write',
    params: UserParam.extend({ id: ItemId }),
    body: ContradictRequestSchema,
    response: ItemResponse,
    summary:
      "Contradict an entry (mem:…) or a Knowledge fact (knowledge:…): confidence −0.3 (the stage's contradiction cost); " +
      "below its tier's floor (short-term 0.3, long-term 0.5) one tier down with reason `contradiction` (a fact is then " +
      'served short-term until a correction, revert or edit); audited. The same `evidence` counts once',
  },
  {
    method: 'POST',
    path: `${u}/memory/items/{id}/contradict/undo`,
    operationId: 'itemContradictUndo',
    access: 'write',
    params: UserParam.extend({ id: ItemId }),
    response: ItemResponse,
    summary:
      "Undo an entry's or a Knowledge fact's last contradiction: its tier and confidence as before it, audited " +
      '(`undo_contradict`); 409 when it has none (for a fact: when its last change is not one)',
  },
  {
    method: 'POST',
    path: `${u}/memory/items/{id}`,
    operationId: 'itemEdit',
    access: 'write',
    params: UserParam.extend({ id: ItemId }),
    body: ItemEditRequestSchema,
    summary:
      "Correct an item's text: a Knowledge fact or nightly finding (`knowledge:<path>`) or a summary (`summary:<id>`); any other kind is a 400 naming `id`. The old text stays in the item's history and in the audit entry (`previous`); search finds the new text only. 409 when the item's text changed meanwhile",
    response: ItemResponse,
  },
  {
    method: 'POST',
    path: `${u}/memory/items/{id}/restore`,
    operationId: 'itemRestore',
    access: 'write',
    params: UserParam.extend({ id: ItemId }),
    body: ItemRestoreRequestSchema,
    summary:
      "Bring back the text an edit (or restore) replaced: `at` is that change's audit entry time. A change in its own right, audited and itself restorable; 404 when no edit of the item has that `at`",
    response: ItemResponse,
  },
  {
    method: 'POST',
    path: `${u}/memory/outcomes`,
    operationId: 'memoryOutcomes',
    access: 'write',
    params: UserParam,
    body: OutcomeRequestSchema,
    summary:
      "Report the validation outcome of a turn that used these items, of any kind (mem:, knowledge:, turn:, summary:, staged:, episode:, diary:): APPROVE raises trust, RETRY and FAIL lower it, REVISE does nothing; search ranks by it; a mem: item's trust moves its scope; skipped: ids of no live item",
    response: z.object({
      changes: z.array(Looseobject),
      skipped: z.array(z.object({ id: z.string(), reason: z.string() })),
    }),
  },
  {
    method: 'GET',
    path: `${u}/memory/audit`,
    operationId: 'auditList',
    access: 'read',
    params: UserParam,
    query: z.object({ itemId: ItemId.optional(), limit: Limit(1000, 100) }),
    summary:
      'The audit trail: promotions, demotions, scope changes, deletions, reviews (who, what, when, why); newest first',
    response: z.object({ entries: z.array(Looseobject) }),
  },
] as const satisfies readonly Route[];
