/** A TurnQueue record read: parsed and validated, its claim check resolved, its free text redacted. */
import { type TurnQueueMessage, TurnQueueMessageSchema } from '../../events/index.js';
import { TurnClaimCheckSchema } from '../../events/turn-claim-check.js';
import { addCounts, type RedactionCounts, type RedactionPolicy, redact, redactFields } from './redaction.js';
import type { ClaimCheckStore } from './turn.port.js';
import { type FieldError, fieldErrors } from '../kernel/parse-or-keep.js';

export type ParsedRecord =
  | { ok: true; message: TurnQueueMessage }
  /** `userId` when it could be read (a claim check names its user before its payload is fetched). */
  | { ok: false; retryable: boolean; errors: FieldError[]; userId?: string };

/** A parsed message with its free text redacted (counted into `counts`). */
export function redactParsed(p: ParsedRecord, policy: RedactionPolicy, counts: RedactionCounts): ParsedRecord {
  if (!p.ok) return p;
  const r = redactFields(p.message, policy);
  addCounts(counts, r.counts);
  return { ...p, message: r.value };
}

export function redactText(text: string, policy: RedactionPolicy, counts: RedactionCounts): string {
  const r = redact(text, policy);
  addCounts(counts, r.counts);
  return r.text;
}

/**
 * JSON + schema validation with errors that name the failing field. A claim check is
 * resolved first; its payload must be the same user's same turn. A claim that cannot be
 * fetched for a transient reason is retryable; a missing one is rejected.
 */
export async function parseRecord(body: string, claims: ClaimCheckStore): Promise<ParsedRecord> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return {
      ok: false,
      retryable: false,
      errors: [{ path: '(body)', message: `not JSON: ${(error as Error).message}` }],
    };
  }
  if (typeof value === 'object' && value !== null && 'payloadRef' in value) {
    const claim = TurnClaimCheckSchema.safeParse(value);
    if (!claim.success) return { ok: false, retryable: false, errors: fieldErrors(claim.error.issues) };
    let text: string;
    try {
      text = await claims.fetch(claim.data.payloadRef.key);
    } catch (error) {
      // Gone for good: rejected and kept. Anything else — throttling, a timeout, or AccessDenied,
      // which is what S3 answers for a missing key to a caller that may not list the bucket (the
      // signal function may not) — is retried, then parked in the DLQ with this reason.
      const name = (error as Error).name;
      const missing = name === 'NoSuchKey';
      const reason =
        name === 'AccessDenied'
          ? 'not readable by this function (AccessDenied: missing, or not allowed)'
          : `unreadable: ${name}`;
      return {
        ok: false,
        retryable: !missing,
        userId: claim.data.userId,
        errors: [{ path: 'payloadRef.key', message: `claim check ${reason}` }],
      };
    }
    const inner = await parseRecord(text, claims);
    if (!inner.ok)
      return {
        ok: false,
        retryable: inner.retryable,
        errors: inner.errors.map((e) => ({ ...e, path: `payloadRef:${e.path}` })),
      };
    const m = inner.message;
    if (m.type !== 'turn.saved' || m.userId !== claim.data.userId || m.turnId !== claim.data.turnId) {
      // Name the claim's fields the payload contradicts, not only the reference.
      const contradicted: FieldError[] = [];
      if (m.type !== 'turn.saved')
        contradicted.push({ path: 'type', message: `the claimed payload is a ${m.type}, not a turn.saved` });
      if (m.userId !== claim.data.userId)
        contradicted.push({ path: 'userId', message: "the claimed payload is another user's" });
      if (m.type === 'turn.saved' && m.turnId !== claim.data.turnId)
        contradicted.push({
          path: 'turnId',
          message: `the claimed payload is turn ${m.turnId}, not ${claim.data.turnId}`,
        });
      return {
        ok: false,
        retryable: false,
        errors: [{ path: 'payloadRef.key', message: "the claimed payload is not this user's turn" }, ...contradicted],
      };
    }
    return inner;
  }
  const parsed = TurnQueueMessageSchema.safeParse(value);
  if (parsed.success) return { ok: true, message: parsed.data };
  return { ok: false, retryable: false, errors: fieldErrors(parsed.error.issues) };
}
