import * as z from 'zod';
import { TimestampSchema, TurnIdSchema, UserIdSchema } from './common.js';

export const JobKindSchema = z.enum([
  'batch',
  'idle-summary',
  'session-close',
  'nightly',
  'weekly',
  'manual',
  'event',
  /** Erase the user (lib/forget/forget-user.ts); no turns, no model call. */
  'forget',
]);
export type JobKind = z.infer<typeof JobKindSchema>;

/**
 * `reflector.job` v1 — internal: a job of any kind (a batch reflection, a summary, a nightly or
 * weekly sleep-time run, a forget) for the reflector, put on the job queue (`QUEUES.job` in
 * infra: FIFO, group = userId) by the signal, idle, sweep and api functions.
 */
export const JobSchema = z.object({
  type: z.literal('reflector.job'),
  version: z.literal(1),
  /** Deterministic id derived from the trigger; also the FIFO deduplication id. */
  jobId: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._:@-]+$/),
  userId: UserIdSchema,
  kind: JobKindSchema,
  /** What fired, e.g. `turn_count`, `urgency`. */
  trigger: z.string().min(1).max(64),
  /** Urgency score of the signal accumulator when the job was made. */
  urgency: z.number().min(0).default(0),
  /** The turns to reflect on, ascending. */
  turnIds: z.array(TurnIdSchema).max(1000),
  /** agent.event episodes (req R-EPI) whose documents this batch writes (optional, additive). */
  episodeIds: z
    .array(z.string().regex(/^ev-[0-9a-f]{20}$/))
    .max(50)
    .optional(),
  /** The `detail` of the agent.event that fired an event batch (optional, additive): it goes into the prompt. */
  eventDetail: z.string().max(4000).optional(),
  /** A manual summary's own instruction (req R-SUM-9: a custom prompt on demand), instead of the user's or the stage's (optional, additive). */
  prompt: z.string().min(1).max(4000).optional(),
  /** A forget's continuation number (optional, additive): the job goes on with the erasure its predecessor stopped (lib/forget/forget-user.ts). */
  continuation: z.number().int().min(1).max(1_000_000).optional(),
  /**
   * The job asks the model itself (optional, additive): a routine batch reflection its batch
   * inference job did not answer, or whose requests were too few for one (lib/batch-inference/routine-batch.ts).
   */
  onDemand: z.literal(true).optional(),
  requestedAt: TimestampSchema,
});
export type Job = z.infer<typeof JobSchema>;
