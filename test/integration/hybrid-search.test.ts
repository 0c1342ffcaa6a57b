/**
 * Hybrid retrieval on the local harness, IAM enforced: a stage that embeds (Titan Text
 * Embeddings V2, here the deterministic stand-in of infra/local/embedding-stand-in.ts, which is
 * not a model) has the reflector's compactions store vectors in the segments and the API embed
 * each query once and rank by them too — with no request denied; an embedding model that never
 * answers is abandoned at the reflector's deadline, as its Converse calls are; without the API's
 * grant a search fails, naming the action. Plumbing only: nothing here measures retrieval quality.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { MemoryClient } from '../../functions/api/client.js';
import { stageConfig } from '../../infra/config/stages.js';
import { standInVector } from '../../infra/local/embedding-stand-in.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { type FunctionKey, PERMISSIONS, type Permissions } from '../../infra/permissions.js';
import { createDocumentClient, createS3Client } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoS3SearchIndexStore } from '../../lib/search/search-index-store.adapter.js';
import { iamDenials } from '../helpers/iam.js';
import { turn } from '../../lib/turns/turn.fake.js';

const MODEL = 'amazon.titan-embed-text-v2:0';
const config = { ...stageConfig('dev'), embeddings: { modelId: MODEL, dimensions: 256 } } as const;
const USER = 'hybrid-user';

const TOPICS = [
  'my reef tank and its clownfish',
  'the pottery class on Thursdays',
  'training for the autumn half marathon',
  'my sister moving to Lisbon',
  'learning to bake sourdough bread',
];
const turns = (userId: string, n: number): TurnSaved[] =>
  Array.from({ length: n }, (_, i) =>
    turn({
      userId,
      turnId: i + 1,
      timestamp: new Date(Date.UTC(2026, 1, 6, 14, i)).toISOString(),
      query: `Let me tell you about ${TOPICS[i % TOPICS.length]}, part ${i + 1}`,
      response: 'Noted, thank you.',
    }),
  );

let stack: LocalHarness | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

const client = (s: LocalHarness) => new MemoryClient(s.info.apiUrl, () => s.info.adminToken);

describe('hybrid retrieval on a stage that embeds (deterministic stand-in, IAM enforced)', () => {
  it('stores vectors at compaction, embeds each query once and ranks by them, with no request denied', async () => {
    stack = await startHarness({ stage: 'hybrid', config, logLevel: 'SILENT', speed: 300 });
    const local = stack;
    expect(local.info.environments.api.EMBEDDING_MODEL_ID).toBe(MODEL);
    await local.publisher.publish(turns(USER, 40));
    await local.waitUntilDrained({ timeoutMs: 240_000 });

    // The reflector's compactions wrote segments whose items carry the stand-in's vectors.
    const index = new DynamoS3SearchIndexStore({
      ddb: createDocumentClient(),
      s3: createS3Client(),
      tableName: local.info.tableName,
      bucketName: local.info.bucketName,
    });
    const head = await index.head(USER);
    expect(head.segments.length).toBeGreaterThan(0);
    const segments = await Promise.all(head.segments.map((ref) => index.segment(ref)));
    const vectors = segments.flatMap((s) => [...(s?.embeddings?.scales ?? [])]);
    expect(segments.every((s) => s?.embeddings?.modelId === MODEL && s.embeddings.dimensions === 256)).toBe(true);
    expect(vectors.filter((s) => s > 0).length).toBeGreaterThanOrEqual(32);

    // A question sharing no word with memory: lexically nothing. The stand-in is told to embed it
    // as the sourdough turns are embedded, so only the vector ranking can find them.
    const invocations = local.emulators.converse.invocations;
    const question = 'zymurgy quandary';
    local.emulators.converse.setEmbedder((text, dims, normalize) =>
      standInVector(text === question ? (TOPICS[4] ?? '') : text, dims, normalize),
    );
    const before = invocations.length;
    const found = await client(local).search(USER, { query: question, limit: 5 });
    expect(invocations.slice(before)).toEqual([
      { modelId: MODEL, body: { inputText: question, dimensions: 256, normalize: true } },
    ]);
    expect(found.results.length).toBeGreaterThan(0);
    for (const r of found.results) expect(r.text, r.id).toMatch(/sourdough/);
    // Without the vector (the stand-in back to hashed words), the same question finds nothing.
    local.emulators.converse.setEmbedder(null);
    expect((await client(local).search(USER, { query: question, limit: 5 })).results).toEqual([]);
    expect(iamDenials(local)).toEqual([]);
  }, 360_000);

  it("abandons a compaction's embedding calls at the invocation's deadline, never running into its timeout", async () => {
    // The reflector's timeout here: MODEL_CALL_RESERVE_MS (15 s) and 15 s for the job and its compaction.
    stack = await startHarness({
      stage: 'hybriddeadline',
      config,
      logLevel: 'SILENT',
      speed: 300,
      timeouts: { reflector: 30 },
    });
    const local = stack;
    // The embedding model never answers: the Bedrock client's own timeout (a minute, four attempts) is far past the function's.
    local.emulators.converse.setEmbedder('hang');
    // Too few turns for a job to leave its marks to a compaction (COMPACT_AFTER_JOB): one wait at the deadline, the manual summary's.
    await local.publisher.publish(turns(USER, 5));
    await local.waitUntilDrained({ timeoutMs: 240_000 });
    expect(local.emulators.converse.invocations.filter((i) => i.modelId === MODEL)).toEqual([]);
    // A manual summary's compaction folds whatever marks there are, so it asks for vectors.
    await client(local).call('summaryRequest', {
      params: { userId: USER },
      body: { prompt: 'Summarize the hobbies.' },
    });
    await local.waitUntilDrained({ timeoutMs: 240_000 });
    const reflector = local.sources.job.stats;
    // The compaction asked for vectors, and its calls were abandoned at the deadline: no invocation
    // ran into the function's timeout, none failed, and every job was done.
    expect(local.emulators.converse.invocations.filter((i) => i.modelId === MODEL).length).toBeGreaterThan(0);
    expect(reflector.timeouts).toBe(0);
    expect(reflector.handlerErrors).toBe(0);
    expect(reflector.failedRecords).toBe(0);
    // Nothing was folded without its vectors: no segment was written.
    const index = new DynamoS3SearchIndexStore({
      ddb: createDocumentClient(),
      s3: createS3Client(),
      tableName: local.info.tableName,
      bucketName: local.info.bucketName,
    });
    expect((await index.head(USER)).segments).toEqual([]);
    expect(iamDenials(local)).toEqual([]);
  }, 360_000);

  it("fails a search without the API's InvokeModel grant, naming the action", async () => {
    const permissions = structuredClone(PERMISSIONS) as Record<FunctionKey, Permissions>;
    delete permissions.api.embeddings;
    stack = await startHarness({
      stage: 'hybridnogrant',
      config,
      logLevel: 'SILENT',
      speed: 300,
      iam: { permissions },
    });
    await expect(client(stack).search(USER, { query: 'sourdough bread', limit: 5 })).rejects.toThrow();
    expect(iamDenials(stack)[0]).toMatch(
      /^api: BedrockRuntime\.InvokeModel — bedrock:InvokeModel on arn:aws:bedrock:us-east-1::foundation-model\/amazon\.titan-embed-text-v2:0/,
    );
  }, 120_000);
});
