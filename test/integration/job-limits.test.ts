/**
 * The reflector within its limits, through the real handlers on the local harness.
 *
 * Time: the local harness ends an invocation at its function's timeout as Lambda does
 * (infra/local/event-source.ts); here the reflector's timeout is 20 s, so a job's model calls
 * are abandoned 5 s into a delivery (MODEL_CALL_RESERVE_MS before the end). Nothing below
 * depends on how long anything took: a model that never answers either ends in the job's
 * retry path or in a timeout, and the test tells which.
 *
 * Receives: a forget goes on in fresh jobs, not in redeliveries that count towards the queue's
 * maxReceiveCount. Its pages are made small (FORGET_PAGE_SIZE, FORGET_PAGES_PER_JOB) so that a
 * few dozen items take more continuations than the queue allows receives.
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenTurns } from '../helpers/turn-lines.js';
import { MemoryClient } from '../../functions/api/client.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import { answerNameOf } from '../../infra/local/converse-protocol.js';
import { offlineResponder } from '../../infra/local/converse-server.js';
import { ledgerDelta, requestLedger } from '../../infra/local/request-ledger.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { QUEUES } from '../../infra/resources.js';
import { bucketReader } from '../helpers/s3.js';
import { iamDenials } from '../helpers/iam.js';

/** The reflector's timeout on this stack: MODEL_CALL_RESERVE_MS (15 s) and 5 s for the model. */
const REFLECTOR_TIMEOUT_SECONDS = 20;

/** A forget's page on this stack: items per Query, versions per listing; one page a job. */
const PAGE_SIZE = 4;

let stack: LocalHarness;
let bucket: ReturnType<typeof bucketReader>;

beforeAll(async () => {
  stack = await startHarness({
    stage: 'limitstest',
    logLevel: 'SILENT',
    speed: 300,
    timeouts: { reflector: REFLECTOR_TIMEOUT_SECONDS },
    environment: { reflector: { FORGET_PAGE_SIZE: String(PAGE_SIZE), FORGET_PAGES_PER_JOB: '1' } },
  });
  bucket = bucketReader(stack.info);
}, 120_000);
afterAll(async () => {
  bucket?.destroy();
  await stack?.stop();
});

describe('a model that never answers', () => {
  it('ends each delivery in the retry path with time to spare, never in a timeout; the last delivery records the failure', async () => {
    const ledger = requestLedger.snapshotByScope().reflector ?? {};
    const before = await stack.report();
    let hung = 0;
    stack.emulators.converse.setResponder((req) => {
      if (!answerNameOf(req)) return offlineResponder(req); // summaries still answer
      hung++;
      return { hang: true };
    });
    try {
      await stack.replayLines(tenTurns('hung-user'));
      await stack.waitUntilDrained({ timeoutMs: 240_000 });
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    const s = await stack.report();
    // No invocation ran into the function's timeout: each abandoned its call and failed the record itself.
    expect(stack.sources.job.stats.timeouts).toBe(0);
    expect(stack.sources.job.stats.handlerErrors).toBe(0);
    // One call per delivery (an abandoned call is not retried by the SDK), on every delivery SQS makes.
    expect(hung).toBe(QUEUES.job.maxReceiveCount);
    // The first delivery's failure came back after the model retry delay, as for any unavailable model.
    expect(
      ledgerDelta(ledger, requestLedger.snapshotByScope().reflector ?? {})['SQS.ChangeMessageVisibility']?.requests,
    ).toBe(1);
    // The last delivery recorded why before SQS parked the job.
    const failed = JSON.parse(await bucket.text('users/hung-user/Logs/reflector/failed/batch-1-10.json'));
    expect(failed).toMatchObject({
      status: 'aborted',
      error: {
        message: expect.stringMatching(
          /ModelUnavailableError: .*call abandoned: the invocation's time was running out/,
        ),
      },
    });
    expect(s.batches - before.batches).toBe(0);
    expect(s.errors - before.errors).toBe(1);
    expect(iamDenials(stack)).toEqual([]);
  }, 300_000);
});

describe('a forget of more pages than the queue allows receives', () => {
  it('goes on in fresh jobs, each sent once, and erases everything: nothing retried, nothing parked', async () => {
    const user = 'big-forget';
    const ddb = createDocumentClient(createDynamoDbClient());
    const s3 = new S3Client({
      region: stack.info.region,
      endpoint: stack.info.endpoints.s3,
      forcePathStyle: true,
      credentials: stack.info.credentials,
    });
    const items = 40;
    for (let i = 0; i < items; i += 25) {
      const batch = Array.from({ length: Math.min(25, items - i) }, (_, j) => ({
        PutRequest: { Item: { pk: keys.userPk(user), sk: `NOTE#${String(i + j).padStart(4, '0')}`, text: 'x' } },
      }));
      await ddb.send(new BatchWriteCommand({ RequestItems: { [stack.info.tableName]: batch } }));
    }
    for (let i = 0; i < 6; i++)
      await s3.send(
        new PutObjectCommand({ Bucket: stack.info.bucketName, Key: `users/${user}/notes/${i}.md`, Body: 'x' }),
      );
    const ledger = requestLedger.snapshotByScope().reflector ?? {};
    const before = await stack.report();
    const failedBefore = stack.sources.job.stats.failedRecords;

    const own = new MemoryClient(stack.info.apiUrl, async () => stack.mintUserToken([user], user));
    await own.forget(user);
    await stack.waitUntilDrained({ timeoutMs: 240_000 });

    const { receipt } = await own.forgetReceipt(user);
    expect(receipt.status).toBe('done');
    expect(receipt.counts).toMatchObject({ items: expect.any(Number), objects: 6 });
    expect(receipt.counts.items).toBeGreaterThanOrEqual(items);
    const left = await ddb.send(
      new QueryCommand({
        TableName: stack.info.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.userPk(user) },
      }),
    );
    expect(left.Items ?? []).toEqual([]);
    expect(await bucket.list(`users/${user}/`)).toEqual([]);
    // At least 12 pages, one a job: more continuations (each a message the reflector sent to its own queue) than the queue's receives.
    const d = ledgerDelta(ledger, requestLedger.snapshotByScope().reflector ?? {});
    expect(d['SQS.SendMessage']?.requests ?? 0).toBeGreaterThan(QUEUES.job.maxReceiveCount);
    // None of them failed and came back: no visibility change, no failed record, nothing in a DLQ.
    expect(d['SQS.ChangeMessageVisibility']?.requests ?? 0).toBe(0);
    expect(stack.sources.job.stats.failedRecords - failedBefore).toBe(0);
    expect((await stack.report()).errors - before.errors).toBe(0);
    expect(iamDenials(stack)).toEqual([]);
    s3.destroy();
    ddb.destroy();
  }, 300_000);
});
