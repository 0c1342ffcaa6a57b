/**
 * The real reflector handler against the messy model (infra/local/messy-model.ts) at a high
 * rate: the bundled sample's first 20 turns replayed through the queues, nearly every structured answer written
 * as real models get them wrong. What still carries an answer is used; only answers with no
 * usable content (empty, or cut twice) may abort a batch, and nothing reaches a DLQ.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { bucketReader } from '../helpers/s3.js';

let stack: LocalHarness;
let bucket: ReturnType<typeof bucketReader>;

beforeAll(async () => {
  stack = await startHarness({ stage: 'itest', logLevel: 'SILENT', speed: 300, messyModel: { rate: 0.9, seed: 1 } });
  bucket = bucketReader(stack.info);
});
afterAll(async () => {
  bucket?.destroy();
  await stack?.stop();
});

describe('the pipeline with the messy model', () => {
  it('recovers every messy answer that still carries one; only empty or cut ones abort', async () => {
    // A short replay: the bundled sample's first two batches.
    const lines = readFileSync(new URL('../../events/samples/conversation.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .slice(0, 20);
    await stack.replayLines(lines);
    await stack.waitUntilDrained();
    const s = await stack.report();
    expect(s).toMatchObject({ turns: 20, batches: 2, errors: 0 });
    expect(s.messyAnswers).toBeGreaterThanOrEqual(2);
    expect(s.messyAnswers).toBe(Object.values(s.messyKinds).reduce((a, b) => a + b, 0));
    // Messes that still carry an answer were drawn (a batch that met one and could not read it would abort with another reason).
    expect(s.messyAnswers - s.messyKinds.empty - s.messyKinds.cut).toBeGreaterThanOrEqual(1);

    const batches = (await stack.scanItems()).filter((i) => String(i.sk).startsWith('BATCH#'));
    const logs = await Promise.all(
      batches.map((b) => bucket.batchLog('locomo-conv-26', String(b.batchId ?? String(b.sk).slice('BATCH#'.length)))),
    );
    expect(logs).toHaveLength(2);
    for (const log of logs) {
      if (log.status === 'aborted') expect(log.error?.message).toMatch(/holds no JSON object|stopReason max_tokens/);
      else expect(log.status).toBe('completed');
    }
    // At this rate most answers were messy, yet batches completed from them (the parser recovered them).
    expect(logs.filter((l) => l.status === 'completed').length).toBeGreaterThanOrEqual(1);
    expect(s.staged).toBeGreaterThanOrEqual(1);
  });
});
