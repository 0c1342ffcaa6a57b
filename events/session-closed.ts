import * as z from 'zod';
import { SessionIdSchema, TimestampSchema, UserIdSchema } from './common.js';

/**
 * `session.closed` v1 — an agent ends a session. Published on the TurnQueue (group =
 * userId, so it stays in order with the user's turns); it fires a session-close
 * job (req R-SIG-6's "designed but not wired" hook).
 */
export const SessionClosedSchema = z.object({
  type: z.literal('session.closed'),
  version: z.literal(1),
  userId: UserIdSchema,
  sessionId: SessionIdSchema,
  timestamp: TimestampSchema,
  /** Why the session ended, e.g. `user_left`, `timeout`. */
  reason: z.string().max(256).optional(),
});
export type SessionClosed = z.infer<typeof SessionClosedSchema>;
