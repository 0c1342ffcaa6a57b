/** The relation graph and Knowledge facts, capabilities and sources; the user's settings and model costs. */
import * as z from 'zod';
import { DomainSchema } from '../../../events/common.js';
import { SettingsChangeSchema } from '../../../lib/settings/user-settings.js';
import { Limit, Looseobject, type Route, USER_PATH as u, UserParam } from './shared.js';

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
export const KnowledgeRestoreRequestSchema = z.object({ path: z.string().min(1).max(600) }).strict();
/** A corrected fact by its path, and why its latest change is undone. */
export const KnowledgeRevertRequestSchema = z
  .object({ path: z.string().min(1).max(600), reason: z.string().max(1000).optional() })
  .strict();

/** Most domains one reliability request may ask for. */
export const MAX_DOMAINS_PER_REQUEST = 20;

/** `?domains=docs.example.com,www.example.org`: host names, comma-separated. */
export const SourcesQuerySchema = z.object({
  domains: z
    .string()
    .min(1)
    .max(MAX_DOMAINS_PER_REQUEST * 254)
    .refine((list) => list.split(',').length <= MAX_DOMAINS_PER_REQUEST, `at most ${MAX_DOMAINS_PER_REQUEST} domains`)
    .refine(
      (list) => list.split(',').every((d) => DomainSchema.safeParse(d.trim().toLowerCase()).success),
      'comma-separated host names such as docs.example.com (no scheme, port or path)',
    ),
});

export const knowledgeRoutes = [
  {
    method: 'GET',
    path: `${u}/graph/entities/{entity}/neighbours`,
    operationId: 'graphNeighbours',
    access: 'read',
    params: UserParam.extend({ entity: EntityParam }),
    query: z.object({ includePruned: z.enum(['true', 'false']).optional() }),
    summary:
      "An entity's neighbours in the relation graph (aliases resolved), best first; pruned edges with includePruned=true",
    response: Looseobject,
  },
  {
    method: 'POST',
    path: `${u}/graph/edges`,
    operationId: 'graphEdgeCreate',
    access: 'write',
    params: UserParam,
    body: GraphEdgeRequestSchema,
    summary: 'State an edge (from, relation, to): user-created edges are never decayed, pruned or merged away',
    response: z.object({ edge: Looseobject.optional() }),
  },
  {
    method: 'POST',
    path: `${u}/graph/edges/restore`,
    operationId: 'graphEdgeRestore',
    access: 'write',
    params: UserParam,
    body: GraphRestoreRequestSchema,
    summary: 'Restore a pruned edge within its recovery window',
    response: z.object({ edge: Looseobject }),
  },
  {
    method: 'POST',
    path: `${u}/knowledge/restore`,
    operationId: 'knowledgeRestore',
    access: 'write',
    params: UserParam,
    body: KnowledgeRestoreRequestSchema,
    summary:
      'Restore a Knowledge fact the hygiene sweep pruned (confidence decayed while unverified), within its recovery window',
    response: z.object({ fact: Looseobject }),
  },
  {
    method: 'POST',
    path: `${u}/knowledge/revert`,
    operationId: 'knowledgeRevert',
    access: 'write',
    params: UserParam,
    body: KnowledgeRevertRequestSchema,
    summary:
      'Undo the latest change of a Knowledge fact: a promoted correction, or a revert (itself undone the same way); the fact keeps every version in its history',
    response: z.object({ fact: Looseobject }),
  },
  {
    method: 'POST',
    path: `${u}/graph/entities/{entity}/split`,
    operationId: 'graphEntitySplit',
    access: 'write',
    params: UserParam.extend({ entity: EntityParam }),
    summary: 'Undo a merge: the entity stands on its own again (and is not merged automatically again)',
    response: z.object({ entity: Looseobject }),
  },
  {
    method: 'GET',
    path: `${u}/graph/log`,
    operationId: 'graphLog',
    access: 'read',
    params: UserParam,
    query: z.object({ limit: Limit(500, 50) }),
    summary: "The relation graph's hygiene log (merges, splits, decay, pruning, restores, removals), newest first",
    response: z.object({ entries: z.array(Looseobject) }),
  },
  {
    method: 'GET',
    path: `${u}/capabilities`,
    operationId: 'capabilityConfidence',
    access: 'read',
    params: UserParam,
    summary:
      "Capability confidence from the user's episodes (req R-EPI): uses, successes, confidence, recent success rate and trend per capability",
    response: z.object({ capabilities: z.array(Looseobject) }),
  },
  {
    method: 'GET',
    path: `${u}/sources`,
    operationId: 'sourceReliability',
    access: 'read',
    params: UserParam,
    query: SourcesQuerySchema,
    summary:
      "Reliability of web domains as sources (req R-SRC): counts from every user's reported outcomes, not only this user's",
    response: z.object({ sources: z.array(Looseobject) }),
  },
  {
    method: 'GET',
    path: `${u}/settings`,
    operationId: 'settingsRead',
    access: 'read',
    params: UserParam,
    summary:
      "The user's own summary settings (req R-SUM-8): enabled, prompt, maxTokens, idleMinutes; a field not set follows the stage's default",
    response: z.object({ settings: Looseobject }),
  },
  {
    method: 'POST',
    path: `${u}/settings`,
    operationId: 'settingsChange',
    access: 'write',
    params: UserParam,
    body: SettingsChangeSchema,
    summary:
      "Change the user's summary settings: each field named is set, or cleared with null (the stage default again); idleMinutes 1–1440, maxTokens 100–8000",
    response: z.object({ settings: Looseobject }),
  },
  {
    method: 'GET',
    path: `${u}/costs`,
    operationId: 'userCosts',
    access: 'read',
    params: UserParam,
    query: z.object({ days: Limit(90, 7) }),
    summary:
      "The user's model cost by UTC day (today's included, oldest first): jobs, tokens, USD at the price table's rates, by kind (batch, summary, nightly, weekly)",
    response: z.object({ days: z.array(Looseobject) }),
  },
] as const satisfies readonly Route[];
