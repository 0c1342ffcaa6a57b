import { z } from 'zod';
import { TimestampSchema, TurnIdSchema, UserIdSchema } from './common.js';

/**
 * `idle.check` v1 (internal) — put on the IdleQueue with a delivery delay of the idle
 * threshold (5 minutes by default) each time a user's turns are counted. When it fires,
 * the idle function asks: is `lastTurnId` still the user's last turn (no message since),
 * and have at least 5 messages arrived since the last summary? Debounce without polling.
 */
export const IdleCheckSchema = z.object({
  type: z.literal('idle.check'),
  version: z.literal(1),
  userId: UserIdSchema,
  lastTurnId: TurnIdSchema,
  enqueuedAt: TimestampSchema,
});
export type IdleCheck = z.infer<typeof IdleCheckSchema>;
