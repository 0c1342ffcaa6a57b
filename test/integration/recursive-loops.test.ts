/**
 * Lambda's recursive loop detection on the local harness (infra/local/recursive-loop.ts): the idle
 * check that puts itself back on its own queue is one chain of requests, and Lambda stops it after
 * 16 invocations unless the synthesized idle function says RecursiveLoop: Allow
 * (https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html).
 *
 * speed 900: SQS's longest delay, 15 minutes, is one second here, so a wait takes as many hops as
 * in AWS (lib/signals/idle-rule.ts `planAt`). A user's threshold of 12 hours is 48 hops of
 * 15 minutes after their last turn in AWS. Locally a hop takes its second plus the event source's
 * polling, and the clock runs on meanwhile, so it takes fewer: still past 16 unless a hop takes
 * three times its second. What the tests assert is counted (hops, summaries, stopped records).
 */
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { keys } from '../../lib/kernel/memory-paths.js';

const SPEED = 900;
/** A user's threshold: 48 hops of SQS's longest delay. */
const THRESHOLD_MINUTES = 12 * 60;
/** Simulated minutes as real milliseconds at SPEED. */
const minutes = (n: number) => (n * 60_000) / SPEED;

const turn = (userId: string, turnId: number): TurnSaved => ({
  type: 'turn.saved',
  version: 1,
  userId,
  sessionId: 's1',
  turnId,
  timestamp: '2026-02-06T14:00:00Z',
  query: `Still planning the reef tank move, step ${turnId}.`,
  response: 'Tell me more.',
});

async function setIdleMinutes(stack: LocalHarness, userId: string, idleMinutes: number): Promise<void> {
  const res = await fetch(`${stack.info.apiUrl}/v1/users/${userId}/settings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ idleMinutes }),
  });
  expect(res.status).toBe(200);
}

async function summaries(stack: LocalHarness, userId: string): Promise<Array<Record<string, unknown>>> {
  const ddb = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: stack.info.region,
      credentials: stack.info.credentials,
      endpoint: stack.info.endpoints.dynamodb,
    }),
  );
  try {
    const res = await ddb.send(
      new QueryCommand({
        TableName: stack.info.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :s)',
        ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':s': keys.summaryPrefix },
      }),
    );
    return res.Items ?? [];
  } finally {
    ddb.destroy();
  }
}

describe('the idle function at Lambda’s default (RecursiveLoop left out: Terminate)', () => {
  let stack: LocalHarness;
  beforeAll(async () => {
    stack = await startHarness({ stage: 'loops-off', logLevel: 'SILENT', speed: SPEED, recursiveLoops: {} });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await stack?.stop();
  });

  it('stops the check after 16 invocations, as Lambda does: no summary, the check in the DLQ, a warning', async () => {
    expect(stack.synthesized.functions.idle.recursiveLoop).toBeUndefined();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    await setIdleMinutes(stack, 'patient-user', THRESHOLD_MINUTES);
    await stack.publisher.publish([1, 2, 3, 4, 5].map((n) => turn('patient-user', n)));
    await stack.waitUntilDrained();

    expect(stack.sources.idle.stats.longestChain).toBe(16);
    expect(stack.sources.idle.stats.recursionStopped).toBe(1);
    expect(await summaries(stack, 'patient-user')).toEqual([]);
    const lines = warn.mock.calls.map((c) => JSON.parse(String(c[0])) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        function: stack.synthesized.functions.idle.functionName,
        invocations: 16,
        sentTo: stack.info.queues.idle.dlqUrl,
      }),
    );
    const sqs = new SQSClient({
      region: stack.info.region,
      credentials: stack.info.credentials,
      endpoint: stack.info.endpoints.sqs,
    });
    try {
      const parked = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: stack.info.queues.idle.dlqUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      expect((parked.Messages ?? []).map((m) => JSON.parse(m.Body ?? '{}').userId)).toEqual(['patient-user']);
    } finally {
      sqs.destroy();
    }
  }, 120_000);
});

describe('the idle function as the stack synthesizes it (RecursiveLoop: Allow)', () => {
  let stack: LocalHarness;
  beforeAll(async () => {
    stack = await startHarness({ stage: 'loops-on', logLevel: 'SILENT', speed: SPEED });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('a session of three simulated hours, a turn every 4 minutes, gets its one idle summary after a 12-hour threshold', async () => {
    expect(stack.synthesized.functions.idle.recursiveLoop).toBe('Allow');
    await setIdleMinutes(stack, 'talkative-user', THRESHOLD_MINUTES);
    const turns = (3 * 60) / 4;
    for (let n = 1; n <= turns; n++) {
      await stack.publisher.publish([turn('talkative-user', n)]);
      await new Promise((r) => setTimeout(r, minutes(4)));
    }
    await stack.waitUntilDrained();

    const written = await summaries(stack, 'talkative-user');
    expect(written.map((s) => s.sk)).toEqual([keys.summarySk(`summary-1-${turns}`)]);
    // The chain that found the user idle ran past Lambda's 16; nothing was stopped.
    expect(stack.sources.idle.stats.longestChain).toBeGreaterThan(16);
    expect(stack.sources.idle.stats.recursionStopped).toBe(0);
  }, 240_000);
});
