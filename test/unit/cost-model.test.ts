/** The benchmark's cost model (bench/cost.ts) and the request ledger's per-function scopes. */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { agentCoreAt, allInAt, invokedModels } from '../../bench/all-in.js';
import type { Bill } from '../../bench/bill.js';
import { modelUsd, tokensByJob } from '../../bench/bill.js';
import { stageConfig } from '../../infra/config/stages.js';
import { functionCost, PRICES, totalOf } from '../../bench/cost.js';
import { instrument, ledgerDelta, requestLedger } from '../../infra/local/request-ledger.js';

const entry = (
  over: Partial<{ requests: number; readUnits: number; writeUnits: number; inputTokens: number; outputTokens: number }>,
) => ({
  requests: 0,
  readUnits: 0,
  writeUnits: 0,
  inputTokens: 0,
  outputTokens: 0,
  ...over,
});

describe('the cost model', () => {
  it('prices a function by service: Lambda requests and GB-s, DynamoDB units, S3 classes, SQS sends and polls', () => {
    const cost = functionCost({
      ledger: {
        'DynamoDB.PutItem': entry({ requests: 2, writeUnits: 4 }),
        'DynamoDB.Query': entry({ requests: 1, readUnits: 8 }),
        'S3.PutObject': entry({ requests: 3 }),
        'S3.GetObject': entry({ requests: 5 }),
        'SQS.SendMessage': entry({ requests: 1 }),
      },
      invocations: 10,
      billedMs: 2000,
      memoryMb: 512,
      queue: 'fifo',
      http: false,
    });
    // 2 s on a full core is 2 × 1,769 / 512 s at 512 MB, a share of a core (bench/lambda-cpu.ts)
    expect(cost.lambda).toBeCloseTo(10 * PRICES.lambdaRequest + ((2 * 1769) / 512) * 0.5 * PRICES.lambdaGbSecond, 12);
    expect(cost.dynamodb).toBeCloseTo(4 * PRICES.dynamoWriteUnit + 8 * PRICES.dynamoReadUnit, 12);
    expect(cost.s3).toBeCloseTo(3 * PRICES.s3Put + 5 * PRICES.s3Get, 12);
    // one send, plus a receive and a delete per invocation by the event source
    expect(cost.sqs).toBeCloseTo((1 + 20) * PRICES.sqsFifoRequest, 12);
    expect(cost.apiGateway).toBe(0);
    expect(totalOf(cost)).toBeCloseTo(cost.lambda + cost.dynamodb + cost.s3 + cost.sqs, 12);
  });

  it('splits model tokens per turn by job kind (the tool a call forces) and prices them per model choice', () => {
    const tokens = tokensByJob(
      {
        'BedrockRuntime.Converse#record_reflection': entry({ requests: 2, inputTokens: 900, outputTokens: 100 }),
        'BedrockRuntime.Converse#text': entry({ requests: 1, inputTokens: 300, outputTokens: 50 }),
        'S3.GetObject': entry({ requests: 7 }),
      },
      10,
    );
    expect(tokens).toEqual({
      batch: { calls: 0.2, inputTokens: 90, outputTokens: 10 },
      summary: { calls: 0.1, inputTokens: 30, outputTokens: 5 },
    });
    // Per 1M turns: Haiku 4.5 through the `us.` profile at its global $1 / $5 per 1M tokens + 10 %
    // for batches, Nova Micro at its in-Region $0.035 / $0.14 for the rest (a geographic profile bills it unchanged).
    const usd = modelUsd(tokens, {
      default: 'us.amazon.nova-micro-v1:0',
      batch: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
    });
    expect(usd).toBeCloseTo((90 * 1 + 10 * 5) * 1.1 + 30 * 0.035 + 5 * 0.14, 6);
    const global = modelUsd(tokens, {
      default: 'us.amazon.nova-micro-v1:0',
      batch: 'global.anthropic.claude-haiku-4-5-20251001-v1:0',
    });
    expect(global).toBeCloseTo(90 * 1 + 10 * 5 + 30 * 0.035 + 5 * 0.14, 6);
  });
});

describe('the all-in month', () => {
  const bill = (over: Partial<Bill>): Bill => ({
    perMillionTurns: [],
    infraUsdPer1MTurns: 10,
    modelWaitUsdPer1MTurns: 1,
    storageUsdPer1MTurns: 2,
    month: 12,
    fixed: [],
    fixedUsdPerMonth: 5,
    perMillionSearches: [],
    retrievalUsdPer1MSearches: 3,
    tokens: {
      batch: { calls: 1, inputTokens: 100, outputTokens: 10 },
      nightly: { calls: 0.1, inputTokens: 200, outputTokens: 20 },
      weekly: { calls: 0.01, inputTokens: 50, outputTokens: 5 },
    },
    batchInferenceTokens: {},
    s3PutsPerTurn: 0,
    dynamoWriteUnitsPerTurn: 0,
    recordsPerMillionTurns: 1000,
    ...over,
  });

  it("runs prod's batches on Haiku 4.5 and its summaries, nightly and weekly runs on Nova Lite, through the us. profile", () => {
    const models = invokedModels(stageConfig('prod'));
    expect(models).toMatchObject({
      batch: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
      summary: 'us.amazon.nova-lite-v1:0',
      nightly: 'us.amazon.nova-lite-v1:0',
      weekly: 'us.amazon.nova-lite-v1:0',
    });
    expect(invokedModels(stageConfig('dev')).nightly).toBe('us.anthropic.claude-haiku-4-5-20251001-v1:0');
  });

  it('holds storage as a stock: month 12 pays twelve months of what turns leave', () => {
    const models = { default: 'us.amazon.nova-lite-v1:0', batch: 'us.anthropic.claude-haiku-4-5-20251001-v1:0' };
    const m1 = allInAt(bill({}), models, 1);
    const m12 = allInAt(bill({}), models, 12);
    expect(m12.total - m1.total).toBeCloseTo(11 * 2, 9);
    // Haiku through us.: ($1 × 100 + $5 × 10) × 1.1; Nova Lite in-Region price: $0.06 × 200 + $0.24 × 20.
    expect(m12.modelUsdByJob.batch).toBeCloseTo(150 * 1.1, 9);
    expect(m12.modelUsdByJob.nightly).toBeCloseTo(0.06 * 200 + 0.24 * 20, 9);
    expect(m1.total).toBeCloseTo(8 + 2 + 5 + 3 + m1.modelUsd, 9);
    expect(m12.batchInferenceSavingsUsd).toBe(0);
    // Sleep-time at batch prices: the nightly and weekly runs at half, the rest unchanged.
    const batched = allInAt(bill({}), models, 12, { batchSleepTime: true });
    expect(batched.modelUsdByJob.nightly).toBeCloseTo((m12.modelUsdByJob.nightly ?? 0) / 2, 9);
    expect(batched.modelUsdByJob.batch).toBeCloseTo(m12.modelUsdByJob.batch ?? 0, 9);
    expect(batched.batchInferenceSavingsUsd).toBeCloseTo(
      ((m12.modelUsdByJob.nightly ?? 0) + (m12.modelUsdByJob.weekly ?? 0)) / 2,
      9,
    );
    expect(batched.total).toBeCloseTo(m12.total - batched.batchInferenceSavingsUsd, 9);
    // Routine reflections a batch inference job answered: their tokens at half, beside the batches asked on demand.
    const routine = allInAt(
      bill({ batchInferenceTokens: { batch: { calls: 1, inputTokens: 100, outputTokens: 10 } } }),
      models,
      12,
    );
    expect(routine.modelUsdByJob.batch).toBeCloseTo(150 * 1.1 * 1.5, 9);
    expect(routine.batchInferenceSavingsUsd).toBeCloseTo((150 * 1.1) / 2, 9);
  });

  it("prices AgentCore Memory's records as a stock too", () => {
    const m1 = agentCoreAt(1000, 1, 7);
    const m12 = agentCoreAt(1000, 12, 7);
    expect(m1.builtIn).toBeCloseTo(250 + 500 + 0.75, 9);
    expect(m12.builtIn - m1.builtIn).toBeCloseTo(11 * 0.75, 9);
    expect(m12.selfManaged).toBeCloseTo(250 + 500 + 12 * 0.25 + 7, 9);
  });
});

describe('the request ledger', () => {
  it("counts a request under its client's scope, and capacity units and tokens from the response", async () => {
    const client = (scope?: string) =>
      instrument(
        new DynamoDBClient({
          region: 'us-east-1',
          endpoint: 'http://localhost:1',
          credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
          requestHandler: {
            handle: async () => ({
              response: {
                statusCode: 200,
                headers: { 'content-type': 'application/x-amz-json-1.0' },
                body: Readable.from([
                  Buffer.from(JSON.stringify({ ConsumedCapacity: { TableName: 't', CapacityUnits: 3 } })),
                ]),
              },
            }),
          } as never,
        }),
        'DynamoDB',
        scope,
      );
    const before = requestLedger.snapshotByScope();
    const signal = client('signal');
    const put = (c: DynamoDBClient) => c.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'x' } } }));
    await put(signal);
    await put(signal);
    await put(client());
    const after = requestLedger.snapshotByScope();
    expect(ledgerDelta(before.signal ?? {}, after.signal ?? {})).toEqual({
      'DynamoDB.PutItem': entry({ requests: 2, writeUnits: 6 }),
    });
    expect(after.reflector).toBeUndefined();
  });
});
