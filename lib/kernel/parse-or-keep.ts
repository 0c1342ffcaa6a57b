/**
 * The edge of every queue consumer: parse a record's JSON body with its schema, or keep it
 * in the rejected-events log with every failing field (it would never succeed on retry).
 */
import type { z } from 'zod';
import type { Clock } from './runtime.port.js';
import type { RejectedEventLog } from '../turns/turn.port.js';

export type FieldError = { path: string; message: string };

/** zod issues as `{path, message}` with dotted paths; `(root)` for the whole value. */
export function fieldErrors(
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>,
  prefix = '',
): FieldError[] {
  return issues.map((i) => ({
    path: `${prefix}${i.path.length > 0 ? i.path.map(String).join('.') : '(root)'}`,
    message: i.message,
  }));
}

/** Parse JSON text with a schema: the value, or the errors naming each failing field. */
export function parseJson<S extends z.ZodType>(
  body: string,
  schema: S,
): { ok: true; value: z.infer<S> } | { ok: false; errors: FieldError[] } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, errors: [{ path: '(body)', message: `not JSON: ${(error as Error).message}` }] };
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, errors: fieldErrors(parsed.error.issues) };
}

/** Parse, or keep the record as rejected and return null. Throws only if keeping fails (then SQS retries). */
export async function parseOrKeep<S extends z.ZodType>(
  record: { messageId: string; body: string },
  schema: S,
  deps: { rejected: RejectedEventLog; clock: Clock; source: string },
): Promise<z.infer<S> | null> {
  const parsed = parseJson(record.body, schema);
  if (parsed.ok) return parsed.value;
  await deps.rejected.keep({
    source: deps.source,
    messageId: record.messageId,
    receivedAt: deps.clock.now().toISOString(),
    errors: parsed.errors,
    body: record.body,
  });
  return null;
}
