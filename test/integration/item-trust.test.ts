/**
 * Req R-SCOPE-2 for every kind of item, on the local harness with IAM enforced: outcomes through
 * the memory API move the trust of Knowledge facts and turns (their trust records in DynamoDB),
 * outcomes sent at once all count, search ranks by trust, and the reflector's compaction folds
 * it into the segments it writes.
 */
import { readFileSync } from 'node:fs';
import { S3Client } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionClients } from '../../infra/local/clients.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoDiaryStore } from '../../lib/diary/dynamo-diary-store.adapter.js';
import { DynamoItemTrustStore } from '../../lib/trust/dynamo-item-trust-store.adapter.js';
import { DynamoTurnLog } from '../../lib/search/dynamo-turn-log.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoMemoryItemStore } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoS3SummaryStore } from '../../lib/summaries/summary-store.adapter.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import { StoreMemoryCatalog } from '../../lib/search/memory-catalog.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { apiRequest } from '../helpers/api.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';

const USER = 'trust-user';
let stack: LocalHarness;

beforeAll(async () => {
  stack = await startHarness({ stage: 'trusttest', logLevel: 'SILENT' });
  // Three turns of the sample conversation, as this user's, through the real pipeline.
  const lines = readFileSync(new URL('../../events/samples/conversation.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .slice(0, 3)
    .map((l) => l.replaceAll('locomo-conv-26', USER));
  await stack.replayLines(lines, { clock: true });
  await stack.waitUntilDrained();
  // Two Knowledge facts alike in all but their paths (no source turns: one would hide the other as redundant).
  const ddb = createDocumentClient(createDynamoDbClient());
  const s3 = new S3Client({
    region: stack.info.region,
    endpoint: stack.info.endpoints.s3,
    forcePathStyle: true,
    credentials: stack.info.credentials,
  });
  const knowledge = new DynamoS3KnowledgeStore({
    ddb,
    s3,
    tableName: stack.info.tableName,
    bucketName: stack.info.bucketName,
    changes: new DynamoSearchChangeLog({ ddb, tableName: stack.info.tableName }),
  });
  const text = 'The reef tank holds salt water, two clownfish and a cleaner shrimp.';
  await knowledge.putKnowledge(
    USER,
    ['Facts/reef_a.md', 'Facts/reef_b.md'].map((path) => ({
      path,
      markdown: `---\ntitle: reef tank\n---\n\n# reef tank\n\n${text}\n`,
      doc: {
        id: path,
        title: 'reef tank',
        text,
        summary: text,
        category: 'Facts' as const,
        confidence: 0.6,
        sourceTurns: [],
        promotedAt: '2023-05-08T14:00:00.000Z',
      },
    })),
  );
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

const call = (method: string, path: string, body?: unknown) =>
  apiRequest(`${stack.info.apiUrl}/v1/users/${USER}${path}`, stack.info.adminToken, method, body);
const outcome = (ids: string[], validation: string) => call('POST', '/memory/outcomes', { ids, validation });
const ranked = async () =>
  (
    (await call('POST', '/memory/search', { query: 'reef tank clownfish shrimp', filters: { kind: ['knowledge'] } }))
      .body.results as Array<{ id: string; quality: number }>
  ).map((r) => [r.id, r.quality]);
const A = 'knowledge:Facts/reef_a.md';
const B = 'knowledge:Facts/reef_b.md';

/** The reflector's compaction of the user's index, with the reflector's clients and grants. */
function reflectorIndex(): LiveSearchIndex {
  const { ddb, s3 } = functionClients('reflector', stack.iam);
  const { tableName: table, bucketName: bucket } = stack.info;
  const changes = new DynamoSearchChangeLog({ ddb, tableName: table }, { expiring: true });
  const catalog = new StoreMemoryCatalog({
    turns: new DynamoS3TurnStore({ ddb, s3, tableName: table, bucketName: bucket, changes }),
    knowledge: new DynamoS3KnowledgeStore({ ddb, s3, tableName: table, bucketName: bucket, changes }),
    summaries: new DynamoS3SummaryStore({ ddb, s3, tableName: table, bucketName: bucket, changes }),
    items: new DynamoMemoryItemStore({ ddb, tableName: table, changes }),
    diary: new DynamoDiaryStore({ ddb, tableName: table, changes }),
    trust: new DynamoItemTrustStore({ ddb, tableName: table, changes }),
    stagedExpiryDays: 14,
  });
  return new LiveSearchIndex({
    store: new DynamoS3SearchIndexStore({ ddb, s3, tableName: table, bucketName: bucket }),
    catalog,
    clock: { now: () => stack.now() },
    marks: { lagMs: 0 },
    turns: new DynamoTurnLog({ ddb, tableName: table }),
  });
}

describe('trust for every kind of item (req R-SCOPE-2), on the local harness', () => {
  it('moves the trust of a Knowledge fact and a turn, and search ranks a fact a FAIL lowered below its twin', async () => {
    expect(await ranked()).toEqual([
      [A, 0.6],
      [B, 0.6],
    ]);
    const res = await outcome([A, 'turn:1', 'turn:404'], 'FAIL');
    expect(res.status).toBe(200);
    expect(res.body.changes).toEqual([
      { id: A, trustFrom: 0.6, trustTo: 0.4, scopeFrom: 'user', scopeTo: 'user' },
      { id: 'turn:1', trustFrom: 0.5, trustTo: 0.3, scopeFrom: 'user', scopeTo: 'user' },
    ]);
    expect(res.body.skipped.map((s: { id: string }) => s.id)).toEqual(['turn:404']);
    expect((await call('POST', '/memory/retrieve', { id: 'turn:1' })).body.item.quality).toBe(0.3);
    expect(await ranked()).toEqual([
      [B, 0.6],
      [A, 0.4],
    ]);
    const audit = (await call('GET', `/memory/audit?itemId=${encodeURIComponent(A)}`)).body.entries;
    expect(audit[0]).toMatchObject({ action: 'trust', from: 'trust 0.6', to: 'trust 0.4', reason: 'validation FAIL' });
    // The reflector's compaction folds the trust into the segment it writes; searches still rank by it.
    expect((await reflectorIndex().compact(USER)).folded).toBeGreaterThan(0);
    expect(await ranked()).toEqual([
      [B, 0.6],
      [A, 0.4],
    ]);
  });

  it('counts every one of several outcomes sent at once', async () => {
    const answers = await Promise.all([1, 2, 3, 4].map(() => outcome(['turn:2', B], 'APPROVE')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    // Each outcome moved from where another left it: four distinct steps, none lost.
    expect(answers.map((a) => a.body.changes[0].trustTo).sort()).toEqual([0.6, 0.7, 0.8, 0.9]);
    expect((await call('POST', '/memory/retrieve', { id: 'turn:2' })).body.item.quality).toBe(0.9);
    const ddb = createDocumentClient(createDynamoDbClient());
    const record = await ddb.send(
      new GetCommand({
        TableName: stack.info.tableName,
        Key: { pk: keys.ownerPk(USER), sk: keys.trustSk('turn:2') },
        ConsistentRead: true,
      }),
    );
    expect(record.Item).toMatchObject({ itemId: 'turn:2', adjustment: 0.4, outcomes: 4 });
    expect((await ranked())[0]).toEqual([B, 1]);
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['api', 'reflector', 'signal']));
    expect(iamDenials(stack)).toEqual([]);
  });
});
