/** What the idle function reads from its environment: the CDK stack sets exactly this. */
import * as z from 'zod';

export const IdleEnvSchema = z.object({
  /** The stage's name (infra/config/stages.ts): the `stage` dimension of RejectedRecords (lib/kernel/metrics.adapter.ts). */
  STAGE: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,20}$/, 'a stage name: 1–21 chars of a-z, 0-9 and -, starting with a letter'),
  TABLE_NAME: z.string().min(1),
  BUCKET_NAME: z.string().min(1),
  JOB_QUEUE_URL: z.string().min(1),
  /** Its own queue: a check the user outtalked puts itself back (one pending check per user). */
  IDLE_QUEUE_URL: z.string().min(1),
  /** JSON overrides of the signal accumulator's numbers (the idle rule's thresholds). */
  SIGNAL_CONFIG: z.string().min(1),
});
export type IdleEnv = z.infer<typeof IdleEnvSchema>;
