import * as z from 'zod';

/** A user id as publishers send it: 1–128 chars of `[A-Za-z0-9._:@-]`. It becomes a key prefix in S3 and DynamoDB. */
export const UserIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:@-]+$/, 'userId may only hold the characters A-Z a-z 0-9 . _ : @ -')
  .refine((id) => id !== '.' && id !== '..', 'userId may not be "." or ".."')
  // The memory API names the scope shared with every user GLOBAL (`/v1/users/GLOBAL/…`).
  .refine((id) => id !== 'GLOBAL', 'userId GLOBAL is reserved for the shared scope');

/** A session id as publishers send it (a turn's, a closed session's, the one a search is made in): 1–256 chars. */
export const SessionIdSchema = z.string().min(1).max(256);

/** A per-user turn number: an integer ≥ 1 that increases with every turn of the user. */
export const TurnIdSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * ISO-8601 date-time with a zone (`Z` or an offset), whose instant falls in the years
 * 0000–9999 in UTC: `9999-12-31T23:59:59-12:00` is year 10000 in UTC, which toISOString
 * writes as `+010000-…` — and job ids and times made from it would fail this very schema.
 */
export const TimestampSchema = z.iso
  .datetime({ offset: true })
  .refine(
    (t) => Date.parse(t) >= FIRST_INSTANT && Date.parse(t) <= LAST_INSTANT,
    'the time must fall within the years 0000–9999 in UTC',
  );

/** Length of a string in UTF-8 bytes, as DynamoDB and S3 count it (lone surrogates as the 3 bytes of U+FFFD). */
export const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

/**
 * Most bytes (UTF-8, keys and values) a turn's attributes may hold, and the most an item
 * derived from several turns carries of theirs. 50 entries of 4096 characters can reach
 * 600 KB in three-byte characters; DynamoDB refuses items over 400 KB, and the turn index
 * item holds the attributes.
 */
export const MAX_ATTRIBUTE_BYTES = 256 * 1024;

const attributeBytes = (map: Record<string, string>) =>
  Object.entries(map).reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);

/** Opaque string → string map, stored and returned with every memory item derived from the turn. */
export const AttributesSchema = z
  .record(z.string().min(1).max(128), z.string().max(4096))
  .refine((map) => Object.keys(map).length <= 50, 'attributes may hold at most 50 entries')
  .refine(
    (map) => attributeBytes(map) <= MAX_ATTRIBUTE_BYTES,
    `attributes may hold at most ${MAX_ATTRIBUTE_BYTES} bytes (UTF-8, keys and values) in all`,
  );

/**
 * A web domain as a source: a lower-case host name of dot-separated labels (letters, digits,
 * hyphens; 1–63 characters each, 253 in all), no scheme, port, path or trailing dot —
 * `docs.aws.amazon.com`, not `https://docs.aws.amazon.com/`. A leading `www.` is kept as
 * sent and dropped when outcomes are aggregated.
 */
export const DomainSchema = z
  .string()
  .min(3)
  .max(253)
  .regex(
    /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'domain must be a lower-case host name such as docs.example.com (no scheme, port or path)',
  );
