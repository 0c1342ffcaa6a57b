/** Page cursors: where a page of a listing ends, opaque to the caller (the wire's `nextToken`). */
import { MemoryApiError } from './memory-api-error.js';

/** A page's end as an opaque cursor: the values that locate it, as JSON in base64url. */
export const encodeCursor = (at: readonly unknown[]): string => Buffer.from(JSON.stringify(at)).toString('base64url');

/** The values an encoded cursor (encodeCursor) carried, in the shape `read` accepts (null: not this route's); otherwise an invalid-request error naming the field. */
export function pageCursor<T>(token: string, read: (parts: unknown) => T | null): T {
  let parts: unknown = null;
  try {
    parts = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    // not JSON: refused below
  }
  const cursor = Array.isArray(parts) ? read(parts) : null;
  if (cursor === null) throw new MemoryApiError('invalid', 'nextToken: not a token this API returned');
  return cursor;
}
