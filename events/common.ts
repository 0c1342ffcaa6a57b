import { z } from 'zod';

/** A user id as publishers send it: 1–128 chars of `[A-Za-z0-9._:@-]`. It becomes a key prefix in S3 and DynamoDB. */
export const UserIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:@-]+$/, 'userId may only hold the characters A-Z a-z 0-9 . _ : @ -')
  .refine((id) => id !== '.' && id !== '..', 'userId may not be "." or ".."')
  // The memory API names the scope shared with every user GLOBAL (`/v1/users/GLOBAL/…`).
  .refine((id) => id !== 'GLOBAL', 'userId GLOBAL is reserved for the shared scope');

/** A per-user turn number: an integer ≥ 1 that increases with every turn of the user. */
export const TurnIdSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** ISO-8601 date-time with a zone (`Z` or an offset). */
export const TimestampSchema = z.iso.datetime({ offset: true });

/** Opaque string → string map, stored and returned with every memory item derived from the turn. */
export const AttributesSchema = z
  .record(z.string().min(1).max(128), z.string().max(4096))
  .refine((map) => Object.keys(map).length <= 50, 'attributes may hold at most 50 entries');
