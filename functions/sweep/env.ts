/** What the sweep function reads from its environment: the CDK stack sets exactly this. */
import * as z from 'zod';

export const SweepEnvSchema = z.object({
  TABLE_NAME: z.string().min(1),
  BUCKET_NAME: z.string().min(1),
  JOB_QUEUE_URL: z.string().min(1),
  /** JSON overrides of sleep-time compute's numbers (lib/sleep-time/config.ts). */
  SLEEP_TIME_CONFIG: z.string().min(1),
  /** The expiry sweep expires tier entries by it: JSON overrides of the tier policy's numbers (infra/config/stages.ts `tiers`, lib/tiers/tier-settings.ts); unset: the defaults. */
  TIER_POLICY: z.string().optional(),
  /**
   * Sleep-time at batch prices: JSON of lib/batch-inference/batch-inference.ts
   * BatchInferenceSettingsSchema (job prefix, model, service role, record limits), from the stage's
   * `sleepTimeInference`. Unset: every nightly and weekly run on demand.
   */
  BATCH_INFERENCE: z.string().optional(),
  /**
   * Routine reflections at batch prices (lib/batch-inference/routine-batch.ts): the same settings for
   * the batch reflections' model, from the stage's `routineInference`. Unset: the nightly sweep
   * collects no routine reflection.
   */
  ROUTINE_BATCH_INFERENCE: z.string().optional(),
});
export type SweepEnv = z.infer<typeof SweepEnvSchema>;
