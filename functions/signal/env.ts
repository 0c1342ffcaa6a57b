/** What the signal function reads from its environment: the CDK stack sets exactly this. */
import * as z from 'zod';

export const SignalEnvSchema = z.object({
  /** The stage's name (infra/config/stages.ts): the `stage` dimension of RejectedRecords (lib/kernel/metrics.adapter.ts). */
  STAGE: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,20}$/, 'a stage name: 1–21 chars of a-z, 0-9 and -, starting with a letter'),
  TABLE_NAME: z.string().min(1),
  BUCKET_NAME: z.string().min(1),
  JOB_QUEUE_URL: z.string().min(1),
  IDLE_QUEUE_URL: z.string().min(1),
  /** JSON overrides of the signal accumulator's numbers (lib/signals/signal-weights.ts). */
  SIGNAL_CONFIG: z.string().min(1),
  /** A session's close promotes or clears its ephemeral entries by it: JSON overrides of the tier policy's numbers (infra/config/stages.ts `tiers`, lib/tiers/tier-settings.ts); unset: the defaults. */
  TIER_POLICY: z.string().optional(),
  /** Redact personal identifiers (emails, phone, card numbers, IBANs) too; secrets always are (lib/turns/redaction.ts). */
  REDACT_PERSONAL_DATA: z.enum(['true', 'false']).default('false'),
});
export type SignalEnv = z.infer<typeof SignalEnvSchema>;
