/**
 * Window reads by key range (issue 19, "hold up for users with months of history"): a user's
 * batch logs and context summaries are keyed by the last turn their id names, so the nightly
 * and weekly runs, through the reflector's real handler on DynamoDB Local, read their window,
 * not the history; items written under the old keys (`BATCH#{id}`, `SUMMARY#{id}`) are moved
 * by the migration and found as before; the runs' results are those of the whole read.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import { functionClients } from '../../infra/local/clients.js';
import { ledgerDelta, requestLedger } from '../../infra/local/request-ledger.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { S3DynamoBatchLogStore } from '../../lib/adapters/batch-log-store.js';
import { S3DynamoTurnStore } from '../../lib/adapters/dynamo-turn-store.js';
import { DynamoSearchChangeLog } from '../../lib/adapters/search-index-store.js';
import { DynamoSleepTimeLogStore } from '../../lib/adapters/sleep-time-log-store.js';
import { jobDeduplicationId } from '../../lib/adapters/sqs-job-queue.js';
import { moveToTurnKeys } from '../../lib/adapters/turn-keys-migration.js';
import type { BatchLog } from '../../lib/domain/batch-log.js';
import { keys } from '../../lib/domain/memory-paths.js';
import { turn } from '../helpers/fakes.js';
import { iamDenials } from '../helpers/iam.js';

const USER = 'long-history';
const H = 3_600_000;
let stack: LocalStack;
let ddb: DynamoDBDocumentClient;

beforeAll(async () => {
  stack = await startLocalStack({ stage: 'windowreads', logLevel: 'SILENT' });
  const { region, credentials, endpoints } = stack.info;
  ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ region, credentials, endpoint: endpoints.dynamodb }));
  requestLedger.recordItemKinds(true);
}, 120_000);
afterAll(async () => {
  requestLedger.recordItemKinds(false);
  ddb?.destroy();
  await stack?.stop();
});

const log = (first: number, last: number, inputAt: string): BatchLog => ({
  batch_id: `batch-${first}-${last}`, user_id: USER, status: 'completed', timestamp: inputAt, input_at: inputAt,
  turns_reviewed: Array.from({ length: last - first + 1 }, (_, i) => first + i), turns_missing: [], turns_omitted_for_budget: [], trigger: 'turn_threshold', kind: 'batch', urgency_score: 0.2,
  quality_gate_results: { items_proposed: 1, items_passed: 1, truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 }, rejections: [] },
  staged_files: [`Knowledge_staging/Facts/topic-${last}--batch-${first}-${last}.md`], promoted_files: [], reinforced: [], model: null, error: null, duration_ms: 5,
});
const summary = (id: string, createdAt: string, sourceTurns: number[], text: string) => ({
  pk: keys.userPk(USER), type: 'summary', userId: USER, id, kind: 'idle-summary', trigger: 'idle', createdAt, sourceTurns, prompt: 'Summarise the conversation so far.', text, modelId: 'm', inputTokens: 1, outputTokens: 1, deleted: false,
});
const put = (item: Record<string, unknown>) => ddb.send(new PutCommand({ TableName: stack.info.tableName, Item: item }));

/** What the old code read: every item of the kind, its read units (eventually consistent, as it read). */
async function wholeRead(prefix: string): Promise<number> {
  let units = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const res = await ddb.send(new QueryCommand({ TableName: stack.info.tableName, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': keys.userPk(USER), ':p': prefix }, ReturnConsumedCapacity: 'TOTAL', ExclusiveStartKey: start }));
    units += res.ConsumedCapacity?.CapacityUnits ?? 0;
    start = res.LastEvaluatedKey;
  } while (start);
  return units;
}

async function runJob(kind: 'nightly' | 'weekly', requestedAt: string, turnIds: number[]) {
  const job: Job = { type: 'reflector.job', version: 1, jobId: `${kind}-${requestedAt.slice(0, 16).replace(/[-:T]/g, '')}`, userId: USER, kind, trigger: 'schedule', urgency: 0, turnIds, requestedAt };
  const sqs = new SQSClient({ region: stack.info.region, endpoint: stack.info.endpoints.sqs, credentials: stack.info.credentials });
  const before = requestLedger.snapshotByScope().reflector ?? {};
  await sqs.send(new SendMessageCommand({ QueueUrl: stack.info.queues.reflection.url, MessageBody: JSON.stringify(job), MessageGroupId: USER, MessageDeduplicationId: jobDeduplicationId(job) }));
  await stack.waitUntilDrained();
  sqs.destroy();
  const used = ledgerDelta(before, requestLedger.snapshotByScope().reflector ?? {});
  const runs = await new DynamoSleepTimeLogStore(ddb, stack.info.tableName).list(USER, kind, requestedAt, requestedAt);
  const run = runs.find((r) => r.runId === job.jobId);
  if (!run) throw new Error(`no ${kind} run logged`);
  return { run, used, queryUnits: (k: string) => used[`ItemKind.${k}|Query`]?.readUnits ?? 0 };
}

describe('the nightly and weekly runs read their window, not the history (issue 19)', () => {
  it('reads only the window by key range, finds items of the old keys once moved, and reflects as the whole read did', async () => {
    const { tableName: table, bucketName: bucket } = stack.info;
    const writer = functionClients('reflector', stack.iam);
    const logs = new S3DynamoBatchLogStore(writer.ddb, writer.s3, table, bucket);
    // Months of history: 150 batches of 4 turns and their summaries, October to mid-December.
    for (let i = 0; i < 150; i++) {
      const at = new Date(Date.parse('2025-10-01T10:00:00Z') + i * 12 * H).toISOString();
      await logs.write(log(4 * i + 1, 4 * i + 4, at));
      const id = `summary-${4 * i + 1}-${4 * i + 4}`;
      await put({ ...summary(id, new Date(Date.parse(at) + H).toISOString(), [1, 2, 3, 4].map((n) => 4 * i + n), `Old summary ${i}: ${'a long-gone week of reef tanks. '.repeat(20)}`), sk: keys.summarySk(id) });
    }
    // The week: a day in it (turns 851–860), and the night's day (901–910), two of its items under the old keys.
    await logs.write(log(851, 860, '2026-03-05T10:00:00.000Z'));
    await put({ ...summary('summary-851-860', '2026-03-05T11:00:00.000Z', [851, 852, 853, 854, 855, 856, 857, 858, 859, 860], 'Week summary: planning a trip to Lisbon.'), sk: keys.summarySk('summary-851-860') });
    // Asked for again by a person a day later (req R-SUM-9): the same turns, a newer summary.
    await put({ ...summary('manual-851-860-0badcafe', '2026-03-06T09:00:00.000Z', [851, 852, 853, 854, 855, 856, 857, 858, 859, 860], 'Manual summary: Lisbon, the tram and the tiles.'), sk: keys.summarySk('manual-851-860-0badcafe') });
    const day = Array.from({ length: 10 }, (_, i) => turn({ userId: USER, turnId: 901 + i, query: `Day question ${i}: which coral grows fastest?`, response: 'Montipora, usually.', timestamp: new Date(Date.parse('2026-03-09T10:00:00Z') + i * 60_000).toISOString() }));
    const signal = functionClients('signal', stack.iam);
    await new S3DynamoTurnStore(signal.ddb, signal.s3, table, bucket, new DynamoSearchChangeLog(signal.ddb, table)).saveTurns(day);
    await logs.write(log(901, 905, '2026-03-09T10:04:00.000Z'));
    await put({ ...summary('summary-901-905', '2026-03-09T11:00:00.000Z', [901, 902, 903, 904, 905], 'Night summary: corals that grow fast.'), sk: keys.summarySk('summary-901-905') });
    const old = log(906, 908, '2026-03-09T10:07:00.000Z');
    await put({ pk: keys.userPk(USER), sk: 'BATCH#batch-906-908', kind: 'batch-log', userId: USER, batchId: old.batch_id, status: 'completed', timestamp: old.timestamp, inputAt: old.input_at, log: JSON.stringify(old) });
    await put({ ...summary('summary-906-908', '2026-03-09T11:30:00.000Z', [906, 907, 908], 'Night summary under the old key: the frag swap.'), sk: 'SUMMARY#summary-906-908' });

    // The migration moves the two old-key items (and only them), once.
    expect(await moveToTurnKeys(ddb, table)).toEqual({ moved: 2, alreadyMoved: 0 });
    expect(await moveToTurnKeys(ddb, table)).toEqual({ moved: 0, alreadyMoved: 0 });
    const at = async (sk: string) => (await ddb.send(new GetCommand({ TableName: table, Key: { pk: keys.userPk(USER), sk } }))).Item;
    expect(await at('BATCH#batch-906-908')).toBeUndefined();
    expect(await logs.get(USER, 'batch-906-908')).toEqual(old);
    expect((await at(keys.summarySk('summary-906-908')))?.text).toBe('Night summary under the old key: the frag swap.');

    // Nightly: the day's turns, the two batches over them read through their summaries.
    const nightly = await runJob('nightly', '2026-03-10T03:00:00.000Z', day.map((t) => t.turnId));
    expect(nightly.run).toMatchObject({ messagesReviewed: 10, summariesReviewed: 2, turnsSummarised: 8 });
    const wholeBatches = await wholeRead(keys.batchPrefix);
    const wholeSummaries = await wholeRead(keys.summaryPrefix);
    // The whole history is many units; the night's reads are its few items (half a unit each per 4 KB).
    expect(wholeBatches).toBeGreaterThan(5);
    expect(wholeSummaries).toBeGreaterThan(5);
    expect(nightly.queryUnits('BATCH#')).toBeLessThanOrEqual(0.5);
    expect(nightly.queryUnits('SUMMARY#')).toBeLessThanOrEqual(0.5);
    expect(nightly.used['ItemKind.BATCH#|Query']?.requests).toBe(1);

    // Weekly: the week's three batches, its four summaries and the night's findings; nothing older.
    const weekly = await runJob('weekly', '2026-03-10T04:00:00.000Z', []);
    const request = stack.emulators.converse.requests.at(-1);
    const prompt = JSON.stringify(request ?? {});
    for (const text of ['planning a trip to Lisbon', 'Lisbon, the tram and the tiles', 'corals that grow fast', 'the frag swap', 'topic-908', 'topic-860']) expect(prompt).toContain(text);
    expect(prompt).not.toContain('Old summary');
    expect(prompt).not.toContain('topic-600');
    expect(weekly.run).toMatchObject({ summariesReviewed: 3 + 4 + nightly.run.stored.length, sessionsReviewed: 4 });
    // Its read passes the window by one page at most (16 items), not the 150 of each kind before it.
    expect(weekly.queryUnits('BATCH#')).toBeLessThan(wholeBatches / 4);
    expect(weekly.queryUnits('SUMMARY#')).toBeLessThan(wholeSummaries / 4);
    expect(iamDenials(stack)).toEqual([]);
  }, 180_000);
});
