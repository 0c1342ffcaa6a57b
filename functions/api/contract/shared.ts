/** What every route group of the contract (contract.ts) shares: path parameters, limits, the route's shape. */
import * as z from 'zod';
import { UserIdSchema } from '../../../events/common.js';
import { MemoryItemSchema } from '../../../lib/items/memory-item.js';

/** The path every per-user route starts with. */
export const USER_PATH = '/v1/users/{userId}';

export const UserParam = z.object({ userId: UserIdSchema.or(z.literal('GLOBAL')) });
export const ItemId = z.string().min(1).max(600);
export const Limit = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt);
export const ItemResponse = z.object({ item: MemoryItemSchema });
export const Looseobject = z.record(z.string(), z.unknown());

/** One user's own id, not GLOBAL (which every user shares): forget, export and import act on one user. */
export const OneUserParam = z.object({
  userId: UserIdSchema.refine(
    (id) => id !== 'GLOBAL',
    'GLOBAL is shared by every user: it is not forgotten, exported or imported as one (delete its items one by one)',
  ),
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
