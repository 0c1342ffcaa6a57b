/**
 * Cost per 1M turns: what a replay measured (AWS requests and DynamoDB capacity
 * units from the request ledger, handler milliseconds, model tokens, bytes stored), priced
 * with published on-demand us-east-1 prices, and Amazon Bedrock AgentCore Memory's
 * published prices for the same workload beside it.
 *
 * Prices as published on the AWS pricing pages (checked against third-party summaries of
 * them) — check before relying on them: https://aws.amazon.com/pricing/
 */
import type { LedgerEntry } from '../infra/local/request-ledger.js';
import { projectedMs } from './lambda-cpu.js';

export const PRICES_CHECKED = '2026-11-22';

/** USD, us-east-1, on-demand, no free tier. */
export const PRICES = {
  lambdaRequest: 0.2 / 1e6,
  /** Arm64 (the functions' architecture), first 7.5 billion GB-s a month. */
  lambdaGbSecond: 0.0000133334,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  dynamoGbMonth: 0.25,
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  s3GbMonth: 0.023,
  /** FIFO queues; each 64 KB chunk of a payload is a request. */
  sqsFifoRequest: 0.5 / 1e6,
  sqsStandardRequest: 0.4 / 1e6,
  /** HTTP API, first 300 million requests a month. */
  httpApiRequest: 1.0 / 1e6,
} as const;

/** Amazon Bedrock AgentCore Memory's published prices (docs/pricing-sources.md). */
export const AGENTCORE = {
  /** Short-term memory: per event created. */
  event: 0.25 / 1000,
  /** Long-term memory with built-in strategies: per record stored per month. */
  recordMonth: 0.75 / 1000,
  /** Long-term memory with self-managed (or overridden) strategies: per record stored per month. */
  selfManagedRecordMonth: 0.25 / 1000,
  /** Long-term memory retrieval. */
  retrieval: 0.5 / 1000,
} as const;

/**
 * Amazon OpenSearch Serverless, the usual vector store of an OpenSearch-based memory: an
 * OpenSearch Compute Unit-hour and a GB-month of managed storage. A collection keeps at least
 * 0.5 OCU indexing and 0.5 OCU search, each doubled by standby replicas in production
 * (docs/pricing-sources.md).
 */
export const OPENSEARCH_SERVERLESS = {
  ocuHour: 0.24,
  storageGbMonth: 0.024,
  minOcuRedundant: 2,
  minOcuNoStandby: 1,
} as const;

/**
 * The offline model answers at once; a real one keeps the reflector waiting, and Lambda
 * bills the wait. Assumed per call: 1 s to the first token + output tokens at 100 per second
 * (the order of magnitude Bedrock's small models stream at).
 */
export const ASSUMED_MODEL_WAIT = { firstTokenSeconds: 1, outputTokensPerSecond: 100 } as const;

export interface FunctionUse {
  /** The AWS requests the function made (its ledger scope). */
  ledger: Record<string, LedgerEntry>;
  invocations: number;
  /** Σ of each invocation's duration on the bench machine, rounded up to the millisecond (Lambda's billing). */
  billedMs: number;
  memoryMb: number;
  /** The queue its event source mapping polls (one receive + one delete per invocation), if any. */
  queue: 'fifo' | 'standard' | null;
  /** Behind the HTTP API: one API request per invocation. */
  http: boolean;
}

export interface CostByService {
  lambda: number;
  dynamodb: number;
  s3: number;
  sqs: number;
  apiGateway: number;
}

export const totalOf = (c: CostByService): number => c.lambda + c.dynamodb + c.s3 + c.sqs + c.apiGateway;

const sum = (ledger: Record<string, LedgerEntry>, pred: (key: string) => boolean, field: keyof LedgerEntry) =>
  Object.entries(ledger)
    .filter(([k]) => pred(k))
    .reduce((n, [, v]) => n + v[field], 0);

const S3_PUT_CLASS =
  /^S3\.(PutObject|CopyObject|ListObjectsV2|CreateMultipartUpload|UploadPart|CompleteMultipartUpload)$/;
const S3_GET_CLASS = /^S3\.(GetObject|HeadObject)$/;

/**
 * A function's duration on Lambda from its duration on the bench machine's full core: Lambda
 * gives a function CPU in proportion to its memory (lambda-cpu.ts), so the time is counted as
 * CPU time and slowed by the function's share of a core. An upper bound: the part spent
 * waiting on DynamoDB, S3 or SQS is not slowed on Lambda.
 */
export const lambdaMs = (use: Pick<FunctionUse, 'billedMs' | 'memoryMb'>): number =>
  projectedMs(use.billedMs, use.billedMs, use.memoryMb);

/**
 * What a function's measured use costs, by service. Its SQS sends are priced as FIFO (the
 * dearer; the idle checks go to a standard queue, the rest to FIFO ones).
 */
export function functionCost(use: FunctionUse): CostByService {
  const l = use.ledger;
  const gbSeconds = (lambdaMs(use) / 1000) * (use.memoryMb / 1024);
  const polls =
    use.queue === null
      ? 0
      : 2 * use.invocations * (use.queue === 'fifo' ? PRICES.sqsFifoRequest : PRICES.sqsStandardRequest);
  return {
    lambda: use.invocations * PRICES.lambdaRequest + gbSeconds * PRICES.lambdaGbSecond,
    dynamodb:
      sum(l, (k) => k.startsWith('DynamoDB.'), 'writeUnits') * PRICES.dynamoWriteUnit +
      sum(l, (k) => k.startsWith('DynamoDB.'), 'readUnits') * PRICES.dynamoReadUnit,
    s3:
      sum(l, (k) => S3_PUT_CLASS.test(k), 'requests') * PRICES.s3Put +
      sum(l, (k) => S3_GET_CLASS.test(k), 'requests') * PRICES.s3Get,
    sqs: sum(l, (k) => /^SQS\.Send/.test(k), 'requests') * PRICES.sqsFifoRequest + polls,
    apiGateway: use.http ? use.invocations * PRICES.httpApiRequest : 0,
  };
}

/** Lambda USD for the reflector waiting on a real model during these calls. */
export const modelWaitUsd = (tokens: { calls: number; outputTokens: number }, memoryMb: number): number =>
  (tokens.calls * ASSUMED_MODEL_WAIT.firstTokenSeconds +
    tokens.outputTokens / ASSUMED_MODEL_WAIT.outputTokensPerSecond) *
  (memoryMb / 1024) *
  PRICES.lambdaGbSecond;
