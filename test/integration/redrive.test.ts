/**
 * A fault that outlasts the retries — the model down for longer than a job's two
 * deliveries (req R-ERR-1, R-ERR-2: retry once) — parks the jobs in the DLQ with their reason;
 * once the model is back, the redrive sends them back and they complete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { offlineResponder } from '../../infra/local/converse-server.js';
import { redriveDeadLetters } from '../../infra/local/redrive.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { batchFailureKey } from '../../lib/kernel/memory-paths.js';

let stack: LocalHarness;
let modelDown = true;
let sqs: SQSClient;
let s3: S3Client;

const turn = (turnId: number) =>
  JSON.stringify({
    type: 'turn.saved',
    version: 1,
    userId: 'redrive-user',
    sessionId: 's1',
    turnId,
    timestamp: new Date(Date.UTC(2026, 3, 1, 9, turnId)).toISOString(),
    query: `I moved to Lisbon in March and I work as a ceramicist, note ${turnId}.`,
    response: `Noted: Lisbon since March, ceramics (${turnId}).`,
  });

beforeAll(async () => {
  stack = await startHarness({
    stage: 'redrive',
    responder: (req) =>
      modelDown
        ? { status: 503, errorType: 'ServiceUnavailableException', message: 'model down (test outage)' }
        : offlineResponder(req),
  });
  const common = { region: stack.info.region, credentials: stack.info.credentials };
  sqs = new SQSClient({ ...common, endpoint: stack.info.endpoints.sqs });
  s3 = new S3Client({ ...common, endpoint: stack.info.endpoints.s3, forcePathStyle: true });
}, 120_000);
afterAll(async () => {
  sqs?.destroy();
  s3?.destroy();
  await stack?.stop();
});

describe('dead-letter queues and the redrive', () => {
  it('park jobs with their reason during a model outage, and complete them when redriven after it', async () => {
    await stack.replayLines(Array.from({ length: 10 }, (_, i) => turn(i + 1)));
    await stack.waitUntilDrained();
    const during = await stack.report();
    expect(during.turns).toBe(10);
    expect(during.errors).toBeGreaterThan(0);

    // A dry run lists (the head of each FIFO group: SQS cannot peek further) and moves nothing.
    const listed = await redriveDeadLetters({ sqs, s3 }, stack.info, { dryRun: true });
    expect(listed.length).toBeGreaterThan(0);
    expect((await stack.report()).errors).toBe(during.errors);
    const batch = listed.find((p) => p.what.includes('job batch-'));
    expect(batch?.queue).toBe('job');
    expect(batch?.receiveCount).toBeGreaterThanOrEqual(2); // two deliveries, plus the receives of the DLQ listing
    expect(batch?.reason).toMatch(/ModelUnavailableError: model .* unavailable/);
    expect(batch?.redriven).toBe(false);
    // The reason is the aborted log the reflector kept on the job's last try.
    const jobId = batch?.what.match(/· job (\S+)/)?.[1] ?? '';
    const failed = await s3.send(
      new GetObjectCommand({ Bucket: stack.info.bucketName, Key: batchFailureKey('redrive-user', jobId) }),
    );
    expect(JSON.parse((await failed.Body?.transformToString()) ?? '{}').status).toBe('aborted');

    modelDown = false;
    const redriven = await redriveDeadLetters({ sqs, s3 }, stack.info);
    expect(redriven.length).toBe(during.errors);
    expect(redriven.every((p) => p.redriven)).toBe(true);
    await stack.waitUntilDrained();
    const after = await stack.report();
    expect(after.errors).toBe(0);
    expect(after.batches).toBe(1);
    expect(after.batchesAborted).toBe(0);
    expect(after.staged).toBeGreaterThan(0);
    expect(after.turns).toBe(10);
    expect(after.duplicates).toBe(0);
  }, 240_000);
});
