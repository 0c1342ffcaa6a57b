/** One user's memory as a whole (forget, export, import, forget by provenance, deletes, batches) and the stage's admin routes. */
import * as z from 'zod';
import { UserIdSchema } from '../../../events/common.js';
import { ItemId, Limit, Looseobject, OneUserParam, type Route, USER_PATH as u, UserParam } from './shared.js';

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
  .refine((r) => (r.turns === undefined) !== (r.sessionId === undefined), {
    message: 'give exactly one of turns and sessionId',
    path: ['turns'],
  });
const ErasedIds = z.array(z.string());
/** What a forget by provenance removes (or, in a dry run, would remove), ids by kind; never content. */
export const ForgetReceiptSchema = z.object({
  dryRun: z.boolean(),
  turns: z.array(z.number().int()),
  removed: z.object({
    turn: ErasedIds,
    episode: ErasedIds,
    staged: ErasedIds,
    knowledge: ErasedIds,
    summary: ErasedIds,
    diary: ErasedIds,
    memory: ErasedIds,
    graphEdge: ErasedIds,
  }),
  total: z.number().int(),
});

const ForgetCountsSchema = z.object({
  items: z.number().int(),
  objects: z.number().int(),
  globalItems: z.number().int(),
  globalIndexObjects: z.number().int(),
});
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
  receipt: z.object({
    userId: z.string(),
    requestedAt: z.string(),
    requestedBy: z.string(),
    status: z.enum(['pending', 'done']),
    completedAt: z.string().optional(),
    counts: ForgetCountsSchema,
  }),
});

export const userRoutes = [
  {
    method: 'DELETE',
    path: u,
    operationId: 'userForget',
    access: 'write',
    params: OneUserParam,
    summary:
      'Forget the user: every item, object and object version of theirs, their search index, graph and episodes, and their contributions to GLOBAL are erased by a job on their queue group; turns and jobs asked for before now are dropped when they arrive. Answers the receipt (pending; GET …/forget shows it done, with counts per store). A retry while pending answers the same receipt',
    response: ForgetReceiptResponse,
  },
  {
    method: 'GET',
    path: `${u}/forget`,
    operationId: 'userForgetReceipt',
    access: 'read',
    params: OneUserParam,
    summary:
      "The user's newest forget receipt: pending or done, when, by whom, and what was erased per store (counts only); 404 if never forgotten",
    response: ForgetReceiptResponse,
  },
  {
    method: 'GET',
    path: `${u}/export`,
    operationId: 'userExport',
    access: 'read',
    params: OneUserParam,
    summary:
      "Everything the user has, as one archive: `records` (every item of their partition as stored — turns, summaries, Knowledge and staged records, graph, episodes, diary, tier entries, logs) and `documents` (every object under their folder: markdown and JSON as text, search segments in base64). 413 over 5 MB (Lambda's 6 MB response limit)",
    response: z.object({ archive: UserArchiveSchema }),
  },
  {
    method: 'POST',
    path: `${u}/import`,
    operationId: 'userImport',
    access: 'write',
    params: OneUserParam,
    body: z.object({ archive: UserArchiveSchema }).strict(),
    summary:
      'Restore an archive of this user (from `GET …/export`, in this stage or another) into a user with no memory yet: a new user, or one forgotten. 409 once the user has a signal state; a failed import may be asked again',
    response: z.object({ imported: z.object({ records: z.number().int(), documents: z.number().int() }) }),
  },
  {
    method: 'GET',
    path: '/v1/costs',
    operationId: 'stageCosts',
    access: 'admin',
    query: z.object({ days: Limit(31, 7) }),
    summary:
      "The stage's model cost by UTC day, every user's (administrators only): as a user's, with how many users had a cost; the stage's cost alarm fires on the last 24 hours' sum",
    response: z.object({ days: z.array(Looseobject) }),
  },
  {
    method: 'POST',
    path: `${u}/search-index/rebuild`,
    operationId: 'reindex',
    access: 'admin',
    params: OneUserParam,
    summary: 'Rebuild the search index (admins)',
    response: z.object({ rebuilt: Looseobject }),
  },
  {
    method: 'GET',
    path: `${u}/batches`,
    operationId: 'batchList',
    access: 'read',
    params: UserParam,
    query: z.object({ limit: Limit(500, 50) }),
    summary:
      'Batch logs of the reflector: the newest `limit`, newest first by the turns they cover (the last turn, then the id), not by when they ran',
    response: z.object({ batches: z.array(Looseobject) }),
  },
  {
    method: 'DELETE',
    path: `${u}/memory/items/{id}`,
    operationId: 'itemDelete',
    access: 'write',
    params: UserParam.extend({ id: ItemId }),
    query: DeleteQuerySchema,
    summary:
      'Delete any item memory.search returns (turn, episode, staged, knowledge incl. findings, summary, diary, mem:); a deleted fact is not staged again (tombstone); the audit trail records who, when and why',
    response: z.object({ deleted: z.object({ id: z.string(), kind: z.string() }), at: z.string() }),
  },
  {
    method: 'POST',
    path: `${u}/memory/forget`,
    operationId: 'memoryForget',
    access: 'write',
    params: UserParam,
    body: ForgetRequestSchema,
    summary:
      "Forget by provenance: these turns (or a session's, at most 500) and every item derived from them, graph edges they alone support; the receipt names the ids removed by kind; a dry run answers the same receipt and changes nothing",
    response: z.object({ receipt: ForgetReceiptSchema }),
  },
] as const satisfies readonly Route[];
