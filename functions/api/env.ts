/** What the api function reads from its environment: the CDK stack sets exactly this. */
import * as z from 'zod';

export const ApiEnvSchema = z.object({
  /** The stage's name (infra/config/stages.ts): the `stage` of the api's warnings, the StaleSearchIndex metric's dimension. */
  STAGE: z.string().min(1),
  TABLE_NAME: z.string().min(1),
  BUCKET_NAME: z.string().min(1),
  /** JSON overrides of sleep-time compute's numbers: search hides staged items past their expiry age. */
  SLEEP_TIME_CONFIG: z.string().min(1),
  /** The job queue: summaries asked for through the API (POST …/summaries). */
  JOB_QUEUE_URL: z.string().min(1),
  /** JSON overrides of the tier policy's numbers (infra/config/stages.ts `tiers`, lib/tiers/tier-settings.ts); unset: the defaults. */
  TIER_POLICY: z.string().optional(),
  /** The TurnQueue: a batch reflection asked for through the API (POST …/summaries with `reflect`). */
  TURN_QUEUE_URL: z.string().min(1),
  /** Redact personal identifiers in request bodies too; secrets always are (lib/turns/redaction.ts). */
  REDACT_PERSONAL_DATA: z.enum(['true', 'false']).default('false'),
  /**
   * L, how long after a search change mark's `at` its write can still land; a
   * compaction's watermark stays this far behind its start (lib/search/compaction-policy.ts
   * MARK_LAG_MS). The local harness sets a few seconds.
   */
  SEARCH_MARK_LAG_SECONDS: z.coerce.number().int().min(0).max(3600).default(600),
  /**
   * The stage's embedding model (infra/config/stages.ts `embeddings`) and its vectors'
   * size; both unset on a stage that does not embed.
   */
  EMBEDDING_MODEL_ID: z.string().min(1).optional(),
  EMBEDDING_DIMENSIONS: z.enum(['256', '512', '1024']).transform(Number).optional(),
});
export type ApiEnv = z.infer<typeof ApiEnvSchema>;
