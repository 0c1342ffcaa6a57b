/**
 * The local harness: emulators + the same resources as the CDK app + the very same
 * handler modules driven by local event sources. One stack per process (handler modules
 * read their settings once, at import, as they do in Lambda).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { type RawMessage, sqsSafeJson, SqsTurnPublisher } from '../../lib/turns/sqs-turn-publisher.adapter.js';
import { UserIdSchema } from '../../events/common.js';
import { defaultSignalConfig } from '../../lib/signals/signal-weights.js';
import { storedState } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { fireTimesBetween } from '../../lib/sleep-time/schedule.js';
import { type StageConfig, stageConfig } from '../config/stages.js';
import type { FunctionKey, Permissions } from '../permissions.js';
import type { RecursiveLoops } from '../stacks/stateless-stack.js';
import { FUNCTION_TIMEOUT_SECONDS, names, QUEUES, type QueueKey, SWEEPS } from '../resources.js';
import { createSqsClient } from '../../lib/kernel/aws-clients.adapter.js';
import { eventSourceClient, functionSetVisibility } from './clients.js';
import { configureFaults, faultCounts, type FaultConfig, type FaultKind, withDelivery } from './fault-injection.js';
import { buildLocalFunctions, functionEnvironment, type LocalFunctions, type LocalOverrides } from './functions.js';
import { IamEnforcer } from './iam/iam-enforcement.js';
import { type SynthesizedStage, synthesizeStage } from './iam/synthesized-stage.js';
import type { LocalEnvironment } from './iam/template-resolver.js';
import { lambdaContext } from './lambda-context.js';
import { offlineResponder, type Responder } from './converse-server.js';
import { type BatchInferenceStandIn, createBatchInferenceStandIn } from './batch-inference-stand-in.js';
import type { Completion } from '../../lib/batch-inference/sleep-time-batch.js';
import type { SweepResult } from '../../lib/jobs/sweeps.js';
import { type MessKind, type MessyModel, messyModel, noMesses } from './messy-model.js';
import { type Emulators, LOCAL_REGION, startEmulators } from './emulators.js';
import { type InvocationObserver, LocalEventSource, type SqsHandler } from './event-source.js';
import { LOCAL_ACCOUNT, type LocalResources, provision } from './provision.js';
import { SimulatedClock } from './simulated-clock.js';
import { isLive, type MemoryItem } from '../../lib/items/memory-item.js';
import { listAllKeys } from '../../lib/kernel/s3-objects.adapter.js';
import { dumpUserState, type UserStateDump } from './state-dump.js';
import { type HttpHandler, type LocalHttpApi, startHttpApi } from './http-api.js';
import { mintToken } from './tokens.js';
import { keys, rejectedPrefix, usersRoot } from '../../lib/kernel/memory-paths.js';

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

export interface RunReport {
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
  /**
   * Live tier entries (`mem:` items, any tier, GLOBAL copies included): a replay writes them only
   * through reflection (req R-TIER-11: staged and recurring items enter the short-term tier).
   */
  tierEntries: number;
  /** Findings of the nightly reflection stored as Knowledge (`Knowledge/Reflections/`). */
  findings: number;
  errors: number;
  handlerErrors: number;
  modelCalls: number;
  /** Summary jobs (idle, session close) fired by the signal state. */
  summaryJobs: number;
  /** Summaries written as turn pairs (req R-SUM-5). */
  summaries: number;
  /** Sleep-time runs recorded in the sleep-time run log (req R-SLP), and sweeps fired by the schedules. */
  nightly: number;
  weekly: number;
  sweepsFired: number;
  /** Faults injected (`--faults`), by kind; all zero without. */
  faults: Record<FaultKind, number>;
  /** Structured answers the messy model (`--messy-model`, infra/local/messy-model.ts) wrote as real models get them wrong; 0 without. */
  messyAnswers: number;
  /** The same, by kind. */
  messyKinds: Record<MessKind, number>;
  /** AWS requests the handlers made that were evaluated against their functions' synthesized IAM policies, and how many were denied. */
  iamChecked: number;
  iamDenied: number;
}

export interface ReplayResult {
  lines: number;
  published: number;
  /** Lines SQS itself refused (e.g. characters it does not accept); kept in the run report's `rejected`. */
  refused: Array<{ line: number; reason: string }>;
}

export interface LocalHarness {
  info: StackInfo;
  emulators: Emulators;
  sources: Record<QueueKey, LocalEventSource>;
  /** The five functions as built by their handler factories (with local clients and the simulated clock). */
  handlers: LocalFunctions;
  /** The stage as `cdk synth` produced it, resolved to local names. */
  synthesized: SynthesizedStage;
  /** The IAM check every request goes through (null when turned off). */
  iam: IamEnforcer | null;
  /** Bedrock batch inference: the sweep's jobs, run when a sweep has fired (batch-inference-stand-in.ts). */
  batchInference: BatchInferenceStandIn;
  publisher: SqsTurnPublisher;
  api: LocalHttpApi;
  /** A credential for these users only (not an administrator). */
  mintUserToken(users: readonly string[], subject?: string): Promise<string>;
  /**
   * Publish JSONL lines. With `clock`, the simulated clock follows the events' timestamps:
   * each session is published and settled (idle checks included) before the clock moves
   * on, and every schedule the clock passes fires its sweep, whose jobs settle before the
   * clock moves on again, as production would have.
   */
  replayLines(lines: readonly string[], options?: { clock?: boolean }): Promise<ReplayResult>;
  waitUntilDrained(options?: { timeoutMs?: number; onTick?: () => void | Promise<void> }): Promise<void>;
  /** The simulated clock the handlers read (the wall clock until a clocked replay moves it). */
  now(): Date;
  /** Move the simulated clock forward, firing (in order) every sweep scheduled on the way; their jobs settle before it reaches `time`. */
  advanceTo(time: Date): Promise<Array<{ sweep: string; at: string }>>;
  report(): Promise<RunReport>;
  /** Every item of the table, every page of the scan (for assertions that nothing holds a value). */
  scanItems(): Promise<Array<Record<string, unknown>>>;
  /** The canonical state of every user the table knows (see state-dump.ts), sorted by user. */
  dumpState(): Promise<UserStateDump[]>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  stage?: string;
  /** The stage's settings, as a deployment would take them from infra/config/stages.ts. @default stageConfig(stage) */
  config?: StageConfig;
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
  /** Mess up `rate` (0–1) of the model's structured answers as real models do (infra/local/messy-model.ts); `seed` picks which. */
  messyModel?: { rate: number; seed?: number };
  /**
   * IAM enforced from the synthesized stage (infra/local/iam/). @default { enforce: true }
   * `permissions` synthesizes the stage with other grants than infra/permissions.ts.
   */
  iam?: { enforce?: boolean; permissions?: Record<FunctionKey, Permissions> };
  /**
   * Timeouts (seconds) of the SQS-driven functions other than the stage's (infra/resources.ts
   * FUNCTION_TIMEOUT_SECONDS): what their context reports and when the local harness ends them.
   * For tests of what a function does as its time runs out.
   */
  timeouts?: Partial<Record<SqsFunction, number>>;
  /** Variables set on a function's environment over the synthesized ones (parsed by its own schema). */
  environment?: Partial<Record<FunctionKey, Record<string, string>>>;
  /** Synthesize the stage with these RecursiveLoop settings instead of the stack's (a test shows what Lambda's default does). */
  recursiveLoops?: RecursiveLoops;
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

/** The SDK's settings for every client in this process: the emulators' endpoints, local credentials and region. */
function useEmulators(emulators: Emulators, options: HarnessOptions): void {
  // The functions' own settings come from the synthesized stage.
  Object.assign(process.env, {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: emulators.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: emulators.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodb,
    AWS_ENDPOINT_URL_SQS: emulators.sqs,
    AWS_ENDPOINT_URL_S3: emulators.s3,
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: emulators.bedrock,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: options.logLevel ?? 'WARN',
    POWERTOOLS_METRICS_DISABLED: options.metrics ? 'false' : 'true',
  });
  delete process.env.AWS_PROFILE;
}

/** The emulators, the resources provisioned in them and the stage synthesized against them (the emulators stop if either fails). */
async function startInfrastructure(
  stage: string,
  options: HarnessOptions,
): Promise<{ emulators: Emulators; resources: LocalResources; synthesized: SynthesizedStage }> {
  const emulators = await startEmulators(options.responder ? { responder: options.responder } : {});
  try {
    const resources = await provision(stage, emulators);
    useEmulators(emulators, options);
    const synthesized = await synthesizeStage({
      stage,
      env: localEnvironment(stage, resources),
      ...(options.iam?.permissions ? { permissions: options.iam.permissions } : {}),
      ...(options.recursiveLoops ? { recursiveLoops: options.recursiveLoops } : {}),
      ...(options.config ? { config: options.config } : {}),
    });
    return { emulators, resources, synthesized };
  } catch (error) {
    await emulators.stop();
    throw error;
  }
}

export type SqsFunction = 'signal' | 'reflector' | 'idle';

/** The three queues' event sources, started, each invoking its function as the synthesized event source mapping says. */
function startEventSources(
  rt: Pick<Runtime, 'synthesized' | 'resources' | 'handlers' | 'iam' | 'options'>,
): Record<QueueKey, LocalEventSource> {
  const { synthesized, resources, iam, options } = rt;
  // The stack's own SQS client (not a function's): makes failed records visible again after the local timeout (event-source.ts).
  const stackSqs = createSqsClient();
  const source = (key: QueueKey, handler: SqsHandler, fn: SqsFunction, holdWhile?: () => Promise<boolean>) =>
    new LocalEventSource({
      name: key,
      sqs: eventSourceClient(fn, iam),
      queueUrl: resources.queues[key].url,
      queueArn: resources.queues[key].arn,
      region: LOCAL_REGION,
      handler,
      functionName: synthesized.functions[fn].functionName,
      timeoutSeconds: options.timeouts?.[fn] ?? FUNCTION_TIMEOUT_SECONDS[fn],
      // As the synthesized event source mapping says: its batch size, its maximum concurrency.
      batchSize: synthesized.functions[fn].eventSource?.batchSize ?? 10,
      ...(synthesized.functions[fn].eventSource?.maxConcurrency !== undefined
        ? { concurrency: synthesized.functions[fn].eventSource?.maxConcurrency }
        : {}),
      onError: (error) => options.onHandlerError?.(key, error),
      fn,
      keepInvisible: { sqs: stackSqs, seconds: QUEUES[key].localVisibilityTimeoutSeconds, functionSetVisibility },
      // Lambda's recursive loop detection, as the function's synthesized RecursiveLoop says.
      recursion: {
        loop: synthesized.functions[fn].recursiveLoop,
        stopped: { sqs: stackSqs, deadLetterQueueUrl: resources.queues[key].dlqUrl },
      },
      ...(options.observe ? { observe: options.observe } : {}),
      ...(holdWhile ? { holdWhile } : {}),
    });
  const turn = source('turn', rt.handlers.signal, 'signal');
  // Idle checks wait while turns are still queued or being stored. An emulated stack ingests a
  // user's turns one receive at a time (FIFO: one message per group) and stalls for seconds when
  // the machine is loaded, longer than a sped-up idle threshold (1 s at speed 300): a check
  // delivered then would take a pause in ingestion for the user's silence and summarise
  // mid-session. Held, it is delivered later and judges the state the turns left (check-idle.ts).
  const turnsPending = async () => turn.busy || (await queueDepth(stackSqs, resources.queues.turn.url)) > 0;
  const sources = {
    turn,
    job: source('job', rt.handlers.reflector, 'reflector'),
    idle: source('idle', rt.handlers.idle, 'idle', turnsPending),
  };
  for (const s of Object.values(sources)) s.start();
  return sources;
}

/** What a caller needs to reach the stack: endpoints, names, the API and its admin token, each function's environment. */
async function stackInfo(
  stage: string,
  rt: Pick<Runtime, 'emulators' | 'resources' | 'synthesized'>,
  api: LocalHttpApi,
  tokenSecret: string,
  overrides: LocalOverrides,
): Promise<StackInfo> {
  const { emulators, resources, synthesized } = rt;
  return {
    stage,
    region: LOCAL_REGION,
    credentials: emulators.credentials,
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
    environments: Object.fromEntries(
      (Object.keys(synthesized.functions) as FunctionKey[]).map((fn) => [
        fn,
        functionEnvironment(synthesized, fn, overrides),
      ]),
    ) as StackInfo['environments'],
  };
}

/** Everything the stack's operations share: what was started, the stack's own clients, and the simulated time. */
interface Runtime {
  options: HarnessOptions;
  emulators: Emulators;
  resources: LocalResources;
  synthesized: SynthesizedStage;
  iam: IamEnforcer | null;
  /** The messy model wrapped around the responder (null without `messyModel`). */
  messy: MessyModel | null;
  batchInference: BatchInferenceStandIn;
  handlers: LocalFunctions;
  sources: Record<QueueKey, LocalEventSource>;
  info: StackInfo;
  clock: SimulatedClock;
  sqs: SQSClient;
  s3: S3Client;
  ddb: DynamoDBDocumentClient;
  publisher: SqsTurnPublisher;
  schedules: ReturnType<typeof stageConfig>['schedules'];
  state: {
    simNow: Date;
    /** Something was published or enqueued since the queues were last seen empty. */
    dirty: boolean;
    fired: Array<{ sweep: string; at: string }>;
    sweepErrors: number;
    refusedLines: ReplayResult['refused'];
    runId: string;
    lineCounter: number;
  };
}

function setClock(rt: Runtime, t: Date): void {
  rt.state.simNow = t;
  rt.clock.set(t);
}

async function queueDepth(sqs: SQSClient, url: string): Promise<number> {
  const res = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = res.Attributes ?? {};
  return (
    Number(a.ApproximateNumberOfMessages ?? 0) +
    Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

async function scanAll(
  rt: Runtime,
  filter?: string,
  values?: Record<string, unknown>,
): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await rt.ddb.send(
      new ScanCommand({
        TableName: rt.resources.tableName,
        ...(filter ? { FilterExpression: filter, ExpressionAttributeValues: values } : {}),
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Wait until every queue is empty and no source is busy, twice in a row. */
async function waitUntilDrained(
  rt: Runtime,
  { timeoutMs = 10 * 60_000, onTick }: { timeoutMs?: number; onTick?: () => void | Promise<void> } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quietChecks = 0;
  while (quietChecks < 2) {
    if (Date.now() > deadline) throw new Error(`queues did not drain within ${timeoutMs} ms`);
    if (quietChecks > 0) await new Promise((r) => setTimeout(r, 100));
    await onTick?.();
    const queues: QueueKey[] = ['turn', 'job', 'idle'];
    const depths = await Promise.all(queues.map((k) => queueDepth(rt.sqs, rt.resources.queues[k].url)));
    const busy = Object.values(rt.sources).some((s) => s.busy);
    if (depths.every((d) => d === 0) && !busy) quietChecks += 1;
    else {
      quietChecks = 0;
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  rt.info.drained = true;
  rt.state.dirty = false;
}

/**
 * EventBridge invokes the sweep asynchronously (a schedule's event, or Bedrock's batch inference
 * job state change): Lambda retries a failed invocation twice, so the local harness does too
 * (injected faults strike the first try only).
 */
async function invokeSweep(rt: Runtime, name: string, event: unknown): Promise<SweepResult | Completion> {
  const { options, synthesized } = rt;
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const outcome = await withDelivery(attempt === 1, () =>
      rt.handlers.sweep(event, lambdaContext(synthesized.functions.sweep.functionName, FUNCTION_TIMEOUT_SECONDS.sweep)),
    );
    options.observe?.({ fn: 'sweep', ms: performance.now() - started, records: [], finishedAt: Date.now() });
    if (outcome.ok && !outcome.died) return outcome.result;
    rt.state.sweepErrors += 1;
    options.onHandlerError?.(
      'sweep',
      outcome.ok ? new Error(`the ${name} sweep died part-way (injected fault); retried`) : outcome.error,
    );
    if (attempt === 3) throw outcome.ok ? new Error(`the ${name} sweep failed three times`) : outcome.error;
  }
}

/** A scheduled sweep, then the batch inference job it may have started, run by Bedrock and its end delivered. */
async function fireSweep(rt: Runtime, name: (typeof SWEEPS)[number], at: Date): Promise<boolean> {
  const result = await invokeSweep(rt, name, { sweep: name, time: at.toISOString() });
  let enqueued = 'jobs' in result ? result.jobs.length : 0;
  // EventBridge delivers each job's state change to the sweep function (its completion enqueues the runs again).
  for (const change of await rt.batchInference.run()) {
    const done = await invokeSweep(rt, `${name} batch inference`, change);
    enqueued += 'enqueued' in done ? done.enqueued : 0;
  }
  return enqueued > 0;
}

/** Move the simulated clock forward, firing (in order) every sweep scheduled on the way. */
async function advanceTo(rt: Runtime, time: Date): Promise<Array<{ sweep: string; at: string }>> {
  const { state } = rt;
  if (time.getTime() <= state.simNow.getTime()) return [];
  const due = SWEEPS.flatMap((name) =>
    fireTimesBetween(rt.schedules[name], state.simNow, time).map((at) => ({ sweep: name, at })),
  ).sort((a, b) => a.at.getTime() - b.at.getTime());
  const done: Array<{ sweep: string; at: string }> = [];
  for (const { sweep: name, at } of due) {
    setClock(rt, at);
    if (state.dirty) await waitUntilDrained(rt);
    if (await fireSweep(rt, name, at)) state.dirty = true;
    done.push({ sweep: name, at: at.toISOString() });
  }
  // The jobs the sweeps fired run on their schedule's clock and are done before the clock moves
  // on (a nightly run is long over when the morning's session begins), not while the next session is ingested.
  if (done.length > 0 && state.dirty) await waitUntilDrained(rt);
  setClock(rt, time);
  state.fired.push(...done);
  return done;
}

type ReplayMessage = RawMessage & { line: number; at: number | null };

/** One publication per non-blank line, grouped by its user (or `_unparsed`), with the event's time when it has one. */
function replayMessages(rt: Runtime, lines: readonly string[]): ReplayMessage[] {
  const messages: ReplayMessage[] = [];
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
    rt.state.lineCounter += 1;
    messages.push({
      body: sqsSafeJson(text),
      groupId: group,
      deduplicationId: `replay-${rt.state.runId}-${rt.state.lineCounter}`,
      line: i + 1,
      at,
    });
  });
  return messages;
}

async function publish(rt: Runtime, batch: readonly ReplayMessage[], result: ReplayResult): Promise<void> {
  if (batch.length === 0) return;
  rt.state.dirty = true;
  const res = await rt.publisher.publishRaw([...batch]);
  result.published += res.sent;
  result.refused.push(
    ...res.failed.map((f) => ({ line: batch[f.index]?.line ?? -1, reason: `${f.code}: ${f.message}` })),
  );
}

/** Publish in event time: each session settles before the clock moves on past its idle gap, and the clock fires what it passes. */
async function publishClocked(rt: Runtime, messages: readonly ReplayMessage[], result: ReplayResult): Promise<void> {
  /** A gap between events longer than the idle threshold (in event time) ends a session. */
  const sessionGapMs = defaultSignalConfig.idleMinutes * 60_000;
  const first = messages.find((m) => m.at !== null)?.at;
  if (first !== undefined && first !== null) setClock(rt, new Date(first));
  let pending: ReplayMessage[] = [];
  for (const m of messages) {
    // A pause longer than the idle threshold ends a session: let it settle (idle
    // summaries included) before the clock moves on and fires what it passes.
    if (m.at !== null && m.at - rt.state.simNow.getTime() > sessionGapMs && pending.length > 0) {
      await publish(rt, pending, result);
      pending = [];
      await waitUntilDrained(rt);
    }
    if (m.at !== null && m.at > rt.state.simNow.getTime()) await advanceTo(rt, new Date(m.at));
    pending.push(m);
  }
  await publish(rt, pending, result);
}

/**
 * Publish JSONL lines as they are, each as its own publication (deduplication id per
 * line), so republished events reach the signal function and its own idempotency is
 * what keeps them from counting twice. Blank lines are skipped; astral characters are
 * JSON-escaped as the publisher client does (see sqsSafeJson).
 */
async function replayLines(
  rt: Runtime,
  lines: readonly string[],
  { clock = false }: { clock?: boolean } = {},
): Promise<ReplayResult> {
  const messages = replayMessages(rt, lines);
  const result: ReplayResult = { lines: messages.length, published: 0, refused: [] };
  if (clock) await publishClocked(rt, messages, result);
  else await publish(rt, messages, result);
  rt.state.refusedLines.push(...result.refused);
  return result;
}

/** The run's figures, counted from the table, the bucket, the queues and the sources. */
async function reportOf(rt: Runtime): Promise<RunReport> {
  const listKeys = (prefix: string) => listAllKeys(rt.s3, rt.resources.bucketName, prefix);
  const [
    turnItems,
    signalItems,
    batchItems,
    summaryItems,
    runItems,
    stagedItems,
    memItems,
    rejectedKeys,
    userKeys,
    dlqDepths,
  ] = await Promise.all([
    scanAll(rt, 'begins_with(sk, :p)', { ':p': keys.turnPrefix }),
    scanAll(rt, 'sk = :s', { ':s': 'SIGNAL' }),
    scanAll(rt, 'begins_with(sk, :p)', { ':p': keys.batchPrefix }),
    scanAll(rt, 'begins_with(sk, :p)', { ':p': keys.summaryPrefix }),
    scanAll(rt, 'begins_with(sk, :p)', { ':p': keys.runsPrefix }),
    scanAll(rt, 'begins_with(sk, :p)', { ':p': keys.stagedPrefix }),
    scanAll(rt, 'begins_with(sk, :p)', { ':p': keys.memoryPrefix }),
    listKeys(rejectedPrefix()),
    listKeys(usersRoot),
    Promise.all(Object.values(rt.resources.queues).map((q) => queueDepth(rt.sqs, q.dlqUrl))),
  ]);
  const counters = signalItems.map(
    (i) => (storedState(i) as { counters?: Record<string, number> } | undefined)?.counters ?? {},
  );
  const sum = (k: string) => counters.reduce((n, c) => n + (c[k] ?? 0), 0);
  return {
    turns: turnItems.length,
    duplicates: sum('duplicates'),
    late: sum('late'),
    rejected: rejectedKeys.length + rt.state.refusedLines.length,
    batches: batchItems.length,
    batchesAborted: batchItems.filter((b) => b.status === 'aborted').length,
    gateRejections: batchItems.reduce((n, b) => n + Number(b.rejections ?? 0), 0),
    // Staged and undecided: a staged record (and its markdown under Knowledge_staging/; promotion, discard and expiry settle or delete both).
    staged: stagedItems.filter((i) => i.status === 'staged').length,
    promoted: userKeys.filter((k) => k.includes('/Knowledge/') && !k.includes('/Knowledge/Reflections/')).length,
    tierEntries: memItems.filter((i) => isLive(i.item as MemoryItem, rt.clock.now())).length,
    findings: userKeys.filter((k) => k.includes('/Knowledge/Reflections/')).length,
    errors: dlqDepths.reduce((a, b) => a + b, 0),
    handlerErrors: Object.values(rt.sources).reduce((n, src) => n + src.stats.handlerErrors, 0) + rt.state.sweepErrors,
    modelCalls: rt.emulators.converse.requests.length,
    summaryJobs: sum('summariesTriggered'),
    summaries: summaryItems.length,
    nightly: runItems.filter((r) => String(r.sk).startsWith('RUN#nightly#')).length,
    weekly: runItems.filter((r) => String(r.sk).startsWith('RUN#weekly#')).length,
    sweepsFired: rt.state.fired.length,
    faults: faultCounts(),
    messyAnswers: rt.messy?.total() ?? 0,
    messyKinds: rt.messy?.counts() ?? noMesses(),
    iamChecked: rt.iam?.stats.checked ?? 0,
    iamDenied: rt.iam?.stats.denied ?? 0,
  };
}

async function dumpState(rt: Runtime): Promise<UserStateDump[]> {
  const users = [
    ...new Set(
      (await scanAll(rt, 'begins_with(pk, :p)', { ':p': keys.userPkPrefix })).map((i) =>
        String(i.pk).slice(keys.userPkPrefix.length),
      ),
    ),
  ].sort();
  const dumps: UserStateDump[] = [];
  for (const userId of users) dumps.push(await dumpUserState({ ddb: rt.ddb, s3: rt.s3 }, rt.resources, userId));
  return dumps;
}

async function stopStack(rt: Runtime, api: LocalHttpApi): Promise<void> {
  configureFaults(null);
  await Promise.all(Object.values(rt.sources).map((s) => s.stop()));
  await api.stop();
  rt.sqs.destroy();
  rt.s3.destroy();
  rt.ddb.destroy();
  await rt.emulators.stop();
}

/** The stack's own clients of the emulators (not a function's: those go through the IAM check). */
function stackClients(emulators: Emulators) {
  const common = { region: LOCAL_REGION, credentials: emulators.credentials };
  return {
    sqs: new SQSClient({ ...common, endpoint: emulators.sqs }),
    s3: new S3Client({ ...common, endpoint: emulators.s3, forcePathStyle: true }),
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient({ ...common, endpoint: emulators.dynamodb })),
  };
}

/** The stack's operations over its runtime. */
function localStackOf(rt: Runtime, api: LocalHttpApi, tokenSecret: string): LocalHarness {
  const { info, emulators, sources, handlers, synthesized, iam, publisher, batchInference } = rt;
  return {
    info,
    emulators,
    sources,
    handlers,
    synthesized,
    iam,
    batchInference,
    publisher,
    api,
    mintUserToken: (users, subject) => mintToken(tokenSecret, { sub: subject ?? `local-${users.join('+')}`, users }),
    now: () => rt.state.simNow,
    advanceTo: (time) => advanceTo(rt, time),
    waitUntilDrained: (options) => waitUntilDrained(rt, options),
    replayLines: (lines, options) => replayLines(rt, lines, options),
    scanItems: () => scanAll(rt),
    report: () => reportOf(rt),
    dumpState: () => dumpState(rt),
    stop: () => stopStack(rt, api),
  };
}

export async function startHarness(options: HarnessOptions = {}): Promise<LocalHarness> {
  const stage = options.stage ?? 'local';
  configureFaults(options.faults ?? null);
  const messy = options.messyModel ? messyModel(options.responder ?? offlineResponder, options.messyModel) : null;
  const { emulators, resources, synthesized } = await startInfrastructure(
    stage,
    messy ? { ...options, responder: messy.responder } : options,
  );
  const iam = options.iam?.enforce === false ? null : new IamEnforcer(synthesized);
  const clock = new SimulatedClock();
  const overrides = {
    speed: options.speed ?? 60,
    ...(options.environment ? { environment: options.environment } : {}),
  };
  const clients = stackClients(emulators);
  // Bedrock reads and writes the bucket as its service role, not as a function: the stack's own client.
  const batchInference = createBatchInferenceStandIn({
    s3: clients.s3,
    responder: messy?.responder ?? options.responder ?? offlineResponder,
    region: LOCAL_REGION,
  });
  const handlers = buildLocalFunctions(synthesized, clock, iam, overrides, batchInference.requestHandler);
  const sources = startEventSources({ synthesized, resources, handlers, iam, options });

  const tokenSecret = randomBytes(32).toString('base64url');
  const api = await startHttpApi({
    handler: handlers.api as HttpHandler,
    tokenSecret,
    functionName: synthesized.functions.api.functionName,
    timeoutSeconds: FUNCTION_TIMEOUT_SECONDS.api,
    ...(options.apiPort !== undefined ? { port: options.apiPort } : {}),
    ...(options.observe ? { observe: options.observe } : {}),
  });
  const info = await stackInfo(stage, { emulators, resources, synthesized }, api, tokenSecret, overrides);
  const rt: Runtime = {
    options,
    emulators,
    resources,
    synthesized,
    iam,
    messy,
    batchInference,
    handlers,
    sources,
    info,
    clock,
    ...clients,
    publisher: new SqsTurnPublisher(clients.sqs, resources.queues.turn.url, {
      s3: clients.s3,
      bucketName: resources.bucketName,
    }),
    schedules: (options.config ?? stageConfig('dev')).schedules,
    state: {
      simNow: new Date(),
      dirty: false,
      fired: [],
      sweepErrors: 0,
      refusedLines: [],
      runId: randomUUID().slice(0, 8),
      lineCounter: 0,
    },
  };
  return localStackOf(rt, api, tokenSecret);
}
