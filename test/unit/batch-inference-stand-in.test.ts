import { describe, expect, it } from 'vitest';
import { memoryS3 } from '../helpers/memory-s3.js';
import { createBatchInferenceStandIn } from '../../infra/local/batch-inference-stand-in.js';
import {
  type BatchEntry,
  type BatchJobStateChange,
  type BatchManifest,
  batchRecordId,
} from '../../lib/batch-inference/batch-inference.js';
import { BedrockBatchInference } from '../../lib/batch-inference/bedrock-batch-inference.adapter.js';
import { modelSchemaOf } from '../../lib/model/model-schema.js';
import {
  NIGHTLY_SYSTEM_PROMPT,
  NIGHTLY_TOOL,
  NightlyOutputSchema,
  nightlyPrompt,
} from '../../lib/sleep-time/nightly.js';

const entries: BatchEntry[] = [1, 2, 3, 4].map((i) => ({
  recordId: batchRecordId(`u${i}`, 'nightly-202611280300-chunk-0'),
  userId: `u${i}`,
  key: 'nightly-202611280300-chunk-0',
  request: {
    system: NIGHTLY_SYSTEM_PROMPT,
    prompt: nightlyPrompt(`[user] I moved to Lisbon in March and I work as a nurse ${i}.`, []),
    toolName: NIGHTLY_TOOL.name,
    toolDescription: NIGHTLY_TOOL.description,
    toolInputSchema: modelSchemaOf(NightlyOutputSchema),
    temperature: 0,
    maxTokens: 2000,
  },
}));

const manifest: BatchManifest = {
  jobName: 'sleep-nightly-202611280300',
  modelId: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
  jobs: [],
  records: entries.map(({ recordId, userId, key }) => ({ recordId, userId, key })),
};

function setUp() {
  const { s3, objects } = memoryS3();
  const events: BatchJobStateChange[] = [];
  const standIn = createBatchInferenceStandIn({ s3, onEvent: async (e) => void events.push(e) });
  const adapter = new BedrockBatchInference({ s3, bucketName: 'b' }, standIn.client, 'arn:aws:iam::1:role/batch');
  return { objects, events, standIn, adapter };
}

describe('batch inference adapter on the local stand-in', () => {
  it('writes the records and the manifest, starts one job per name, and reads every answer back', async () => {
    const { objects, events, standIn, adapter } = setUp();
    const arn = await adapter.start(manifest, entries);
    expect(await adapter.start(manifest, entries)).toBe(arn);
    expect(standIn.jobs).toHaveLength(1);
    expect(objects.get('batch-inference/sleep-nightly-202611280300/input/records.jsonl')?.split('\n')).toHaveLength(4);
    expect(await adapter.manifest(manifest.jobName)).toEqual(manifest);
    expect(await adapter.results(manifest)).toEqual([]);

    await standIn.run();
    expect(events).toEqual([
      {
        source: 'aws.bedrock',
        'detail-type': 'Batch Inference Job State Change',
        detail: { batchJobArn: arn, batchJobName: manifest.jobName, status: 'Completed' },
      },
    ]);
    const results = await adapter.results(manifest);
    expect(results.map((r) => r.recordId).sort()).toEqual(entries.map((e) => e.recordId).sort());
    for (const r of results) {
      if (!('response' in r)) throw new Error(`record ${r.recordId}: ${r.error}`);
      expect(NightlyOutputSchema.safeParse(r.response.output).success).toBe(true);
      expect(r.response.usage.modelId).toBe(manifest.modelId);
    }
    expect(await standIn.run()).toEqual([]);
  });

  it('ends a failed or expired job with no output, and a partly completed one with some', async () => {
    for (const status of ['Failed', 'Expired'] as const) {
      const { events, standIn, adapter } = setUp();
      standIn.setOutcome(status);
      await adapter.start(manifest, entries);
      await standIn.run();
      expect(events.map((e) => e.detail.status)).toEqual([status]);
      expect(await adapter.results(manifest)).toEqual([]);
    }
    const { standIn, adapter } = setUp();
    standIn.setOutcome('PartiallyCompleted');
    await adapter.start(manifest, entries);
    await standIn.run();
    expect(await adapter.results(manifest)).toHaveLength(2);
  });

  it('has no manifest for a job it never started', async () => {
    const { adapter } = setUp();
    expect(await adapter.manifest('sleep-weekly-202611290300')).toBeNull();
  });
});
