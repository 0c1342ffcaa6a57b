import { describe, expect, it } from 'vitest';
import {
  BATCH_RECORD_LIMITS,
  type BatchEntry,
  BatchJobStateChangeSchema,
  batchJobName,
  batchRecordId,
  chooseInference,
  completionOf,
  inputJsonl,
  parseOutputJsonl,
} from '../../lib/batch-inference/batch-inference.js';
import { promptedAnswerNameOf } from '../../lib/model/prompted-answer.js';
import { modelSchemaOf } from '../../lib/model/model-schema.js';
import { NIGHTLY_TOOL, NightlyOutputSchema } from '../../lib/sleep-time/nightly.js';

const R1 = batchRecordId('u1', 'nightly-202611280300-chunk-0');
const R2 = batchRecordId('u2', 'nightly-202611280300-chunk-0');

const entry = (i: number): BatchEntry => ({
  recordId: batchRecordId(`u${i}`, 'nightly-202611280300-chunk-0'),
  userId: `u${i}`,
  key: `nightly-202611280300-chunk-0`,
  request: {
    system: 'You reflect on a day.',
    prompt: `turns of user ${i}`,
    toolName: NIGHTLY_TOOL.name,
    toolDescription: NIGHTLY_TOOL.description,
    toolInputSchema: modelSchemaOf(NightlyOutputSchema),
    temperature: 0,
    maxTokens: 2000,
  },
});

describe('batch inference records', () => {
  it('uses one job from the minimum number of records up to the maximum, else on demand', () => {
    const limits = { minRecords: 100, maxRecords: 1000 };
    expect(chooseInference(99, limits)).toBe('on-demand');
    expect(chooseInference(100, limits)).toBe('batch');
    expect(chooseInference(1000, limits)).toBe('batch');
    expect(chooseInference(1001, limits)).toBe('on-demand');
    expect(chooseInference(0, BATCH_RECORD_LIMITS)).toBe('on-demand');
  });

  it('writes one JSON line per record: an alphanumeric recordId and a Converse body with the answer type in the prompt', () => {
    const lines = inputJsonl([entry(1), entry(2)]).split('\n');
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '') as { recordId: string; modelInput: Record<string, unknown> };
    expect(first.recordId).toMatch(/^[A-Za-z0-9]+$/);
    expect(first.recordId).toBe(R1);
    expect(Object.keys(first.modelInput).sort()).toEqual(['inferenceConfig', 'messages', 'system']);
    const system = first.modelInput.system as Array<{ text: string }>;
    expect(promptedAnswerNameOf(system.at(-1)?.text ?? '')).toBe(NIGHTLY_TOOL.name);
    expect(first.modelInput).not.toHaveProperty('toolConfig');
    expect(first.modelInput.messages).toEqual([{ role: 'user', content: [{ text: 'turns of user 1' }] }]);
  });

  it('reads answers and errors from the output file, in any order, skipping lines it cannot read', () => {
    const out = [
      JSON.stringify({
        recordId: R2,
        modelInput: {},
        error: { errorCode: 400, errorMessage: 'bad request' },
      }),
      'not json',
      JSON.stringify({
        recordId: R1,
        modelInput: {},
        modelOutput: {
          output: { message: { role: 'assistant', content: [{ text: 'Here: {"findings":[]}' }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 120, outputTokens: 8, totalTokens: 128 },
          metrics: { latencyMs: 900 },
        },
      }),
    ].join('\n');
    const results = parseOutputJsonl(out, 'm1');
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual({ recordId: R2, error: expect.stringContaining('bad request') });
    expect(results[1]).toEqual({
      recordId: R1,
      response: {
        output: { findings: [] },
        usage: {
          modelId: 'm1',
          inputTokens: 120,
          outputTokens: 8,
          latencyMs: 900,
          stopReason: 'end_turn',
          batchInference: true,
        },
      },
    });
  });

  it('reads the answers of a completed or partly completed job, and runs on demand after a failed, stopped or expired one', () => {
    expect(completionOf('Completed')).toBe('answers');
    expect(completionOf('PartiallyCompleted')).toBe('answers');
    for (const s of ['Failed', 'Stopped', 'Expired'] as const) expect(completionOf(s)).toBe('on-demand');
    for (const s of ['Submitted', 'Validating', 'Scheduled', 'InProgress', 'Stopping'] as const)
      expect(completionOf(s)).toBe('wait');
  });

  it("reads Bedrock's state change event and refuses another source's, naming the field", () => {
    const event = {
      source: 'aws.bedrock',
      'detail-type': 'Batch Inference Job State Change',
      detail: {
        batchJobArn: 'arn:aws:bedrock:us-east-1:1:model-invocation-job/abc',
        batchJobName: 'x',
        status: 'Expired',
      },
    };
    expect(BatchJobStateChangeSchema.parse(event).detail.status).toBe('Expired');
    const wrong = BatchJobStateChangeSchema.safeParse({ ...event, source: 'aws.batch' });
    expect(wrong.success).toBe(false);
    expect(wrong.error?.issues[0]?.path).toEqual(['source']);
  });

  it('names a record by its user and answer key, not by its place: a re-collection in another order maps the same', () => {
    const id = batchRecordId('alice', 'nightly-202611280300-chunk-0');
    expect(id).toMatch(/^[A-Za-z0-9]+$/);
    expect(batchRecordId('alice', 'nightly-202611280300-chunk-0')).toBe(id);
    expect(batchRecordId('bob', 'nightly-202611280300-chunk-0')).not.toBe(id);
    expect(batchRecordId('alice', 'nightly-202611280300-chunk-1')).not.toBe(id);
  });

  it('names one job per stage and sweep run within the API pattern', () => {
    const name = batchJobName('memory-prod', 'nightly-202611280300');
    expect(name).toBe('memory-prod-nightly-202611280300');
    expect(batchJobName('memory-dev', 'nightly-202611280300')).not.toBe(name);
    expect(name).toMatch(/^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9+\-.]){0,63}$/);
    expect(name.length).toBeLessThanOrEqual(63);
  });
});
