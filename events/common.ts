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

/** Length of a string in UTF-8 bytes, as DynamoDB and S3 count it (lone surrogates as the 3 bytes of U+FFFD). */
export const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

/**
 * Most bytes (UTF-8, keys and values) a turn's attributes may hold, and the most an item
 * derived from several turns carries of theirs. 50 entries of 4096 characters can reach
 * 600 KB in three-byte characters; DynamoDB refuses items over 400 KB, and the turn index
 * item holds the attributes.
 */
export const MAX_ATTRIBUTE_BYTES = 256 * 1024;

const attributeBytes = (map: Record<string, string>) => Object.entries(map).reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);

/** Opaque string → string map, stored and returned with every memory item derived from the turn. */
export const AttributesSchema = z
  .record(z.string().min(1).max(128), z.string().max(4096))
  .refine((map) => Object.keys(map).length <= 50, 'attributes may hold at most 50 entries')
  .refine((map) => attributeBytes(map) <= MAX_ATTRIBUTE_BYTES, `attributes may hold at most ${MAX_ATTRIBUTE_BYTES} bytes (UTF-8, keys and values) in all`);
