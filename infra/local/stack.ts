/**
 * The local stack: emulators + the same resources as the CDK app + the very same
 * handler modules driven by local event sources. One stack per process (handler modules
 * read their settings once, at import, as they do in Lambda).
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type RawMessage, sqsSafeJson, TurnPublisher } from '../../lib/adapters/sqs-turn-publisher.js';
import { UserIdSchema } from '../../events/common.js';
import { defaultSignalConfig } from '../../lib/domain/signal-weights.js';
import { FUNCTION_TIMEOUT_SECONDS, type QueueKey } from '../resources.js';
import type { Responder } from './converse-server.js';
import { type Emulators, LOCAL_CREDENTIALS, LOCAL_REGION, startEmulators } from './emulators.js';
import { LocalEventSource, type SqsHandler } from './event-source.js';
import { type LocalResources, provision } from './provision.js';
import { listAllKeys } from './s3-keys.js';

export const OFFLINE_MODEL_ID = 'offline.rule-reflector-v1';

export interface StackInfo {
  stage: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  endpoints: { dynamodb: string; sqs: string; s3: string; bedrock: string };
  tableName: string;
  bucketName: string;
  queues: LocalResources['queues'];
  modelId: string;
  modelLabel: string;
  startedAt: string;
  drained: boolean;
}

export interface Summary {
  turns: number;
  duplicates: number;
  late: number;
  rejected: number;
  batches: number;
  batchesAborted: number;
  /** Items the quality gates removed, over all batches. */
  gateRejections: number;
  staged: number;
  promoted: number;
  errors: number;
  handlerErrors: number;
  modelCalls: number;
  /** Summary jobs (idle, session close) fired by the signal state. */
  summaryJobs: number;
  /** Summaries written as turn pairs (seed 003). */
  summaries: number;
  /** Jobs of kinds this version cannot run yet, kept under Logs/reflector/deferred/. */
  deferred: number;
}

export interface ReplayResult {
  lines: number;
  published: number;
  /** Lines SQS itself refused (e.g. characters it does not accept); kept in the summary's `rejected`. */
  refused: Array<{ line: number; reason: string }>;
}

export interface LocalStack {
  info: StackInfo;
  emulators: Emulators;
  sources: Record<QueueKey, LocalEventSource>;
  publisher: TurnPublisher;
  replayLines(lines: readonly string[]): Promise<ReplayResult>;
  waitUntilDrained(options?: { timeoutMs?: number; onTick?: () => void | Promise<void> }): Promise<void>;
  summary(): Promise<Summary>;
  stop(): Promise<void>;
}

export interface LocalStackOptions {
  stage?: string;
  responder?: Responder;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  /**
   * How much faster than real time the local clock runs for delays: the idle threshold of
   * 5 minutes becomes 5 min ÷ speed. @default 60 (5 s)
   */
  speed?: number;
  /** Emit Powertools Metrics (EMF lines on stdout). @default false */
  metrics?: boolean;
  onHandlerError?: (source: string, error: unknown) => void;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stage = options.stage ?? 'local';
  const emulators = await startEmulators(options.responder ? { responder: options.responder } : {});
  let resources: LocalResources;
  try {
    resources = await provision(stage, emulators);
  } catch (error) {
    await emulators.stop();
    throw error;
  }

  // The handlers' environment, as the CDK app sets it in Lambda, plus endpoint overrides.
  Object.assign(process.env, {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodb,
    AWS_ENDPOINT_URL_SQS: emulators.sqs,
    AWS_ENDPOINT_URL_S3: emulators.s3,
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: emulators.bedrock,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    TABLE_NAME: resources.tableName,
    BUCKET_NAME: resources.bucketName,
    TURN_QUEUE_URL: resources.queues.turn.url,
    REFLECTION_QUEUE_URL: resources.queues.reflection.url,
    IDLE_QUEUE_URL: resources.queues.idle.url,
    MODEL_ID: OFFLINE_MODEL_ID,
    POWERTOOLS_LOG_LEVEL: options.logLevel ?? 'WARN',
    POWERTOOLS_METRICS_DISABLED: options.metrics ? 'false' : 'true',
    SIGNAL_CONFIG: JSON.stringify({ idleMinutes: defaultSignalConfig.idleMinutes / (options.speed ?? 60) }),
  });
  delete process.env.AWS_PROFILE;

  const common = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const sqs = new SQSClient({ ...common, endpoint: emulators.sqs });
  const s3 = new S3Client({ ...common, endpoint: emulators.s3, forcePathStyle: true });
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...common, endpoint: emulators.dynamodb }));

  const signal = (await import('../../functions/signal/handler.js')).handler as unknown as SqsHandler;
  const reflector = (await import('../../functions/reflector/handler.js')).handler as unknown as SqsHandler;
  const idle = (await import('../../functions/idle/handler.js')).handler as unknown as SqsHandler;
  const source = (key: QueueKey, handler: SqsHandler, fn: keyof typeof FUNCTION_TIMEOUT_SECONDS) =>
    new LocalEventSource({
      name: key,
      sqs,
      queueUrl: resources.queues[key].url,
      queueArn: resources.queues[key].arn,
      region: LOCAL_REGION,
      handler,
      functionName: `reflective-memory-${stage}-${fn}`,
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS[fn],
      onError: (error) => options.onHandlerError?.(key, error),
    });
  const sources = {
    turn: source('turn', signal, 'signal'),
    reflection: source('reflection', reflector, 'reflector'),
    idle: source('idle', idle, 'idle'),
  };
  for (const s of Object.values(sources)) s.start();

  const info: StackInfo = {
    stage,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: { dynamodb: emulators.dynamodb, sqs: emulators.sqs, s3: emulators.s3, bedrock: emulators.bedrock },
    tableName: resources.tableName,
    bucketName: resources.bucketName,
    queues: resources.queues,
    modelId: OFFLINE_MODEL_ID,
    modelLabel: 'offline model (rule-based reflector, not an LLM)',
    startedAt: new Date().toISOString(),
    drained: false,
  };
  const publisher = new TurnPublisher(sqs, resources.queues.turn.url, { s3, bucketName: resources.bucketName });
  const refusedLines: ReplayResult['refused'] = [];
  const runId = randomUUID().slice(0, 8);
  let lineCounter = 0;

  const queueDepth = async (url: string): Promise<number> => {
    const res = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    const a = res.Attributes ?? {};
    return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
  };

  const scanAll = async (filter: string, values: Record<string, unknown>): Promise<Array<Record<string, unknown>>> => {
    const items: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await ddb.send(
        new ScanCommand({ TableName: resources.tableName, FilterExpression: filter, ExpressionAttributeValues: values, ExclusiveStartKey: start }),
      );
      items.push(...(res.Items ?? []));
      start = res.LastEvaluatedKey;
    } while (start);
    return items;
  };

  const listKeys = (prefix: string) => listAllKeys(s3, resources.bucketName, prefix);

  return {
    info,
    emulators,
    sources,
    publisher,

    /**
     * Publish JSONL lines as they are, each as its own publication (deduplication id per
     * line), so republished events reach the signal function and its own idempotency is
     * what keeps them from counting twice. Blank lines are skipped; astral characters are
     * JSON-escaped as the publisher client does (see sqsSafeJson).
     */
    async replayLines(lines) {
      const messages: Array<RawMessage & { line: number }> = [];
      lines.forEach((text, i) => {
        if (text.trim() === '') return;
        let group = '_unparsed';
        try {
          const value = JSON.parse(text) as { userId?: unknown };
          if (UserIdSchema.safeParse(value.userId).success) group = String(value.userId);
        } catch {
          // stays in the _unparsed group; the signal function rejects and keeps it
        }
        lineCounter += 1;
        messages.push({ body: sqsSafeJson(text), groupId: group, deduplicationId: `replay-${runId}-${lineCounter}`, line: i + 1 });
      });
      const res = await publisher.publishRaw(messages);
      const refused = res.failed.map((f) => ({ line: messages[f.index]?.line ?? -1, reason: `${f.code}: ${f.message}` }));
      refusedLines.push(...refused);
      return { lines: messages.length, published: res.sent, refused };
    },

    async waitUntilDrained({ timeoutMs = 10 * 60_000, onTick } = {}) {
      const deadline = Date.now() + timeoutMs;
      let quietChecks = 0;
      while (quietChecks < 2) {
        if (Date.now() > deadline) throw new Error(`queues did not drain within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 250));
        await onTick?.();
        const keys: QueueKey[] = ['turn', 'reflection', 'idle'];
        const depths = await Promise.all(keys.map((k) => queueDepth(resources.queues[k].url)));
        const busy = Object.values(sources).some((s) => s.busy);
        quietChecks = depths.every((d) => d === 0) && !busy ? quietChecks + 1 : 0;
      }
      info.drained = true;
    },

    async summary() {
      const [turnItems, signalItems, batchItems, reflectionItems, rejectedKeys, userKeys, dlqDepths] = await Promise.all([
        scanAll('begins_with(sk, :p)', { ':p': 'TURN#' }),
        scanAll('sk = :s', { ':s': 'SIGNAL' }),
        scanAll('begins_with(sk, :p)', { ':p': 'BATCH#' }),
        scanAll('begins_with(sk, :p)', { ':p': 'REFLECTION#' }),
        listKeys('rejected/'),
        listKeys('users/'),
        Promise.all(Object.values(resources.queues).map((q) => queueDepth(q.dlqUrl))),
      ]);
      const counters = signalItems.map((i) => (i.state as { counters?: Record<string, number> } | undefined)?.counters ?? {});
      const sum = (k: string) => counters.reduce((n, c) => n + (c[k] ?? 0), 0);
      return {
        turns: turnItems.length,
        duplicates: sum('duplicates'),
        late: sum('late'),
        rejected: rejectedKeys.length + refusedLines.length,
        batches: batchItems.length,
        batchesAborted: batchItems.filter((b) => b.status === 'aborted').length,
        gateRejections: batchItems.reduce((n, b) => n + Number(b.rejections ?? 0), 0),
        staged: userKeys.filter((k) => k.includes('/Knowledge_staging/')).length,
        promoted: userKeys.filter((k) => k.includes('/Knowledge/')).length,
        errors: dlqDepths.reduce((a, b) => a + b, 0),
        handlerErrors: Object.values(sources).reduce((n, src) => n + src.stats.handlerErrors, 0),
        modelCalls: emulators.converse.requests.length,
        summaryJobs: sum('summariesTriggered'),
        summaries: reflectionItems.length,
        deferred: userKeys.filter((k) => k.includes('/Logs/reflector/deferred/')).length,
      };
    },

    async stop() {
      await Promise.all(Object.values(sources).map((s) => s.stop()));
      sqs.destroy();
      s3.destroy();
      ddb.destroy();
      await emulators.stop();
    },
  };
}
