/**
 * Per-stage settings in one typed place. `cdk synth -c stage=NAME` picks one; a stage
 * that is not listed (a developer's own) gets the `dev` settings under its own name.
 */
import type { AnswerShape, InferenceScope } from '../../lib/model/bedrock-models.js';
import type { SignalConfig } from '../../lib/signals/signal-weights.js';
import type { SleepTimeConfig } from '../../lib/sleep-time/config.js';
import type { TierPolicyOverrides } from '../../lib/tiers/tier-settings.js';
import type { QueueKey } from '../resources.js';
import { DEFAULT_DAILY_COST_ALARM_USD } from '../../lib/costs/daily-cost.js';
import { BATCH_RECORD_LIMITS } from '../../lib/batch-inference/batch-inference.js';

/** The jobs whose model a stage may choose apart from `modelId`. */
export type ModelJob = 'summary' | 'sleepTime';

export interface StageConfig {
  /**
   * The Bedrock foundation model of the reflections, its bare model id (no `us.`/`eu.`/`global.`
   * prefix): one of lib/model/bedrock-models.ts, and it must support forced tool use. The id
   * the reflector invokes is derived per Region from it and `inferenceScope`
   * (infra/stacks/reflector-model.ts).
   */
  modelId: string;
  /**
   * How the reflector invokes the model: 'geo', the geographic cross-Region inference profile
   * of the stack's Region (`us.` from us-east-1, `eu.` from eu-west-1, `jp.` from Tokyo…);
   * 'global', the global profile (`global.`); 'in-region', the bare id in the stack's Region
   * (only for models Bedrock serves on demand there).
   */
  inferenceScope: InferenceScope;
  /**
   * Another foundation model (bare id, as `modelId`) for summaries or for the nightly
   * and weekly sleep-time runs; batches always use `modelId`. E.g. Amazon Nova Lite for both
   * pays a sixteenth of Claude Haiku 4.5's input price on those jobs
   * (lib/sleep-time/model-prices.ts; BENCHMARKS.md prices the choices). Each must be in
   * lib/model/bedrock-models.ts and invocable with `inferenceScope` from the stack's Region;
   * the reflector may invoke each (infra/stacks/reflector-model.ts). Like `modelId`, it must
   * take a forced tool (Nova does: https://docs.aws.amazon.com/nova/latest/userguide/tool-choice.html).
   * Unset: `modelId`.
   */
  jobModels?: Partial<Record<ModelJob, string>>;
  /**
   * How every job asks its model for a structured answer (lib/model/bedrock-models.ts
   * `AnswerShape`). 'prompt' (the default): the answer's type in the system prompt, about 450
   * fewer input tokens on each batch call than structured output's schema and its hidden
   * prompt, but nothing constrains the model's decoding: an answer that does not parse is
   * asked again on the job's next delivery, then aborts the batch (the batch log keeps it).
   * 'schema': the JSON schema as structured output (or a forced tool, for a model without it),
   * which Bedrock guarantees the answer follows. docs/design.md, "Structured answers", weighs them.
   */
  answerShape: AnswerShape;
  /**
   * Hybrid retrieval: the embedding model whose vectors the search index stores (each
   * compaction embeds the items it folds: reflector, and API for owners no job reaches) and
   * each search's query is embedded with (api), fused with the lexical ranking by reciprocal
   * rank. Amazon Titan Text Embeddings V2, invoked in the stack's Region (on demand: it must be
   * served there, and model access granted), at 256, 512 or 1024 dimensions. The reflector and
   * api roles get bedrock:InvokeModel on that foundation model only when this is set. Unset: no
   * vectors, the lexical ranking alone (docs/search-index.md, "Hybrid retrieval").
   */
  embeddings?: { modelId: 'amazon.titan-embed-text-v2:0'; dimensions: 256 | 512 | 1024 };
  /** Overrides of the signal accumulator's numbers (req R-SIG); omitted ones keep the seed's. */
  signals: Partial<Omit<SignalConfig, 'weights'>> & { weights?: Partial<SignalConfig['weights']> };
  /** EventBridge cron expressions (UTC) of the sweeps. */
  schedules: { nightly: string; weekly: string; expiry: string };
  /** Overrides of sleep-time compute's numbers (look-back windows, thresholds, expiry and archive ages). */
  sleepTime: Partial<SleepTimeConfig>;
  /**
   * Sleep-time at batch prices (docs/design.md, "Batch inference"). With `batch` on, a nightly or
   * weekly sweep whose runs make at least `minRecords` model requests (and at most `maxRecords`)
   * answers them with one Amazon Bedrock batch inference job, about half the on-demand price;
   * fewer, and the runs go on demand as without it. The stack then adds the job's service role,
   * the sweep's grants and the rule that brings the job's end back to the sweep. The limits are
   * the account's quotas "Minimum number of records per batch inference job" and "Records per
   * batch inference job" for the sleep-time model (Service Quotas; lib/batch-inference/batch-inference.ts
   * BATCH_RECORD_LIMITS gives the figures assumed). Validated at synth.
   */
  sleepTimeInference: { batch: boolean; minRecords: number; maxRecords: number };
  /**
   * Routine reflections at batch prices (docs/design.md, "Batch inference"). With `batch` on, a
   * batch reflection fired by the turn count is not asked on demand: its request is kept, and the
   * nightly sweep sends the day's to one Amazon Bedrock batch inference job on the batches'
   * model (`modelId`), about half the on-demand price; its facts land when the job ends, within
   * hours of the night. Urgent and agent.event batches, summaries and sleep-time runs are not
   * affected. Fewer than `minRecords` (or more than `maxRecords`): they run on demand after the
   * sweep. The limits are the account's quotas for the batches' model, as for `sleepTimeInference`.
   */
  routineInference: { batch: boolean; minRecords: number; maxRecords: number };
  /**
   * Overrides of the tier policy's numbers (lib/tiers/tier-settings.ts: promotion confidence and
   * sessions, corroboration gain, contradiction cost, floors, decay, TTLs, recurrence); omitted
   * ones keep the defaults. Validated at synth: an invalid one fails naming the field.
   */
  tiers: TierPolicyOverrides;
  /** Keep data when the stack is deleted. */
  retainData: boolean;
  /**
   * Thresholds of the other alarms (every alarm notifies the stage's SNS topic).
   * `functionErrors` and `functionThrottles`: the Sum of the Lambda metric over 5 minutes that
   * raises the alarm of a function no queue stands behind (api, sweep; infra/constructs/stage-alarms.ts). `queueAgeSeconds`: how
   * long the oldest message of a main queue may wait *beyond the queue's delivery delay* (the
   * IdleQueue's 5 minutes are added by the stack) before the queue's age alarm fires.
   * `dailyModelCostUsd`: the model cost of the stage's jobs over the last 24 hours (the
   * reflector's ModelCostUsd metric at the price table's rates) that raises the cost alarm.
   */
  alarms: {
    functionErrors: number;
    functionThrottles: number;
    queueAgeSeconds: Record<QueueKey, number>;
    dailyModelCostUsd: number;
  };
  /**
   * An e-mail address subscribed to the stage's alarm topic. SNS mails it a confirmation link
   * on deploy; until it is followed, nothing is delivered to it. Unset: the topic has no
   * subscription (subscribe yourself, or let another stack subscribe to the `AlarmTopicArn` output).
   */
  alarmEmail?: string;
  /**
   * The most concurrent invocations an event source may start (Lambda's SQS `MaximumConcurrency`,
   * 2–1000). Only the reflector is capped: each of its invocations makes a Bedrock call, so this
   * bounds the stage's load on the model's quota during the nightly fan-out.
   */
  maxConcurrency: { reflector: number };
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Req R-SUM-8 summaries: on/off, the instruction, max output tokens (users may override). */
  summaries: { enabled: boolean; prompt: string; maxTokens: number };
  memoryMb: { signal: number; reflector: number; idle: number; sweep: number; api: number };
  /**
   * What the signal function redacts before a turn is stored or sent to a model
   * (docs/publishing.md): secrets always; personal identifiers (emails, phone numbers, card numbers, IBANs)
   * when `personalData` is on — off in dev, on in prod.
   */
  redaction: { personalData: boolean };
  /**
   * Who the memory API trusts. When `issuer` is set, the HTTP API's JWT authorizer trusts
   * that OIDC issuer (tokens must carry one of `audience` as `aud` or `client_id`); otherwise
   * the stateful stack creates a Cognito user pool (with a group `memory-admin`) and an app
   * client, and the authorizer trusts them.
   */
  auth: { issuer?: string; audience?: string[] };
  /**
   * A symmetric KMS key of the stage's own for the table, bucket, queues and DLQs: its key
   * ARN (not an alias ARN: IAM grants name the key), in the stack's region. Unset: the
   * stateful stack creates one (rotation on, alias `alias/reflective-memory-{stage}`). The
   * stack does not manage a key brought here: its key policy must let the deploying
   * account's IAM policies grant its use, and its rotation and deletion are its owner's
   * (docs/encryption.md).
   */
  dataKeyArn?: string;
}

const base: StageConfig = {
  modelId: 'anthropic.claude-haiku-4-5-20251001-v1:0',
  inferenceScope: 'geo',
  answerShape: 'prompt',
  signals: {},
  schedules: {
    nightly: 'cron(0 3 * * ? *)',
    weekly: 'cron(0 4 ? * SUN *)',
    expiry: 'cron(30 2 * * ? *)',
  },
  sleepTime: {},
  sleepTimeInference: { batch: true, ...BATCH_RECORD_LIMITS },
  // Off but in prod: a routine batch's facts would wait for the night (docs/deploy.md).
  routineInference: { batch: false, ...BATCH_RECORD_LIMITS },
  tiers: {},
  retainData: false,
  alarms: {
    // Record failures are reported as partial batch failures, not function errors, so an error
    // here is a crash, a timeout or an init failure: every one is worth a look.
    functionErrors: 1,
    functionThrottles: 1,
    // TurnQueue: the signal function takes seconds; 10 minutes means a backlog or a user's FIFO
    // group held by a failing message. Job queue: jobs of a nightly fan-out wait their turn
    // behind maxConcurrency.reflector, so allow an hour. IdleQueue: 10 minutes past its delay.
    queueAgeSeconds: { turn: 600, job: 3600, idle: 600 },
    // Req R-SLP-14: "under $1/day across all agents".
    dailyModelCostUsd: DEFAULT_DAILY_COST_ALARM_USD,
  },
  maxConcurrency: { reflector: 5 },
  logLevel: 'INFO',
  summaries: { enabled: true, prompt: 'Write a concise summary of the current context.', maxTokens: 2000 },
  // The api gets one full vCPU (1,769 MB; Lambda gives CPU in proportion to memory:
  // https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). A search is mostly
  // CPU — about nine DynamoDB requests through the SDK plus the ranking — so at 512 MB (0.29 of a
  // core) its p95 at 100,000 items projects past 150 ms (BENCHMARKS.md, search-latency); a
  // CPU-bound request costs about the same GB-seconds at either size, as it ends sooner.
  memoryMb: { signal: 256, reflector: 512, idle: 256, sweep: 256, api: 1769 },
  redaction: { personalData: false },
  auth: {},
};

export const stages: Record<string, StageConfig> = {
  dev: base,
  prod: {
    ...base,
    retainData: true,
    logLevel: 'WARN',
    // A nightly fan-out to many users drains at maxConcurrency.reflector jobs at a time: three
    // hours before the age of the oldest job is a problem rather than the queue.
    alarms: { ...base.alarms, queueAgeSeconds: { ...base.alarms.queueAgeSeconds, job: 3 * 3600 } },
    maxConcurrency: { reflector: 20 },
    redaction: { personalData: true },
    // Batches keep the Claude-class `modelId`; summaries and nightly/weekly runs take Amazon
    // Nova Lite, a sixteenth of Haiku 4.5's input price (docs/deploy.md says how to switch back).
    // Its Converse id `amazon.nova-lite-v1:0`, invoked as `us.amazon.nova-lite-v1:0` with 'geo':
    // https://docs.aws.amazon.com/nova/latest/userguide/using-converse-api.html
    jobModels: { summary: 'amazon.nova-lite-v1:0', sleepTime: 'amazon.nova-lite-v1:0' },
    // Routine batches at batch prices: their facts land after the night's job, urgent ones at once.
    routineInference: { batch: true, ...BATCH_RECORD_LIMITS },
  },
};

export function stageConfig(stage: string): StageConfig {
  if (!/^[a-z][a-z0-9-]{0,20}$/.test(stage)) {
    throw new Error(`stage must be 1–21 chars of a-z, 0-9 and -, starting with a letter: ${JSON.stringify(stage)}`);
  }
  return stages[stage] ?? stages.dev ?? base;
}
