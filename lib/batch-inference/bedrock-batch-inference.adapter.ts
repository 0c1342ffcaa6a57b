/**
 * Amazon Bedrock batch inference (CreateModelInvocationJob, control plane `bedrock`) over the
 * bucket: the input file and the manifest under the job's prefix, the output read back from it.
 *
 * - The job reads and writes S3 as the service role it is given (`roleArn`), which Bedrock
 *   assumes (trust `bedrock.amazonaws.com`): s3:GetObject and s3:ListBucket on the input,
 *   s3:PutObject on the output
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-iam-sr.html). The caller needs
 *   bedrock:CreateModelInvocationJob and iam:PassRole on that role
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-permissions.html).
 * - `clientRequestToken`: "If this token matches a previous request, Amazon Bedrock ignores the
 *   request, but does not return an error"
 *   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateModelInvocationJob.html),
 *   so a redelivered sweep starts no second job.
 * - `modelInvocationType: 'Converse'`: each record's `modelInput` is a Converse request body
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html).
 * - The output is one `<input>.jsonl.out` per input file under the output location
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html): read
 *   as every `.jsonl.out` object under the job's output prefix, whatever folder Bedrock adds.
 * - GetModelInvocationJob gives a job's `status` by its ARN
 *   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetModelInvocationJob.html):
 *   what the sweep reconciles a job by when its end event never came.
 */
import {
  type BedrockClient,
  CreateModelInvocationJobCommand,
  GetModelInvocationJobCommand,
} from '@aws-sdk/client-bedrock';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { getText, getTextOrNull, listAllKeys } from '../kernel/s3-objects.adapter.js';
import type { StorageBucket } from '../kernel/storage.adapter.js';
import {
  type BatchEntry,
  type BatchJobStatus,
  BatchJobStatusSchema,
  type BatchManifest,
  BatchManifestSchema,
  type BatchResult,
  BATCH_ROOT,
  batchPrefix,
  inputJsonl,
  parseOutputJsonl,
} from './batch-inference.js';
import type { BatchInference } from './batch-inference.port.js';

/** Where a job's files are, under its prefix. */
export const batchKeys = (jobName: string) => {
  const prefix = batchPrefix(jobName);
  return {
    input: `${prefix}input/records.jsonl`,
    manifest: `${prefix}manifest.json`,
    output: `${prefix}output/`,
    /** Written once the job is started: its ARN. */
    started: `${prefix}started.json`,
    /** Written once its end is processed. */
    ended: `${prefix}ended.json`,
  };
};

export class BedrockBatchInference implements BatchInference {
  constructor(
    private readonly storage: StorageBucket,
    private readonly client: Pick<BedrockClient, 'send'>,
    /** The service role Bedrock assumes to read the input and write the output. */
    private readonly roleArn: string,
  ) {}

  async start(manifest: BatchManifest, entries: readonly BatchEntry[]): Promise<string> {
    const { bucketName } = this.storage;
    const keys = batchKeys(manifest.jobName);
    // The manifest first: a job whose completion finds no manifest would leave its runs waiting.
    await this.put(keys.manifest, JSON.stringify(manifest), 'application/json');
    await this.put(keys.input, inputJsonl(entries), 'application/jsonl');
    const res = await this.client.send(
      new CreateModelInvocationJobCommand({
        jobName: manifest.jobName,
        clientRequestToken: manifest.jobName,
        roleArn: this.roleArn,
        modelId: manifest.modelId,
        modelInvocationType: 'Converse',
        inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${bucketName}/${keys.input}`, s3InputFormat: 'JSONL' } },
        outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${bucketName}/${keys.output}` } },
      }),
    );
    if (!res.jobArn) throw new Error(`CreateModelInvocationJob ${manifest.jobName}: no jobArn in the answer`);
    await this.put(keys.started, JSON.stringify({ jobArn: res.jobArn }), 'application/json');
    return res.jobArn;
  }

  async manifest(jobName: string): Promise<BatchManifest | null> {
    const text = await getTextOrNull(this.storage.s3, this.storage.bucketName, batchKeys(jobName).manifest);
    return text === null ? null : BatchManifestSchema.parse(JSON.parse(text));
  }

  async results(manifest: BatchManifest): Promise<BatchResult[]> {
    const { s3, bucketName } = this.storage;
    const keys = (await listAllKeys(s3, bucketName, batchKeys(manifest.jobName).output)).filter((k) =>
      k.endsWith('.jsonl.out'),
    );
    const texts = await Promise.all(keys.map((k) => getText(s3, bucketName, k)));
    return texts.flatMap((t) => parseOutputJsonl(t, manifest.modelId));
  }

  /** Every job folder with `started.json` and no `ended.json` (the bucket's lifecycle rule keeps the prefix short). */
  async unfinished(): Promise<Array<{ jobName: string; jobArn: string }>> {
    const { s3, bucketName } = this.storage;
    const keys = new Set(await listAllKeys(s3, bucketName, BATCH_ROOT));
    const open = [...keys]
      .filter((k) => k.endsWith('/started.json'))
      .map((k) => k.slice(BATCH_ROOT.length, -'/started.json'.length))
      .filter((jobName) => !keys.has(batchKeys(jobName).ended));
    const jobs = await Promise.all(
      open.map(async (jobName) => {
        const text = await getTextOrNull(s3, bucketName, batchKeys(jobName).started);
        const jobArn = text === null ? null : (JSON.parse(text) as { jobArn?: unknown }).jobArn;
        return typeof jobArn === 'string' ? [{ jobName, jobArn }] : [];
      }),
    );
    return jobs.flat();
  }

  async status(jobArn: string): Promise<BatchJobStatus> {
    const res = await this.client.send(new GetModelInvocationJobCommand({ jobIdentifier: jobArn }));
    return BatchJobStatusSchema.parse(res.status);
  }

  async markEnded(jobName: string): Promise<void> {
    await this.put(batchKeys(jobName).ended, '{}', 'application/json');
  }

  private async put(Key: string, Body: string, ContentType: string): Promise<void> {
    await this.storage.s3.send(new PutObjectCommand({ Bucket: this.storage.bucketName, Key, Body, ContentType }));
  }
}
