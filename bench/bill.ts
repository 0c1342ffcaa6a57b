/**
 * The honest bill: what a stage of this stack costs, every line priced, from what
 * a LoCoMo replay measured (bench/locomo-quality.ts) and what the synthesized stage holds.
 * Three parts: what grows with turns (per 1M turns, a month's holding of what they leave
 * included), what a stage pays standing still (per month, shown apart and spread over 1M and
 * 10M turns a month), and retrieval (per 1M searches). Model tokens are priced at several
 * model choices; AgentCore Memory beside it, like for like.
 *
 * Prices and assumptions live in bench/cost.ts and here, each with its source or named as an
 * assumption; docs/pricing-sources.md has the quotes.
 */
import { SQS_DATA_KEY_REUSE_SECONDS } from '../infra/constructs/memory-queues.js';
import { PERMISSIONS, type FunctionKey } from '../infra/permissions.js';
import type { SynthesizedStage } from '../infra/local/iam/synthesized-stage.js';
import { BATCH_INFERENCE_SCOPE, type LedgerEntry } from '../infra/local/request-ledger.js';
import type { QualityResult } from './locomo-quality.js';
import { type FunctionUse, functionCost, lambdaMs, modelWaitUsd, PRICES, totalOf } from './cost.js';
import { estimateCostUsd } from '../lib/sleep-time/model-prices.js';

/** Prices the bill adds to bench/cost.ts's request prices (us-east-1, on-demand, no free tier). */
export const MORE_PRICES = {
  /** X-Ray: $5.00 per million traces recorded. */
  xrayTrace: 5 / 1e6,
  /** CloudWatch Logs: $0.50 per GB ingested (standard class). */
  logsIngestGb: 0.5,
  /** CloudWatch: $0.30 per custom metric-month (first 10,000), prorated by the hour emitted. */
  metricMonth: 0.3,
  /** CloudWatch: $0.10 per standard-resolution alarm metric-month. */
  alarmMonth: 0.1,
  /** CloudWatch: $3.00 per dashboard-month. */
  dashboardMonth: 3,
  /** KMS: $1 per customer managed key-month, $0.03 per 10,000 requests. */
  kmsKeyMonth: 1,
  /** KMS: each of a key's first two rotations adds $1 a month; later rotations add nothing. */
  kmsRotationMonth: 1,
  kmsRotationsCharged: 2,
  kmsRequest: 0.03 / 10_000,
  /** S3 object tags: $0.0065 per 10,000 tags a month (since March 2025). */
  s3TagMonth: 0.0065 / 10_000,
  /** DynamoDB point-in-time recovery: $0.20 per GB-month of table data (GSIs not counted). */
  pitrGbMonth: 0.2,
  /** CloudWatch Logs storage: $0.03 per GB-month (archived). */
  logsStoredGbMonth: 0.03,
} as const;

/** What the bill assumes where nothing can be measured locally; each is named in BENCHMARKS.md. */
export const ASSUMED = {
  /** Empty long polls: Lambda keeps about 5 pollers per SQS event source, each a 20-s ReceiveMessage (observed 0.43–0.65M a queue-month). */
  pollersPerQueue: 5,
  longPollSeconds: 20,
  /** Lambda platform lines per invocation in text format: START ≈ 71 B, END ≈ 52 B, REPORT ≈ 143 B; + ≈ 93 B when X-Ray traced it. */
  platformLogBytes: 266,
  tracedPlatformLogBytes: 93,
  /** Lambda bills INIT since August 2025: one cold start per 100 invocations, of the init time the cold-start section measures. */
  coldStartShare: 0.01,
  initMs: 250,
  /** KMS: each principal asks for a data key once per 5-minute reuse period while it is busy (SQS: (2 × producers + consumers) per queue). */
  kmsPeriodsPerMonth: (30 * 86_400) / 300,
  /** SQS's data key periods a month: the queues reuse a data key for SQS_DATA_KEY_REUSE_SECONDS (infra/constructs/memory-queues.ts). */
  sqsKmsPeriodsPerMonth: (30 * 86_400) / SQS_DATA_KEY_REUSE_SECONDS,
  /** DynamoDB bills 100 bytes of overhead per item beside its attributes. */
  itemOverheadBytes: 100,
  /** Noncurrent S3 versions live up to 30 days (the bucket's lifecycle rule): half a month on average. */
  noncurrentMonths: 0.5,
  /** The stack's keys rotate automatically every 365 days (CDK `enableKeyRotation`, KMS's default period). */
  keyRotationDays: 365,
} as const;

const MONTH_SECONDS = 30 * 86_400;
const GB = 1024 ** 3;

export interface BillLine {
  name: string;
  usd: number;
  note: string;
}

export interface Bill {
  /** Per 1M turns: what grows with turns, a month's storage and the reflector's wait on Bedrock included. */
  perMillionTurns: BillLine[];
  infraUsdPer1MTurns: number;
  /** Of `infraUsdPer1MTurns`: the reflector's Lambda time waiting on Bedrock (assumed). */
  modelWaitUsdPer1MTurns: number;
  /** Of `infraUsdPer1MTurns`: a month of holding what 1M turns leave (paid again every month it is held). */
  storageUsdPer1MTurns: number;
  /** The month of the stage's life `fixed` is priced at (key rotations accrue). */
  month: number;
  /** Per month, a stage standing still (and what it pays busy that does not grow with turns). */
  fixed: BillLine[];
  fixedUsdPerMonth: number;
  perMillionSearches: BillLine[];
  retrievalUsdPer1MSearches: number;
  /** Model tokens per turn asked on demand, by job kind. */
  tokens: TokensByJob;
  /** Model tokens per turn a batch inference job answered (routine reflections; billed at the batch price), by job kind. */
  batchInferenceTokens: TokensByJob;
  s3PutsPerTurn: number;
  dynamoWriteUnitsPerTurn: number;
  recordsPerMillionTurns: number;
}

/** Model calls, input and output tokens per turn, by job kind (the tool a call forces). */
export type TokensByJob = Record<string, { calls: number; inputTokens: number; outputTokens: number }>;

const JOB_OF_TOOL: Record<string, string> = {
  record_reflection: 'batch',
  record_nightly_findings: 'nightly',
  record_weekly_reflection: 'weekly',
  text: 'summary',
};

/** Calls asked on demand (`BedrockRuntime.`), or answered by a batch inference job (`BedrockBatch.`, request-ledger.ts recordBatchAnswer). */
export function tokensByJob(
  ledger: Record<string, LedgerEntry>,
  turns: number,
  service: 'BedrockRuntime' | 'BedrockBatch' = 'BedrockRuntime',
): TokensByJob {
  const out: TokensByJob = {};
  for (const [key, v] of Object.entries(ledger)) {
    if (!key.startsWith(`${service}.`)) continue;
    const job = JOB_OF_TOOL[key.split('#')[1] ?? ''] ?? key.split('#')[1] ?? 'other';
    const t = out[job] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
    out[job] = t;
    t.calls += v.requests / turns;
    t.inputTokens += v.inputTokens / turns;
    t.outputTokens += v.outputTokens / turns;
  }
  return out;
}

/** The tokens batch inference jobs answered in the replay (infra/local/request-ledger.ts recordBatchAnswer), per turn. */
const batchInferenceTokensOf = (quality: QualityResult, turns: number): TokensByJob =>
  tokensByJob(quality.usage.ingest.byFunction[BATCH_INFERENCE_SCOPE]?.ledger ?? {}, turns, 'BedrockBatch');

const sumOf = (ledger: Record<string, LedgerEntry>, pred: (k: string) => boolean, f: keyof LedgerEntry) =>
  Object.entries(ledger)
    .filter(([k]) => pred(k))
    .reduce((n, [, v]) => n + v[f], 0);

const S3_WRITES = /^S3\.(PutObject|CopyObject|DeleteObject|DeleteObjects)$/;

export interface BillInput {
  quality: QualityResult;
  stage: SynthesizedStage;
  memoryMb: Record<string, number>;
  sweepFiresPerMonth: number;
  /** The month of the stage's life to price the fixed part at (key rotations accrue); 12 unless given. */
  month?: number;
}

/** The bill of a replay: see the module comment. */
export function billOf(input: BillInput): Bill {
  const { quality, stage } = input;
  const turns = quality.turns;
  const perTurn = 1e6 / turns;
  const use = (phase: QualityResult['usage']['ingest'], fn: FunctionKey): FunctionUse => {
    const u = phase.byFunction[fn] ?? { ledger: {}, invocations: 0, billedMs: 0 };
    const queue = stage.functions[fn].eventSource
      ? stage.functions[fn].eventSource?.queueArn.endsWith('.fifo')
        ? 'fifo'
        : 'standard'
      : null;
    return { ...u, memoryMb: input.memoryMb[fn] ?? 512, queue, http: fn === 'api' };
  };
  const traced = (fn: FunctionKey) => stage.functions[fn].tracing === 'Active';
  const logUsd = (fn: FunctionKey, invocations: number) =>
    (((quality.usage.logBytes[fn] ?? 0) +
      invocations * (ASSUMED.platformLogBytes + (traced(fn) ? ASSUMED.tracedPlatformLogBytes : 0))) /
      GB) *
    (MORE_PRICES.logsIngestGb + MORE_PRICES.logsStoredGbMonth);
  const lines: BillLine[] = [];
  const ingestFns: FunctionKey[] = ['signal', 'idle', 'reflector'];
  for (const fn of ingestFns)
    lines.push(...ingestLines(fn, use(quality.usage.ingest, fn), { quality, stage, traced, logUsd }));
  lines.push({
    name: 'agents publishing turn.saved (one FIFO send per turn)',
    usd: 1e6 * PRICES.sqsFifoRequest,
    note: '',
  });
  const storage = storageLines(quality, perTurn);
  lines.push(...storage);
  lines.push(kmsLine(stage));
  const wait = modelWaitUsd(modelTokensOf(quality), input.memoryMb.reflector ?? 512) * perTurn;
  lines.push({
    name: 'reflector: Lambda waiting on Bedrock (assumed)',
    usd: wait,
    note: 'billed duration while a Converse call runs',
  });
  const month = input.month ?? 12;
  const fixed = [...fixedLines(input, logUsd), keyRotationLine(stage, month)];
  const perMillionSearches = retrievalLines(quality, use, traced, logUsd);
  const reflectorLedger = quality.usage.ingest.byFunction.reflector?.ledger ?? {};
  const allIngest = Object.values(quality.usage.ingest.byFunction);
  const total = (ls: readonly BillLine[]) => ls.reduce((n, l) => n + l.usd, 0);
  return {
    perMillionTurns: lines,
    infraUsdPer1MTurns: total(lines),
    modelWaitUsdPer1MTurns: wait,
    storageUsdPer1MTurns: total(storage),
    month,
    fixed,
    fixedUsdPerMonth: total(fixed),
    perMillionSearches,
    retrievalUsdPer1MSearches: total(perMillionSearches),
    tokens: tokensByJob(reflectorLedger, turns),
    batchInferenceTokens: batchInferenceTokensOf(quality, turns),
    s3PutsPerTurn:
      allIngest.reduce((n, u) => n + sumOf(u.ledger, (k) => /^S3\.(PutObject|CopyObject)$/.test(k), 'requests'), 0) /
      turns,
    dynamoWriteUnitsPerTurn:
      allIngest.reduce((n, u) => n + sumOf(u.ledger, (k) => k.startsWith('DynamoDB.'), 'writeUnits'), 0) / turns,
    recordsPerMillionTurns: (quality.usage.records / turns) * 1e6,
  };
}

/** One ingest function's lines of the bill, per 1M turns: Lambda (with INIT), DynamoDB, S3, SQS, X-Ray, logs. */
function ingestLines(
  fn: FunctionKey,
  u: FunctionUse,
  ctx: {
    quality: QualityResult;
    stage: SynthesizedStage;
    traced: (fn: FunctionKey) => boolean;
    logUsd: (fn: FunctionKey, invocations: number) => number;
  },
): BillLine[] {
  const { quality, stage, traced, logUsd } = ctx;
  const turns = quality.turns;
  const perTurn = 1e6 / turns;
  const c = functionCost(u);
  const init =
    u.invocations * ASSUMED.coldStartShare * (ASSUMED.initMs / 1000) * (u.memoryMb / 1024) * PRICES.lambdaGbSecond;
  return [
    {
      name: `${fn}: Lambda requests and duration (+ INIT, assumed)`,
      usd: (c.lambda + init) * perTurn,
      note: `${((u.invocations / turns) * 1000).toFixed(0)} invocations per 1k turns, ${(lambdaMs(u) / Math.max(1, u.invocations)).toFixed(0)} ms each at ${u.memoryMb} MB`,
    },
    {
      name: `${fn}: DynamoDB`,
      usd: c.dynamodb * perTurn,
      note: `${(sumOf(u.ledger, (k) => k.startsWith('DynamoDB.'), 'writeUnits') / turns).toFixed(2)} write / ${(sumOf(u.ledger, (k) => k.startsWith('DynamoDB.'), 'readUnits') / turns).toFixed(2)} read units per turn`,
    },
    {
      name: `${fn}: S3 requests`,
      usd: c.s3 * perTurn,
      note: `${(sumOf(u.ledger, (k) => /^S3\.(Put|Copy)/.test(k), 'requests') / turns).toFixed(2)} PUT / ${(sumOf(u.ledger, (k) => /^S3\.(Get|Head)/.test(k), 'requests') / turns).toFixed(2)} GET per turn`,
    },
    { name: `${fn}: SQS sends, and its event source's receive + delete`, usd: c.sqs * perTurn, note: '' },
    {
      name: `${fn}: X-Ray (${stage.functions[fn].tracing ?? 'off'})`,
      usd: traced(fn) ? u.invocations * MORE_PRICES.xrayTrace * perTurn : 0,
      note: traced(fn) ? 'a trace per invocation (under the 1/s reservoir)' : 'only when the publisher sampled: 0 here',
    },
    {
      name: `${fn}: CloudWatch Logs (ingest + a month stored)`,
      usd: logUsd(fn, u.invocations) * perTurn,
      note: `${((quality.usage.logBytes[fn] ?? 0) / turns).toFixed(0)} B of logs and metrics per turn + platform lines`,
    },
  ];
}

function modelTokensOf(quality: QualityResult): { calls: number; outputTokens: number } {
  const l = quality.usage.ingest.byFunction.reflector?.ledger ?? {};
  return {
    calls: sumOf(l, (k) => k.startsWith('BedrockRuntime.'), 'requests'),
    outputTokens: sumOf(l, (k) => k.startsWith('BedrockRuntime.'), 'outputTokens'),
  };
}

/** A month of holding what the turns leave behind, per 1M turns. */
function storageLines(quality: QualityResult, perTurn: number): BillLine[] {
  const s = quality.usage.storage;
  const tableBytes = s.dynamodbBytes + s.dynamodbItems * ASSUMED.itemOverheadBytes;
  const writes = Object.values(quality.usage.ingest.byFunction).reduce(
    (n, u) => n + sumOf(u.ledger, (k) => S3_WRITES.test(k), 'requests'),
    0,
  );
  // Every S3 write beyond the objects left makes a noncurrent version (an overwrite or a delete in a versioned bucket).
  const noncurrent = Math.max(0, writes - s.s3Objects) * (s.s3Objects > 0 ? s.s3Bytes / s.s3Objects : 0);
  return [
    {
      name: 'DynamoDB storage (items + 100 B each), a month',
      usd: (tableBytes / GB) * PRICES.dynamoGbMonth * perTurn,
      note: `${(tableBytes / quality.turns / 1024).toFixed(2)} KiB per turn`,
    },
    { name: 'DynamoDB GSI storage, a month', usd: (s.gsiBytes / GB) * PRICES.dynamoGbMonth * perTurn, note: '' },
    {
      name: 'DynamoDB point-in-time recovery, a month',
      usd: (tableBytes / GB) * MORE_PRICES.pitrGbMonth * perTurn,
      note: 'on the table data',
    },
    {
      name: 'S3 storage, a month',
      usd: (s.s3Bytes / GB) * PRICES.s3GbMonth * perTurn,
      note: `${(s.s3Bytes / quality.turns / 1024).toFixed(2)} KiB per turn`,
    },
    {
      name: 'S3 noncurrent versions (≤ 30 days)',
      usd: (noncurrent / GB) * PRICES.s3GbMonth * ASSUMED.noncurrentMonths * perTurn,
      note: `${Math.max(0, writes - s.s3Objects)} overwritten or deleted objects in the replay`,
    },
    {
      name: 'S3 object tags (kind=turn), a month',
      usd: s.taggedObjects * MORE_PRICES.s3TagMonth * perTurn,
      note: `${s.taggedObjects} tagged turn documents`,
    },
  ];
}

/**
 * KMS requests of a busy month (an upper bound: a quiet period makes none): per queue
 * (2 × producers + consumers) data keys per reuse period, and a table key and a bucket key per
 * function principal per period. Per 1M turns at 1M turns a month.
 */
function kmsLine(stage: SynthesizedStage): BillLine {
  const fns = Object.keys(PERMISSIONS) as FunctionKey[];
  const producers = fns.reduce((n, f) => n + PERMISSIONS[f].sends.length, 0) + 1; // + the publishing agent
  const consumers = fns.filter((f) => stage.functions[f].eventSource).length;
  const queuePairs = 2 * producers + consumers;
  const storePairs = 2 * fns.length;
  const requests = queuePairs * ASSUMED.sqsKmsPeriodsPerMonth + storePairs * ASSUMED.kmsPeriodsPerMonth;
  return {
    name: 'KMS requests (busy all month, upper bound)',
    usd: requests * MORE_PRICES.kmsRequest,
    note: `${queuePairs} caller-queue pairs × one per ${SQS_DATA_KEY_REUSE_SECONDS / 60} minutes, ${storePairs} caller-table/bucket pairs × one per 5 minutes`,
  };
}

function fixedLines(input: BillInput, logUsd: (fn: FunctionKey, invocations: number) => number): BillLine[] {
  const { stage, quality } = input;
  const count = (type: string) => stage.resourceCounts[type] ?? 0;
  const queues = (Object.keys(stage.functions) as FunctionKey[]).filter((f) => stage.functions[f].eventSource);
  const polls = queues.reduce((n, f) => {
    const fifo = stage.functions[f].eventSource?.queueArn.endsWith('.fifo');
    return (
      n +
      ASSUMED.pollersPerQueue *
        (MONTH_SECONDS / ASSUMED.longPollSeconds) *
        (fifo ? PRICES.sqsFifoRequest : PRICES.sqsStandardRequest)
    );
  }, 0);
  const sweep = quality.usage.ingest.byFunction.sweep;
  const perFire = sweep && sweep.invocations > 0 ? input.sweepFiresPerMonth / sweep.invocations : 0;
  const sweepUse: FunctionUse = {
    ...(sweep ?? { ledger: {}, invocations: 0, billedMs: 0 }),
    memoryMb: input.memoryMb.sweep ?? 256,
    queue: null,
    http: false,
  };
  return [
    { name: `KMS keys (${count('AWS::KMS::Key')})`, usd: count('AWS::KMS::Key') * MORE_PRICES.kmsKeyMonth, note: '' },
    {
      name: `custom metrics (${quality.usage.metrics.length}, if emitted every hour)`,
      usd: quality.usage.metrics.length * MORE_PRICES.metricMonth,
      note: 'prorated by the hours they are emitted: less when quiet',
    },
    {
      name: `alarms (${count('AWS::CloudWatch::Alarm')})`,
      usd: count('AWS::CloudWatch::Alarm') * MORE_PRICES.alarmMonth,
      note: '',
    },
    {
      name: `dashboards (${count('AWS::CloudWatch::Dashboard')})`,
      usd: count('AWS::CloudWatch::Dashboard') * MORE_PRICES.dashboardMonth,
      note: '',
    },
    {
      name: `event sources' empty long polls (${queues.length} queues)`,
      usd: polls,
      note: `${ASSUMED.pollersPerQueue} pollers × a ${ASSUMED.longPollSeconds}-s receive each`,
    },
    {
      name: `sweeps (${input.sweepFiresPerMonth} fires a month)`,
      usd:
        totalOf(functionCost(sweepUse)) * perFire +
        input.sweepFiresPerMonth * MORE_PRICES.xrayTrace +
        logUsd('sweep', sweepUse.invocations) * perFire,
      note: 'Lambda, requests, a trace and logs per fire',
    },
  ];
}

/**
 * KMS key rotation at `month` of the stage's life: each rotation adds $1 a month to its key,
 * for the first two rotations only (https://aws.amazon.com/kms/pricing/).
 */
function keyRotationLine(stage: SynthesizedStage, month: number): BillLine {
  const keys = stage.resourceCounts['AWS::KMS::Key'] ?? 0;
  const rotations = Math.min(MORE_PRICES.kmsRotationsCharged, Math.floor((month * 30) / ASSUMED.keyRotationDays));
  return {
    name: `KMS key rotations (month ${month}: ${rotations} per key)`,
    usd: keys * rotations * MORE_PRICES.kmsRotationMonth,
    note: `a rotation every ${ASSUMED.keyRotationDays} days; +$${keys} a month after each of the first ${MORE_PRICES.kmsRotationsCharged}, then capped`,
  };
}

function retrievalLines(
  quality: QualityResult,
  use: (phase: QualityResult['usage']['ingest'], fn: FunctionKey) => FunctionUse,
  traced: (fn: FunctionKey) => boolean,
  logUsd: (fn: FunctionKey, invocations: number) => number,
): BillLine[] {
  const u = use(quality.usage.retrieval, 'api');
  const searches = u.invocations;
  if (searches === 0) return [];
  const per = 1e6 / searches;
  const c = functionCost(u);
  return [
    { name: 'api: Lambda', usd: c.lambda * per, note: `${(lambdaMs(u) / searches).toFixed(1)} ms per search` },
    {
      name: 'api: DynamoDB',
      usd: c.dynamodb * per,
      note: `${(sumOf(u.ledger, (k) => k.startsWith('DynamoDB.'), 'readUnits') / searches).toFixed(1)} read units per search`,
    },
    { name: 'api: S3', usd: c.s3 * per, note: '' },
    { name: 'HTTP API', usd: c.apiGateway * per, note: '' },
    {
      name: `api: X-Ray (${traced('api') ? 'Active' : 'PassThrough'})`,
      usd: traced('api') ? 1e6 * MORE_PRICES.xrayTrace : 0,
      note: 'a trace per search under the 1/s reservoir (upper bound)',
    },
    { name: 'api: CloudWatch Logs', usd: logUsd('api', searches) * per, note: '' },
  ];
}

/**
 * Models whose list price (lib/sleep-time/model-prices.ts) is the global cross-Region profile's:
 * Bedrock bills a geographic profile (`us.`…) or the in-Region id about 10 % more for them
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/cross-region-inference.html). Other
 * models' list price is the in-Region one, which a geographic profile bills unchanged.
 */
const GLOBAL_LIST_PRICED = /anthropic\.claude-(haiku|sonnet|opus)-4-5/;
export const GEO_PREMIUM = 1.1;

/** How much more than the list price Bedrock bills for a model invoked by this id (a profile or a bare id). */
export const profileFactor = (modelId: string): number =>
  GLOBAL_LIST_PRICED.test(modelId) && !modelId.startsWith('global.') ? GEO_PREMIUM : 1;

/** USD of 1M turns' model tokens per job kind, one model per job kind (`models.default` for the kinds not named). */
export function modelUsdByJob(tokens: TokensByJob, models: Record<string, string>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(tokens).map(([job, t]) => {
      const model = models[job] ?? models.default ?? '';
      return [
        job,
        (estimateCostUsd(model, t.inputTokens * 1e6, t.outputTokens * 1e6) ?? Number.NaN) * profileFactor(model),
      ];
    }),
  );
}

/** USD of 1M turns' model tokens with one model per job kind, priced per inference profile. */
export function modelUsd(tokens: TokensByJob, models: Record<string, string>): number {
  return Object.values(modelUsdByJob(tokens, models)).reduce((n, v) => n + v, 0);
}
