/** What the reflector function reads from its environment: the CDK stack sets exactly this. */
import * as z from 'zod';

const positiveInt = z.coerce.number().int().positive();

export const ReflectorEnvSchema = z.object({
  /** The stage's name (infra/config/stages.ts): the `stage` dimension of ModelCostUsd and RejectedRecords (lib/kernel/metrics.adapter.ts). */
  STAGE: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,20}$/, 'a stage name: 1–21 chars of a-z, 0-9 and -, starting with a letter'),
  TABLE_NAME: z.string().min(1),
  BUCKET_NAME: z.string().min(1),
  /** Bedrock model id or inference profile id (Converse). */
  MODEL_ID: z.string().min(1),
  /** The model of summaries and of sleep-time runs, when the stage gives them their own (infra/config/stages.ts `jobModels`). */
  SUMMARY_MODEL_ID: z.string().min(1).optional(),
  SLEEP_TIME_MODEL_ID: z.string().min(1).optional(),
  /** How structured answers are asked for, the stage's `answerShape` (lib/model/bedrock-models.ts). */
  ANSWER_SHAPE: z.enum(['schema', 'prompt']).default('prompt'),
  /** Deliveries before SQS parks a job in the DLQ: the job queue's maxReceiveCount. */
  JOB_MAX_RECEIVES: positiveInt,
  /** The job queue (this function's event source): a job the model failed is put back on it. */
  JOB_QUEUE_URL: z.string().min(1),
  /**
   * Req R-ERR: a model call that failed (timeout, 5xx, throttling) is tried again after 30 s,
   * once: the first delivery's failure comes back after this many seconds; later ones wait the
   * queue's visibility timeout (a throttling episode outlasts a quick retry).
   */
  MODEL_RETRY_DELAY_SECONDS: z.coerce.number().int().min(0).max(43_200).default(30),
  /** Req R-LLM-1, R-ASM-3: temperature 0.6, at most 1,500 output tokens, a batch within ~4,000 tokens. */
  MODEL_TEMPERATURE: z.coerce.number().min(0).max(1).default(0.6),
  MODEL_MAX_TOKENS: positiveInt.default(1500),
  BATCH_TOKEN_BUDGET: positiveInt.default(4000),
  /** Req R-SUM-8 summaries: on/off, the instruction, max output tokens (users may override). */
  SUMMARIES_ENABLED: z.enum(['true', 'false']).transform((v) => v === 'true'),
  SUMMARY_PROMPT: z.string().min(1),
  SUMMARY_MAX_TOKENS: positiveInt,
  /**
   * A forget erases the user, waits this long for writes of theirs that started
   * before it (the signal and API functions' timeouts), and erases again.
   */
  FORGET_SETTLE_SECONDS: z.coerce.number().int().min(0).max(60).default(35),
  /**
   * A forget's page: the items of one Query (its `Limit`) and the object versions of one
   * ListObjectVersions (`MaxKeys`, at most 1,000: https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html).
   */
  FORGET_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(1000),
  /** Pages a forget job erases before it goes on in a fresh job (lib/forget/forget-user.ts). */
  FORGET_PAGES_PER_JOB: positiveInt.default(50),
  /**
   * The stage's `routineInference.batch`: a routine batch reflection's request is kept for the
   * nightly batch inference job instead of asked on demand (lib/batch-inference/routine-batch.ts).
   */
  ROUTINE_BATCH_INFERENCE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** JSON overrides of sleep-time compute's numbers (lib/sleep-time/config.ts). */
  SLEEP_TIME_CONFIG: z.string().min(1),
  /** The nightly run reviews tier entries by it: JSON overrides of the tier policy's numbers (infra/config/stages.ts `tiers`, lib/tiers/tier-settings.ts); unset: the defaults. */
  TIER_POLICY: z.string().optional(),
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
export type ReflectorEnv = z.infer<typeof ReflectorEnvSchema>;
