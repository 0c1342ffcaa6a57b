/**
 * The reflector within its time, through the real handlers on the local stack, which ends an
 * invocation at its function's timeout as Lambda does (infra/local/event-source.ts): here the
 * reflector's timeout is 20 s, so a job's model calls are abandoned 5 s into a delivery
 * (MODEL_CALL_RESERVE_MS before the end). Nothing below depends on how long anything took:
 * a model that never answers either ends in the job's retry path or in a timeout, and the
 * test tells which.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerNameOf } from '../../infra/local/converse-protocol.js';
import { offlineResponder } from '../../infra/local/converse-server.js';
import { ledgerDelta, requestLedger } from '../../infra/local/request-ledger.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { QUEUES } from '../../infra/resources.js';
import { bucketReader } from '../helpers/s3.js';
import { iamDenials } from '../helpers/iam.js';

/** The reflector's timeout on this stack: MODEL_CALL_RESERVE_MS (15 s) and 5 s for the model. */
const REFLECTOR_TIMEOUT_SECONDS = 20;

let stack: LocalStack;
let bucket: ReturnType<typeof bucketReader>;

beforeAll(async () => {
  stack = await startLocalStack({ stage: 'limitstest', logLevel: 'SILENT', speed: 300, timeouts: { reflector: REFLECTOR_TIMEOUT_SECONDS } });
  bucket = bucketReader(stack.info);
}, 120_000);
afterAll(async () => {
  bucket?.destroy();
  await stack?.stop();
});

const event = (userId: string, turnId: number, query: string) =>
  JSON.stringify({ type: 'turn.saved', version: 1, userId, sessionId: 's1', turnId, timestamp: `2026-02-06T14:${String(turnId).padStart(2, '0')}:00Z`, query, response: 'Tell me more.' });
const tenTurns = (userId: string) => Array.from({ length: 10 }, (_, i) => event(userId, i + 1, i === 0 ? 'I adopted a beagle named Rex.' : `entry${i}`));

describe('a model that never answers', () => {
  it('ends each delivery in the retry path with time to spare, never in a timeout; the last delivery records the failure', async () => {
    const ledger = requestLedger.snapshotByScope().reflector ?? {};
    const before = await stack.summary();
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
    const s = await stack.summary();
    // No invocation ran into the function's timeout: each abandoned its call and failed the record itself.
    expect(stack.sources.reflection.stats.timeouts).toBe(0);
    expect(stack.sources.reflection.stats.handlerErrors).toBe(0);
    // One call per delivery (an abandoned call is not retried by the SDK), on every delivery SQS makes.
    expect(hung).toBe(QUEUES.reflection.maxReceiveCount);
    // The first delivery's failure came back after the model retry delay, as for any unavailable model.
    expect(ledgerDelta(ledger, requestLedger.snapshotByScope().reflector ?? {})['SQS.ChangeMessageVisibility']?.requests).toBe(1);
    // The last delivery recorded why before SQS parked the job.
    const failed = JSON.parse(await bucket.text('users/hung-user/Logs/reflector/failed/batch-1-10.json'));
    expect(failed).toMatchObject({ status: 'aborted', error: { message: expect.stringMatching(/ModelUnavailableError: .*call abandoned: the invocation's time was running out/) } });
    expect(s.batches - before.batches).toBe(0);
    expect(s.errors - before.errors).toBe(1);
    expect(iamDenials(stack)).toEqual([]);
  }, 300_000);
});
