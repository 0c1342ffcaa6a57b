/**
 * Sleep-time at batch prices (req R-SLP, docs/design.md "Batch inference"): the records a
 * sweep's sleep-time runs would ask the model, as one Amazon Bedrock batch inference job,
 * and its answers read back into the recorded-answer store. Pure: no AWS, no I/O.
 *
 * AWS behaviour relied on:
 * - Records are JSONL lines `{ "recordId": …, "modelInput": {…} }`; with the job's
 *   `modelInvocationType` `Converse` the `modelInput` is the request body of the Converse API
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html). The
 *   output is one JSONL file per input file (`<input>.jsonl.out`), each line
 *   `{ recordId, modelInput, modelOutput }` with `modelOutput` a Converse response body, or an
 *   `error` object in its place; the order of lines is not guaranteed
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html).
 * - A job needs at least the quota "Minimum number of records per batch inference job" and
 *   at most "Records per batch inference job" / "Records per input file per batch inference
 *   job" (same page, and https://docs.aws.amazon.com/general/latest/gr/bedrock.html#limits_bedrock).
 *   They are per model and per account: BATCH_RECORD_LIMITS holds the defaults, and a stage
 *   may set its own.
 * - Job states: Submitted, Validating, Scheduled, InProgress, Completed, PartiallyCompleted
 *   ("Not all of your records could be processed in time"), Failed, Stopping, Stopped, Expired
 *   ("scheduled but didn't begin before the set timeout duration")
 *   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ModelInvocationJobSummary.html).
 *
 * The records carry no tool and no structured output: the answer's type is asked for in the
 * system prompt (lib/model/prompted-answer.ts) and read from the answer's text, since batch
 * inference is not documented to take Converse's `toolConfig` or `outputConfig`.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { JobSchema } from '../../events/job.js';
import type { LanguageModel, ModelRequest, ModelResponse } from '../model/language-model.port.js';
import { extractJsonObject, promptedAnswerInstruction } from '../model/prompted-answer.js';

/**
 * The default record limits of one job: `minRecords` for the quota "Minimum number of records per
 * batch inference job", `maxRecords` for "Records per batch inference job" (also the limit per
 * input file, since a job here writes one file). The pages cited above name these quotas but
 * give no figure: 100 and 50,000 are assumed defaults, to be checked against the account's
 * values in Service Quotas (a stage overrides them, infra/config/stages.ts). A sweep outside
 * them runs on demand, so a wrong figure costs the batch discount, not the runs.
 */
export const BATCH_RECORD_LIMITS = { minRecords: 100, maxRecords: 50_000 } as const;
export type BatchRecordLimits = { minRecords: number; maxRecords: number };

/** One record of a job: a model request of one sleep-time run's part, and where its answer goes. */
export interface BatchEntry {
  /** Alphanumeric, unique in the job (batchRecordId). */
  recordId: string;
  userId: string;
  /** The recorded-answer key: `${jobId}-${part}` (lib/sleep-time/run-record.ts callCached). */
  key: string;
  request: Omit<ModelRequest, 'signal'>;
}

/** Where a sleep-time run in collect mode puts the requests it would have asked (lib/sleep-time/run-record.ts). */
export interface BatchCollector {
  add(userId: string, key: string, request: Omit<ModelRequest, 'signal'>): void;
}

/** A routine reflection waiting for the nightly collection (routine-batch.ts): its job, the request it would have sent, and when. */
export interface DeferredReflection {
  job: z.infer<typeof JobSchema>;
  request: Omit<ModelRequest, 'signal'>;
  deferredAt: string;
}

/** A run in collect mode stopped before its first write: its requests are collected, or it needs none. */
export class DeferredToBatch extends Error {
  override readonly name = 'DeferredToBatch';
}

/**
 * The model of a run in collect mode: never asked (callCached collects the request instead, or
 * finds a recorded answer), so a call reaching it is a defect, and fails loudly.
 */
const notAsked = () =>
  Promise.reject(new Error('a run in collect mode asks no model: its requests go to a batch inference job'));
export const collectOnlyModel: LanguageModel = { reflect: notAsked, summarize: notAsked };

/**
 * A record's id: plain alphanumerics (the docs' examples: "CALL0000001"), derived from the user and
 * the recorded-answer key it answers, not from its place in the file. A sweep delivered again
 * rewrites the input and the manifest while the job its first delivery started may already be
 * reading them; were ids positions, a second collection in another order would map one user's
 * answer to another user's key. Derived, the same id always names the same user and key.
 */
export const batchRecordId = (userId: string, key: string): string =>
  `R${createHash('sha256').update(`${userId}\n${key}`).digest('hex').slice(0, 24)}`;

/** What the completion needs: the sweep's jobs, to enqueue again, and where each record's answer goes. */
export const BatchManifestSchema = z.object({
  jobName: z.string().min(1),
  modelId: z.string().min(1),
  jobs: z.array(JobSchema),
  records: z.array(z.object({ recordId: z.string().min(1), userId: z.string().min(1), key: z.string().min(1) })),
});
export type BatchManifest = z.infer<typeof BatchManifestSchema>;

/** Batch or on demand: one job when the records are within the job's limits, else each run calls the model itself. */
export function chooseInference(records: number, limits: BatchRecordLimits): 'batch' | 'on-demand' {
  return records >= limits.minRecords && records <= limits.maxRecords ? 'batch' : 'on-demand';
}

/** The Converse request body of a record (no modelId: the job names the model), the answer's type in the prompt. */
export function converseInputOf(request: Omit<ModelRequest, 'signal'>) {
  return {
    system: [{ text: request.system }, { text: promptedAnswerInstruction(request.toolName, request.toolInputSchema) }],
    messages: [{ role: 'user' as const, content: [{ text: request.prompt }] }],
    inferenceConfig: { temperature: request.temperature, maxTokens: request.maxTokens },
  };
}

/** The job's input file: one JSON line per record. */
export function inputJsonl(entries: readonly BatchEntry[]): string {
  return entries
    .map((e) => JSON.stringify({ recordId: e.recordId, modelInput: converseInputOf(e.request) }))
    .join('\n');
}

const ConverseOutputSchema = z.object({
  output: z.object({ message: z.object({ content: z.array(z.object({ text: z.string().optional() }).loose()) }) }),
  stopReason: z.string().optional(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }).loose().optional(),
  metrics: z.object({ latencyMs: z.number() }).loose().optional(),
});

const OutputLineSchema = z.object({
  recordId: z.string().min(1),
  modelOutput: z.unknown().optional(),
  error: z.unknown().optional(),
});

/** A record's result: its answer as a recorded model response, or why there is none. */
export type BatchResult = { recordId: string; response: ModelResponse } | { recordId: string; error: string };

/** The answer's text read as JSON (the text itself when it holds none: the run then finds it unusable). */
function answerOf(text: string): unknown {
  const json = extractJsonObject(text);
  if (json === null) return text;
  try {
    return JSON.parse(json);
  } catch {
    return text;
  }
}

/**
 * The output file's records, each as the response the run would have had on demand, or the
 * error in its place. A line that is
 * not JSON or names no record is skipped: its run finds no answer and asks on demand.
 */
export function parseOutputJsonl(text: string, modelId: string): BatchResult[] {
  const results: BatchResult[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = OutputLineSchema.safeParse(raw);
    if (!parsed.success) continue;
    const { recordId, modelOutput, error } = parsed.data;
    const output = ConverseOutputSchema.safeParse(modelOutput);
    if (error !== undefined || !output.success) {
      results.push({ recordId, error: JSON.stringify(error ?? 'no modelOutput') });
      continue;
    }
    const o = output.data;
    const text = o.output.message.content.map((c) => c.text ?? '').join('');
    results.push({
      recordId,
      response: {
        output: answerOf(text),
        usage: {
          modelId,
          inputTokens: o.usage?.inputTokens ?? 0,
          outputTokens: o.usage?.outputTokens ?? 0,
          latencyMs: o.metrics?.latencyMs ?? 0,
          ...(o.stopReason ? { stopReason: o.stopReason } : {}),
          batchInference: true,
        },
      },
    });
  }
  return results;
}

/** The job states (ModelInvocationJobSummary.status). */
export const BatchJobStatusSchema = z.enum([
  'Submitted',
  'Validating',
  'Scheduled',
  'InProgress',
  'Completed',
  'PartiallyCompleted',
  'Failed',
  'Stopping',
  'Stopped',
  'Expired',
]);
export type BatchJobStatus = z.infer<typeof BatchJobStatusSchema>;

/**
 * What a state change asks of the completion: read the answers (a partly completed job wrote
 * some), run every job on demand (the job ended without answers), or nothing yet.
 */
export function completionOf(status: BatchJobStatus): 'answers' | 'on-demand' | 'wait' {
  if (status === 'Completed' || status === 'PartiallyCompleted') return 'answers';
  if (status === 'Failed' || status === 'Stopped' || status === 'Expired') return 'on-demand';
  return 'wait';
}

/**
 * The EventBridge event Bedrock sends when a job's state changes: source `aws.bedrock`,
 * detail-type "Batch Inference Job State Change"
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/monitoring-eventbridge-how-it-works.html).
 * Only the fields the completion reads are checked; others pass.
 */
export const BatchJobStateChangeSchema = z.object({
  source: z.literal('aws.bedrock'),
  'detail-type': z.literal('Batch Inference Job State Change'),
  detail: z
    .object({ batchJobArn: z.string().min(1), batchJobName: z.string().min(1), status: BatchJobStatusSchema })
    .loose(),
});
export type BatchJobStateChange = z.infer<typeof BatchJobStateChangeSchema>;

/** Where every job's folder is. */
export const BATCH_ROOT = 'batch-inference/';
/** The job's S3 prefix under the bucket, named after the job (one per sweep run). */
export const batchPrefix = (jobName: string): string => `${BATCH_ROOT}${jobName}/`;

/**
 * The job's name: one per stage and sweep run (`memory-prod-nightly-202611280300` for the stage's
 * prefix `memory-prod` and the jobs `nightly-202611280300`), within the API's pattern
 * `[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\+\-\.]){0,63}`
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_ModelInvocationJobSummary.html); also the
 * request's idempotency token, so a redelivered sweep starts no second job. The stage's prefix keeps two
 * stages of one account apart: the same sweep time would otherwise give both the same token.
 */
export const batchJobName = (prefix: string, sweepJobId: string): string =>
  `${prefix}-${sweepJobId}`.replace(/[^a-zA-Z0-9-]/g, '').slice(0, 63);

/**
 * The sweep's batch inference settings: the sweep function's `BATCH_INFERENCE` variable, from the
 * stage's `sleepTimeInference` (infra/config/stages.ts). `modelId` is the sleep-time runs' model as
 * the reflector invokes it (an inference profile or a model id); `roleArn` the service role Bedrock
 * assumes; the record limits as BATCH_RECORD_LIMITS.
 */
export const BatchInferenceSettingsSchema = z
  .object({
    jobPrefix: z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9-]{0,30}$/, 'letters, digits and -, at most 31'),
    modelId: z.string().min(1),
    roleArn: z.string().startsWith('arn:'),
    minRecords: z.number().int().min(1),
    maxRecords: z.number().int().min(1),
  })
  .refine((s) => s.maxRecords >= s.minRecords, { message: 'must be at least minRecords', path: ['maxRecords'] });
export type BatchInferenceSettings = z.infer<typeof BatchInferenceSettingsSchema>;

/** The settings from the variable `name`'s JSON; null when it is unset (those runs on demand). */
export function parseBatchInferenceSettings(text: string | undefined, name: string): BatchInferenceSettings | null {
  if (text === undefined || text === '') return null;
  const parsed = BatchInferenceSettingsSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${name}.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
