/**
 * A local stand-in for Amazon Bedrock batch inference: the HTTP handler of a Bedrock
 * control-plane client (the SDK's own client, so its serializer and any middleware — the local
 * IAM check — run as against AWS) whose CreateModelInvocationJob (`POST /model-invocation-job`,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateModelInvocationJob.html)
 * records the job, and a `run` that does what Bedrock does later —
 * reads the job's input JSONL from the bucket, answers each record with the offline model (the
 * Converse stand-in's responder, converse-server.ts), writes the output JSONL beside it, and
 * sends the "Batch Inference Job State Change" event to whoever listens (the completion
 * handler). So the production adapter (lib/batch-inference/bedrock-batch-inference.adapter.ts)
 * runs locally unchanged but for its client.
 *
 * As Bedrock (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html):
 * one `<input>.jsonl.out` per input file under `<output>/<job id>/`, each line
 * `{ recordId, modelInput, modelOutput }` or `{ recordId, modelInput, error }`. A test picks
 * how the job ends (`setOutcome`): Failed, Stopped and Expired write no output; a
 * PartiallyCompleted job answers only its first half of the records.
 * Laxer than Bedrock: no minimum record count is checked (the sweep's limits are the harness's,
 * see harness.ts), no service role is assumed, and the job runs only when `run` is called.
 */
import { Readable } from 'node:stream';
import { BedrockClient, type CreateModelInvocationJobRequest } from '@aws-sdk/client-bedrock';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { BatchJobStateChange, BatchJobStatus } from '../../lib/batch-inference/batch-inference.js';
import { getText } from '../../lib/kernel/s3-objects.adapter.js';
import type { ConverseRequest, Responder } from './converse-protocol.js';
import { offlineResponder } from './converse-server.js';
import { requestLedger } from './request-ledger.js';

/** A job as the stand-in keeps it. */
export interface StandInJob {
  jobName: string;
  jobArn: string;
  modelId: string;
  input: string;
  output: string;
  status: BatchJobStatus;
  /** Records in the input file. */
  records: number;
}

/** The part of the SDK's HTTP handler a client calls: one request in, its response out. */
export interface StandInHttpHandler {
  handle(request: { method: string; path: string; body?: unknown }): Promise<{ response: StandInResponse }>;
}
interface StandInResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Readable;
}

export interface BatchInferenceStandIn {
  /** The HTTP handler a Bedrock control-plane client sends its requests to (`requestHandler`). */
  requestHandler: StandInHttpHandler;
  /** A Bedrock control-plane client over it: the one the adapter's tests send CreateModelInvocationJob with. */
  client: BedrockClient;
  /** Every job created, once per name (a repeated clientRequestToken creates none, as Bedrock). */
  jobs: StandInJob[];
  /** How the jobs run from now end; Completed by default. */
  setOutcome(status: 'Completed' | 'PartiallyCompleted' | 'Failed' | 'Stopped' | 'Expired'): void;
  /** Whether the jobs that end from now lose their state change event (EventBridge delivers Bedrock's best effort). */
  loseEvents(lost: boolean): void;
  /** Runs every job not yet ended, then sends each one's state change event; the events sent (none when lost). */
  run(): Promise<BatchJobStateChange[]>;
}

const s3Location = (uri: string) => {
  const m = /^s3:\/\/([^/]+)\/(.*)$/.exec(uri);
  if (!m) throw new Error(`not an S3 URI: ${uri}`);
  return { bucket: m[1] ?? '', key: m[2] ?? '' };
};

/** One input line answered as Bedrock's output line: the responder's Converse body, or its error. */
async function answerLine(line: string, modelId: string, responder: Responder): Promise<string> {
  const { recordId, modelInput } = JSON.parse(line) as {
    recordId: string;
    modelInput: Omit<ConverseRequest, 'modelId'>;
  };
  const request = { modelId, ...modelInput };
  const reply = await responder(request);
  if ('body' in reply) {
    // Counted as the answers of a batch inference job: their tokens are billed at the batch price.
    requestLedger.recordBatchAnswer(
      request,
      (reply.body as { usage?: { inputTokens?: number; outputTokens?: number } }).usage ?? {},
    );
    return JSON.stringify({ recordId, modelInput, modelOutput: reply.body });
  }
  const error =
    'hang' in reply
      ? { errorCode: 408, errorMessage: 'timed out' }
      : { errorCode: reply.status, errorMessage: reply.message };
  return JSON.stringify({ recordId, modelInput, error });
}

/** CreateModelInvocationJob as Bedrock takes it: a job per `clientRequestToken` (else name), Submitted. */
function createJob(jobs: StandInJob[], input: CreateModelInvocationJobRequest, region: string): { jobArn: string } {
  const token = input.clientRequestToken ?? input.jobName;
  const known = jobs.find((j) => j.jobName === token);
  if (known) return { jobArn: known.jobArn };
  const inputUri = input.inputDataConfig?.s3InputDataConfig?.s3Uri;
  const outputUri = input.outputDataConfig?.s3OutputDataConfig?.s3Uri;
  if (!inputUri || !outputUri || !input.jobName || !input.modelId || !input.roleArn)
    throw new Error('jobName, roleArn, modelId, inputDataConfig and outputDataConfig are required');
  const id = `job${String(jobs.length + 1).padStart(9, '0')}`;
  const job: StandInJob = {
    jobName: input.jobName,
    jobArn: `arn:aws:bedrock:${region}:000000000000:model-invocation-job/${id}`,
    modelId: input.modelId,
    input: inputUri,
    output: outputUri,
    status: 'Submitted',
    records: 0,
  };
  jobs.push(job);
  return { jobArn: job.jobArn };
}

const reply = (statusCode: number, body: unknown): { response: StandInResponse } => ({
  response: {
    statusCode,
    headers: { 'content-type': 'application/json' },
    body: Readable.from([Buffer.from(JSON.stringify(body))]),
  },
});

/**
 * The control plane's HTTP side: `POST /model-invocation-job` answered by `create`,
 * `GET /model-invocation-job/{jobIdentifier}` (GetModelInvocationJob) by the job's state, anything else refused.
 */
function httpHandler(
  create: (input: CreateModelInvocationJobRequest) => { jobArn: string },
  jobs: readonly StandInJob[],
): StandInHttpHandler {
  return {
    async handle(request) {
      const get = /^\/model-invocation-job\/([^/]+)$/.exec(request.path);
      if (request.method === 'GET' && get) {
        const id = decodeURIComponent(get[1] ?? '');
        const job = jobs.find((j) => j.jobArn === id || j.jobArn.endsWith(`/${id}`));
        return job
          ? reply(200, { jobArn: job.jobArn, jobName: job.jobName, modelId: job.modelId, status: job.status })
          : reply(404, { message: `no batch inference job ${id}` });
      }
      if (request.method !== 'POST' || request.path !== '/model-invocation-job')
        return reply(400, {
          message: 'the batch inference stand-in serves CreateModelInvocationJob and GetModelInvocationJob only',
        });
      try {
        const { body } = request;
        const text = body instanceof Uint8Array ? new TextDecoder().decode(body) : String(body);
        return reply(200, create(JSON.parse(text) as CreateModelInvocationJobRequest));
      } catch (error) {
        return reply(400, { message: (error as Error).message });
      }
    },
  };
}

export function createBatchInferenceStandIn(options: {
  s3: S3Client;
  /** Told of each job's state change event as `run` sends it (the events are also what `run` returns). */
  onEvent?: (event: BatchJobStateChange) => Promise<void>;
  responder?: Responder;
  region?: string;
}): BatchInferenceStandIn {
  const jobs: StandInJob[] = [];
  let outcome: BatchJobStatus = 'Completed';
  let eventsLost = false;
  const region = options.region ?? 'us-east-1';
  const responder = options.responder ?? offlineResponder;

  const requestHandler = httpHandler((input) => createJob(jobs, input, region), jobs);

  async function runJob(job: StandInJob): Promise<BatchJobStateChange> {
    const from = s3Location(job.input);
    const lines = (await getText(options.s3, from.bucket, from.key)).split('\n').filter((l) => l.trim() !== '');
    job.records = lines.length;
    job.status = outcome;
    if (outcome === 'Completed' || outcome === 'PartiallyCompleted') {
      const answered = outcome === 'Completed' ? lines : lines.slice(0, Math.ceil(lines.length / 2));
      const out = await Promise.all(answered.map((l) => answerLine(l, job.modelId, responder)));
      const to = s3Location(job.output);
      const id = job.jobArn.split('/').pop() ?? '';
      const name = from.key.split('/').pop() ?? 'records.jsonl';
      await options.s3.send(
        new PutObjectCommand({ Bucket: to.bucket, Key: `${to.key}${id}/${name}.out`, Body: out.join('\n') }),
      );
    }
    return {
      source: 'aws.bedrock',
      'detail-type': 'Batch Inference Job State Change',
      detail: { batchJobArn: job.jobArn, batchJobName: job.jobName, status: job.status },
    };
  }

  return {
    requestHandler,
    client: new BedrockClient({
      region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      requestHandler: requestHandler as unknown as BedrockClient['config']['requestHandler'],
    }),
    jobs,
    setOutcome: (status) => {
      outcome = status;
    },
    loseEvents: (lost) => {
      eventsLost = lost;
    },
    async run() {
      const events: BatchJobStateChange[] = [];
      for (const job of jobs.filter((j) => j.status === 'Submitted')) {
        const event = await runJob(job);
        if (eventsLost) continue;
        events.push(event);
        await options.onEvent?.(event);
      }
      return events;
    },
  };
}
