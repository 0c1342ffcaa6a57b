import * as z from 'zod';
import { TimestampSchema, TurnIdSchema, UserIdSchema } from './common.js';

/**
 * `idle.check` v1 (internal) — put on the IdleQueue with a delivery delay of the idle
 * threshold (5 minutes by default) when a user's turn is counted and no check is pending
 * (the signal state's `idleCheckDueAt`). When it fires, the idle function asks: has the user
 * been quiet for the threshold, and have at least 5 messages arrived since the last summary?
 * While the user keeps talking, the check puts itself back, delayed to a threshold after their
 * last message: one pending check per user.
 */
export const IdleCheckSchema = z.object({
  type: z.literal('idle.check'),
  version: z.literal(1),
  userId: UserIdSchema,
  lastTurnId: TurnIdSchema,
  enqueuedAt: TimestampSchema,
  /**
   * The state's `idleCheckDueAt` when the signal function sent the check: its identity (a
   * check put back keeps it; only the check the state names acts). Absent on checks of the
   * older format, which keep the old rule (their `lastTurnId` must be the last turn).
   */
  dueAt: TimestampSchema.optional(),
});
export type IdleCheck = z.infer<typeof IdleCheckSchema>;
