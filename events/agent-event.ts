import * as z from 'zod';
import { AttributesSchema, TimestampSchema, TurnIdSchema, UserIdSchema } from './common.js';
import { EpisodeSchema } from './episode.js';

/** The event-driven reflection triggers of req R-EVT. */
export const AgentEventTriggerSchema = z.enum(['error', 'user_request', 'correction', 'session_boundary', 'milestone']);
export type AgentEventTrigger = z.infer<typeof AgentEventTriggerSchema>;

/**
 * `agent.event` v1 — something happened that deserves a reflection now rather than at the
 * 10th turn. Published on the TurnQueue (group = userId); it fires an event batch job
 * over the user's turns not yet reflected on.
 */
export const AgentEventSchema = z.object({
  type: z.literal('agent.event'),
  version: z.literal(1),
  userId: UserIdSchema,
  sessionId: z.string().min(1).max(256).optional(),
  timestamp: TimestampSchema,
  trigger: AgentEventTriggerSchema,
  /** The turn the event belongs to, if any. */
  turnId: TurnIdSchema.optional(),
  /** Free text: the error message, what the user asked for, the milestone reached. */
  detail: z.string().max(4000).optional(),
  attributes: AttributesSchema.optional(),
  /**
   * The plan execution that just ended (optional, additive; req R-EPI's "plan execution
   * completes → create Episode record"): stored as the user's episode, searchable, counted
   * into capability confidence, and given a document by the next reflection of this user.
   */
  episode: EpisodeSchema.optional(),
});
export type AgentEvent = z.infer<typeof AgentEventSchema>;
