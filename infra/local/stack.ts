/**
 * The local stack: emulators + the same resources as the CDK app + the very same
 * handler modules driven by local event sources. One stack per process (handler modules
 * read their settings once, at import, as they do in Lambda).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type RawMessage, sqsSafeJson, TurnPublisher } from '../../lib/adapters/sqs-turn-publisher.js';
import { UserIdSchema } from '../../events/common.js';
import { defaultSignalConfig } from '../../lib/domain/signal-weights.js';
import { fireTimesBetween } from '../../lib/domain/sleep-time/schedule.js';
import { stageConfig } from '../config/stages.js';
import type { FunctionKey, Permissions } from '../permissions.js';
import { FUNCTION_TIMEOUT_SECONDS, names, QUEUES, type QueueKey, SWEEPS } from '../resources.js';
import { createSqsClient } from '../../lib/adapters/aws-clients.js';
import { eventSourceClient } from './clients.js';
import { configureFaults, faultCounts, type FaultConfig, type FaultKind, withDelivery } from './fault-injection.js';
import { buildLocalFunctions, functionEnvironment, type LocalFunctions } from './functions.js';
import { IamEnforcer } from './iam/iam-enforcement.js';
import { type SynthesizedStage, synthesizeStage } from './iam/synthesized-stage.js';
import type { LocalEnvironment } from './iam/template-resolver.js';
import { lambdaContext } from './lambda-context.js';
import type { Responder } from './converse-server.js';
import { type Emulators, LOCAL_CREDENTIALS, LOCAL_REGION, startEmulators } from './emulators.js';
import { type InvocationObserver, LocalEventSource, type SqsHandler } from './event-source.js';
import { LOCAL_ACCOUNT, type LocalResources, provision } from './provision.js';
import { SimulatedClock } from './simulated-clock.js';
import { listAllKeys } from '../../lib/adapters/s3-objects.js';
import { dumpUserState, type UserStateDump } from './state-dump.js';
import { type HttpHandler, type LocalHttpApi, startHttpApi } from './http-api.js';
import { mintToken } from './tokens.js';

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
  /** The memory API and review console (`{apiUrl}/console`). */
  apiUrl: string;
  /** A dev credential that may act on every user (group memory-admin). */
  adminToken: string;
  /** The secret local tokens are signed with: `npm run token` mints user-scoped ones with it. */
  tokenSecret: string;
  /** Each function's environment on this stack (the synthesized one with the local overrides): tools build handlers from it. */
  environments: Record<FunctionKey, Record<string, string>>;
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
  /** Findings of the nightly reflection stored as Knowledge (`Knowledge/Reflections/`). */
  findings: number;
  errors: number;
  handlerErrors: number;
  modelCalls: number;
  /** Summary jobs (idle, session close) fired by the signal state. */
  summaryJobs: number;
  /** Summaries written as turn pairs (seed 003). */
  summaries: number;
  /** Sleep-time runs recorded in the reflection log (seed 001), and sweeps fired by the schedules. */
  nightly: number;
  weekly: number;
  sweepsFired: number;
  /** Faults injected (`--faults`), by kind; all zero without. */
  faults: Record<FaultKind, number>;
  /** AWS requests the handlers made that were evaluated against their functions' synthesized IAM policies, and how many were denied. */
  iamChecked: number;
  iamDenied: number;
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
  /** The five functions as built by their handler factories (with local clients and the simulated clock). */
  handlers: LocalFunctions;
  /** The stage as `cdk synth` produced it, resolved to local names. */
  synthesized: SynthesizedStage;
  /** The IAM check every request goes through (null when turned off). */
  iam: IamEnforcer | null;
  publisher: TurnPublisher;
  api: LocalHttpApi;
  /** A credential for these users only (not an administrator). */
  mintUserToken(users: readonly string[], subject?: string): Promise<string>;
  /**
   * Publish JSONL lines. With `clock`, the simulated clock follows the events' timestamps:
   * each session is published and settled (idle checks included) before the clock moves
   * on, and every schedule the clock passes fires its sweep, as production would have.
   */
  replayLines(lines: readonly string[], options?: { clock?: boolean }): Promise<ReplayResult>;
  waitUntilDrained(options?: { timeoutMs?: number; onTick?: () => void | Promise<void> }): Promise<void>;
  /** The simulated clock the handlers read (the wall clock until a clocked replay moves it). */
  now(): Date;
  /** Move the simulated clock forward, firing (in order) every sweep scheduled on the way. */
  advanceTo(time: Date): Promise<Array<{ sweep: string; at: string }>>;
  summary(): Promise<Summary>;
  /** Every item of the table, every page of the scan (for assertions that nothing holds a value). */
  scanItems(): Promise<Array<Record<string, unknown>>>;
  /** The canonical state of every user the table knows (see state-dump.ts), sorted by user. */
  dumpState(): Promise<UserStateDump[]>;
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
  /** Port of the local HTTP API. @default a free one */
  apiPort?: number;
  /** Told of every handler invocation (SQS sources, sweeps, API requests): benchmarks time them. */
  observe?: InvocationObserver;
  /** Inject faults into the handlers' AWS and model calls (infra/local/fault-injection.ts). */
  faults?: FaultConfig;
  /**
   * IAM enforced from the synthesized stage (infra/local/iam/). @default { enforce: true }
   * `permissions` synthesizes the stage with other grants than infra/permissions.ts.
   */
  iam?: { enforce?: boolean; permissions?: Record<FunctionKey, Permissions> };
}

/** The local account, region and queue URLs the synthesized templates resolve to. */
function localEnvironment(stage: string, resources: LocalResources): LocalEnvironment {
  const n = names(stage);
  const urls = new Map<string, string>();
  for (const [key, q] of Object.entries(resources.queues) as Array<[QueueKey, LocalResources['queues'][QueueKey]]>) {
    urls.set(n.queue(QUEUES[key]), q.url);
    urls.set(n.dlq(QUEUES[key]), q.dlqUrl);
  }
  return {
    account: LOCAL_ACCOUNT,
    region: LOCAL_REGION,
    partition: 'aws',
    queueUrl: (name) => urls.get(name) ?? `https://sqs.${LOCAL_REGION}.amazonaws.com/${LOCAL_ACCOUNT}/${name}`,
  };
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stage = options.stage ?? 'local';
  configureFaults(options.faults ?? null);
  const emulators = await startEmulators(options.responder ? { responder: options.responder } : {});
  let resources: LocalResources;
  try {
    resources = await provision(stage, emulators);
  } catch (error) {
    await emulators.stop();
    throw error;
  }

  // The SDK's settings for every client in this process: the emulators' endpoints, local
  // credentials and region. The functions' own settings come from the synthesized stage.
  Object.assign(process.env, {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodb,
    AWS_ENDPOINT_URL_SQS: emulators.sqs,
    AWS_ENDPOINT_URL_S3: emulators.s3,
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: emulators.bedrock,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: options.logLevel ?? 'WARN',
    POWERTOOLS_METRICS_DISABLED: options.metrics ? 'false' : 'true',
  });
  delete process.env.AWS_PROFILE;

  let synthesized: SynthesizedStage;
  try {
    synthesized = await synthesizeStage({ stage, env: localEnvironment(stage, resources), ...(options.iam?.permissions ? { permissions: options.iam.permissions } : {}) });
  } catch (error) {
    await emulators.stop();
    throw error;
  }
  const iam = options.iam?.enforce === false ? null : new IamEnforcer(synthesized);
  const clock = new SimulatedClock();
  const overrides = { speed: options.speed ?? 60 };
  const handlers = buildLocalFunctions(synthesized, clock, iam, overrides);

  const common = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const sqs = new SQSClient({ ...common, endpoint: emulators.sqs });
  const s3 = new S3Client({ ...common, endpoint: emulators.s3, forcePathStyle: true });
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...common, endpoint: emulators.dynamodb }));

  // The stack's own SQS client (not a function's): renews running batches' visibility (event-source.ts).
  const stackSqs = createSqsClient();
  const source = (key: QueueKey, handler: SqsHandler, fn: 'signal' | 'reflector' | 'idle') =>
    new LocalEventSource({
      name: key,
      sqs: eventSourceClient(fn, iam),
      queueUrl: resources.queues[key].url,
      queueArn: resources.queues[key].arn,
      region: LOCAL_REGION,
      handler,
      functionName: synthesized.functions[fn].functionName,
      timeoutSeconds: FUNCTION_TIMEOUT_SECONDS[fn],
      // As the synthesized event source mapping says: its batch size, its maximum concurrency.
      batchSize: synthesized.functions[fn].eventSource?.batchSize ?? 10,
      ...(synthesized.functions[fn].eventSource?.maxConcurrency !== undefined ? { concurrency: synthesized.functions[fn].eventSource?.maxConcurrency } : {}),
      onError: (error) => options.onHandlerError?.(key, error),
      fn,
      keepInvisible: { sqs: stackSqs, seconds: QUEUES[key].localVisibilityTimeoutSeconds },
      ...(options.observe ? { observe: options.observe } : {}),
    });
  const sources = {
    turn: source('turn', handlers.signal, 'signal'),
    reflection: source('reflection', handlers.reflector, 'reflector'),
    idle: source('idle', handlers.idle, 'idle'),
  };
  for (const s of Object.values(sources)) s.start();

  const tokenSecret = randomBytes(32).toString('base64url');
  const api = await startHttpApi({
    handler: handlers.api as HttpHandler,
    tokenSecret,
    functionName: synthesized.functions.api.functionName,
    timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.api,
    ...(options.apiPort !== undefined ? { port: options.apiPort } : {}),
    ...(options.observe ? { observe: options.observe } : {}),
  });

  const info: StackInfo = {
    stage,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: { dynamodb: emulators.dynamodb, sqs: emulators.sqs, s3: emulators.s3, bedrock: emulators.bedrock },
    tableName: resources.tableName,
    bucketName: resources.bucketName,
    queues: resources.queues,
    modelId: synthesized.functions.reflector.environment.MODEL_ID ?? '',
    modelLabel: 'offline model (rule-based reflector, not an LLM), answering for the stage model',
    startedAt: new Date().toISOString(),
    drained: false,
    apiUrl: api.url,
    adminToken: await mintToken(tokenSecret, { sub: 'local-admin', admin: true }, 30 * 86_400),
    tokenSecret,
    environments: Object.fromEntries((Object.keys(synthesized.functions) as FunctionKey[]).map((fn) => [fn, functionEnvironment(synthesized, fn, overrides)])) as StackInfo['environments'],
  };
  const publisher = new TurnPublisher(sqs, resources.queues.turn.url, { s3, bucketName: resources.bucketName });
  const refusedLines: ReplayResult['refused'] = [];
  const schedules = stageConfig('dev').schedules;
  /** A gap between events longer than the idle threshold (in event time) ends a session. */
  const sessionGapMs = defaultSignalConfig.idleMinutes * 60_000;
  let simNow = new Date();
  /** Something was published or enqueued since the queues were last seen empty. */
  let dirty = false;
  const fired: Array<{ sweep: string; at: string }> = [];
  let sweepErrors = 0;
  const setClock = (t: Date) => {
    simNow = t;
    clock.set(t);
  };
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

  const scanAll = async (filter?: string, values?: Record<string, unknown>): Promise<Array<Record<string, unknown>>> => {
    const items: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await ddb.send(
        new ScanCommand({ TableName: resources.tableName, ...(filter ? { FilterExpression: filter, ExpressionAttributeValues: values } : {}), ExclusiveStartKey: start }),
      );
      items.push(...(res.Items ?? []));
      start = res.LastEvaluatedKey;
    } while (start);
    return items;
  };

  const listKeys = (prefix: string) => listAllKeys(s3, resources.bucketName, prefix);

  const waitUntilDrained: LocalStack['waitUntilDrained'] = async ({ timeoutMs = 10 * 60_000, onTick } = {}) => {
    const deadline = Date.now() + timeoutMs;
    let quietChecks = 0;
    while (quietChecks < 2) {
      if (Date.now() > deadline) throw new Error(`queues did not drain within ${timeoutMs} ms`);
      if (quietChecks > 0) await new Promise((r) => setTimeout(r, 100));
      await onTick?.();
      const keys: QueueKey[] = ['turn', 'reflection', 'idle'];
      const depths = await Promise.all(keys.map((k) => queueDepth(resources.queues[k].url)));
      const busy = Object.values(sources).some((s) => s.busy);
      if (depths.every((d) => d === 0) && !busy) quietChecks += 1;
      else {
        quietChecks = 0;
        await new Promise((r) => setTimeout(r, 150));
      }
    }
    info.drained = true;
    dirty = false;
  };

  const advanceTo = async (time: Date): Promise<Array<{ sweep: string; at: string }>> => {
    if (time.getTime() <= simNow.getTime()) return [];
    const due = SWEEPS.flatMap((name) => fireTimesBetween(schedules[name], simNow, time).map((at) => ({ sweep: name, at })))
      .sort((a, b) => a.at.getTime() - b.at.getTime());
    const done: Array<{ sweep: string; at: string }> = [];
    for (const { sweep: name, at } of due) {
      setClock(at);
      if (dirty) await waitUntilDrained();
      // EventBridge invokes the sweep asynchronously: Lambda retries a failed invocation
      // twice, so the local stack does too (injected faults strike the first try only).
      let result: { jobs: string[] } | null = null;
      for (let attempt = 1; attempt <= 3 && result === null; attempt++) {
        const started = performance.now();
        const outcome = await withDelivery(attempt === 1, () =>
          handlers.sweep({ sweep: name, time: at.toISOString() }, lambdaContext(synthesized.functions.sweep.functionName, FUNCTION_TIMEOUT_SECONDS.sweep)),
        );
        options.observe?.({ fn: 'sweep', ms: performance.now() - started, records: [], finishedAt: Date.now() });
        if (outcome.ok && !outcome.died) result = outcome.result;
        else {
          sweepErrors += 1;
          options.onHandlerError?.('sweep', outcome.ok ? new Error(`the ${name} sweep died part-way (injected fault); retried`) : outcome.error);
          if (attempt === 3) throw outcome.ok ? new Error(`the ${name} sweep at ${at.toISOString()} failed three times`) : outcome.error;
        }
      }
      if (result && result.jobs.length > 0) dirty = true;
      done.push({ sweep: name, at: at.toISOString() });
    }
    setClock(time);
    fired.push(...done);
    return done;
  };

  return {
    info,
    emulators,
    sources,
    handlers,
    synthesized,
    iam,
    publisher,
    api,
    mintUserToken: (users, subject) => mintToken(tokenSecret, { sub: subject ?? `local-${users.join('+')}`, users }),
    now: () => simNow,
    advanceTo,
    waitUntilDrained,

    /**
     * Publish JSONL lines as they are, each as its own publication (deduplication id per
     * line), so republished events reach the signal function and its own idempotency is
     * what keeps them from counting twice. Blank lines are skipped; astral characters are
     * JSON-escaped as the publisher client does (see sqsSafeJson).
     */
    async replayLines(lines, { clock = false } = {}) {
      const messages: Array<RawMessage & { line: number; at: number | null }> = [];
      lines.forEach((text, i) => {
        if (text.trim() === '') return;
        let group = '_unparsed';
        let at: number | null = null;
        try {
          const value = JSON.parse(text) as { userId?: unknown; timestamp?: unknown };
          if (UserIdSchema.safeParse(value.userId).success) group = String(value.userId);
          const t = typeof value.timestamp === 'string' ? Date.parse(value.timestamp) : Number.NaN;
          if (Number.isFinite(t)) at = t;
        } catch {
          // stays in the _unparsed group; the signal function rejects and keeps it
        }
        lineCounter += 1;
        messages.push({ body: sqsSafeJson(text), groupId: group, deduplicationId: `replay-${runId}-${lineCounter}`, line: i + 1, at });
      });
      const result: ReplayResult = { lines: messages.length, published: 0, refused: [] };
      const publish = async (batch: typeof messages) => {
        if (batch.length === 0) return;
        dirty = true;
        const res = await publisher.publishRaw(batch);
        result.published += res.sent;
        result.refused.push(...res.failed.map((f) => ({ line: batch[f.index]?.line ?? -1, reason: `${f.code}: ${f.message}` })));
      };
      if (!clock) await publish(messages);
      else {
        const first = messages.find((m) => m.at !== null)?.at;
        if (first !== undefined && first !== null) setClock(new Date(first));
        let pending: typeof messages = [];
        for (const m of messages) {
          // A pause longer than the idle threshold ends a session: let it settle (idle
          // summaries included) before the clock moves on and fires what it passes.
          if (m.at !== null && m.at - simNow.getTime() > sessionGapMs && pending.length > 0) {
            await publish(pending);
            pending = [];
            await waitUntilDrained();
          }
          if (m.at !== null && m.at > simNow.getTime()) await advanceTo(new Date(m.at));
          pending.push(m);
        }
        await publish(pending);
      }
      refusedLines.push(...result.refused);
      return result;
    },

    scanItems: () => scanAll(),

    async summary() {
      const [turnItems, signalItems, batchItems, reflectionItems, runItems, rejectedKeys, userKeys, dlqDepths] = await Promise.all([
        scanAll('begins_with(sk, :p)', { ':p': 'TURN#' }),
        scanAll('sk = :s', { ':s': 'SIGNAL' }),
        scanAll('begins_with(sk, :p)', { ':p': 'BATCH#' }),
        scanAll('begins_with(sk, :p)', { ':p': 'REFLECTION#' }),
        scanAll('begins_with(sk, :p)', { ':p': 'RUN#' }),
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
        promoted: userKeys.filter((k) => k.includes('/Knowledge/') && !k.includes('/Knowledge/Reflections/')).length,
        findings: userKeys.filter((k) => k.includes('/Knowledge/Reflections/')).length,
        errors: dlqDepths.reduce((a, b) => a + b, 0),
        handlerErrors: Object.values(sources).reduce((n, src) => n + src.stats.handlerErrors, 0) + sweepErrors,
        modelCalls: emulators.converse.requests.length,
        summaryJobs: sum('summariesTriggered'),
        summaries: reflectionItems.length,
        nightly: runItems.filter((r) => String(r.sk).startsWith('RUN#nightly#')).length,
        weekly: runItems.filter((r) => String(r.sk).startsWith('RUN#weekly#')).length,
        sweepsFired: fired.length,
        faults: faultCounts(),
        iamChecked: iam?.stats.checked ?? 0,
        iamDenied: iam?.stats.denied ?? 0,
      };
    },

    async dumpState() {
      const users = [...new Set((await scanAll('begins_with(pk, :p)', { ':p': 'USER#' })).map((i) => String(i.pk).slice('USER#'.length)))].sort();
      const dumps: UserStateDump[] = [];
      for (const userId of users) dumps.push(await dumpUserState({ ddb, s3 }, resources, userId));
      return dumps;
    },

    async stop() {
      configureFaults(null);
      await Promise.all(Object.values(sources).map((s) => s.stop()));
      await api.stop();
      sqs.destroy();
      s3.destroy();
      ddb.destroy();
      await emulators.stop();
    },
  };
}
