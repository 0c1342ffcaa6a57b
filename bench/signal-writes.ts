/**
 * Benchmark: AWS requests the signal function makes per turn, counted by the
 * request ledger (an SDK middleware), on DynamoDB Local. The function is invoked directly
 * with full 10-record SQS batches, as Lambda's FIFO event source delivers them (the
 * local poller gets one message per group per receive from fauxqs).
 */
import { lambdaContext } from '../infra/local/lambda-context.js';
import { sqsEvent } from '../infra/local/lambda-events.js';
import { startHarness } from '../infra/local/harness.js';
import { ledgerDelta, requestLedger } from '../infra/local/request-ledger.js';
import { turnLine } from './turn-line.js';

export interface SignalWriteRow {
  scenario: string;
  turns: number;
  ddbWriteRequests: number;
  ddbWriteUnits: number;
  ddbReadRequests: number;
  s3Puts: number;
  sqsSends: number;
}

const turn = (userId: string, turnId: number) =>
  turnLine(userId, turnId, {
    at: new Date(Date.UTC(2026, 1, 6, 14, turnId)),
    query: `Message ${turnId} about reef tanks and lighting for corals`,
    response: 'A reply of ordinary length, a sentence or two about the question.',
  });

export async function benchSignalWrites(): Promise<SignalWriteRow[]> {
  const stack = await startHarness({ stage: 'bench', logLevel: 'SILENT' });
  try {
    await Promise.all(Object.values(stack.sources).map((s) => s.stop()));
    const handler = stack.handlers.signal;
    const run = async (scenario: string, bodies: Array<{ body: string; groupId: string }>): Promise<SignalWriteRow> => {
      const before = requestLedger.snapshot();
      const res = await handler(sqsEvent(bodies), lambdaContext('bench-signal', 30));
      if (res.batchItemFailures.length > 0)
        throw new Error(`${scenario}: ${res.batchItemFailures.length} records failed`);
      const d = ledgerDelta(before, requestLedger.snapshot());
      const sum = (pred: (k: string) => boolean, f: 'requests' | 'writeUnits') =>
        Object.entries(d)
          .filter(([k]) => pred(k))
          .reduce((n, [, v]) => n + v[f], 0);
      const isWrite = (k: string) =>
        /^DynamoDB\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/.test(k);
      const n = bodies.length;
      return {
        scenario,
        turns: n,
        ddbWriteRequests: sum(isWrite, 'requests') / n,
        ddbWriteUnits: sum(isWrite, 'writeUnits') / n,
        ddbReadRequests: sum((k) => k.startsWith('DynamoDB.') && !isWrite(k), 'requests') / n,
        s3Puts: sum((k) => k === 'S3.PutObject', 'requests') / n,
        sqsSends: sum((k) => k.startsWith('SQS.Send'), 'requests') / n,
      };
    };
    const ten = (userId: string, from: number) =>
      Array.from({ length: 10 }, (_, i) => ({ body: turn(userId, from + i), groupId: userId }));
    return [
      await run('one user, first 10 turns (batch fires)', ten('alice', 1)),
      await run('one user, next 10 turns', ten('alice', 11)),
      await run(
        'ten users, one turn each',
        Array.from({ length: 10 }, (_, i) => ({ body: turn(`user-${i}`, 1), groupId: `user-${i}` })),
      ),
    ];
  } finally {
    await stack.stop();
  }
}
