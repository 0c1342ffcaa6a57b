/**
 * Rebuilding a user's search index from the stores (docs/search-index.md, "Rebuilding an
 * index"), on the local harness through the real handlers: a late turn (at or below the turns
 * already counted) is found only through its change mark; with the mark lost, neither a search
 * nor a full rewrite of the index (which folds marks) finds it; `npm run reindex` (the admin
 * route `POST /v1/users/{u}/search-index/rebuild`) brings it back, and refuses a non-admin.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { MemoryClient } from '../../functions/api/client.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoDiaryStore } from '../../lib/diary/dynamo-diary-store.adapter.js';
import { DynamoTurnLog } from '../../lib/search/dynamo-turn-log.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoMemoryItemStore } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoS3SummaryStore } from '../../lib/summaries/summary-store.adapter.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import { StoreMemoryCatalog } from '../../lib/search/memory-catalog.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { iamDenials } from '../helpers/iam.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const USER = 'reindex-user';
const LATE_WORDS = 'quokka marmalade zanzibar';

let stack: LocalHarness;
let s3client: S3Client | undefined;
const ddb = createDocumentClient(createDynamoDbClient());
const s3 = () =>
  (s3client ??= new S3Client({
    region: stack.info.region,
    endpoint: stack.info.endpoints.s3,
    forcePathStyle: true,
    credentials: stack.info.credentials,
  }));
const admin = () => new MemoryClient(stack.info.apiUrl, () => stack.info.adminToken);

const turn = (turnId: number, query: string): TurnSaved => ({
  type: 'turn.saved',
  version: 1,
  userId: USER,
  sessionId: 'reindex-s1',
  turnId,
  timestamp: new Date(stack.now().getTime() - (10 - turnId) * 60_000).toISOString(),
  query,
  response: 'Noted.',
});

/** The user's index as the functions build it, for a compaction: the same adapters, the same code. */
function indexOf(): LiveSearchIndex {
  const { tableName: table, bucketName: bucket } = stack.info;
  const changes = new DynamoSearchChangeLog({ ddb, tableName: table });
  const turns = new DynamoS3TurnStore({ ddb, s3: s3(), tableName: table, bucketName: bucket, changes });
  const knowledge = new DynamoS3KnowledgeStore({ ddb, s3: s3(), tableName: table, bucketName: bucket, changes });
  const catalog = new StoreMemoryCatalog({
    turns,
    knowledge,
    summaries: new DynamoS3SummaryStore({ ddb, s3: s3(), tableName: table, bucketName: bucket, changes }),
    items: new DynamoMemoryItemStore({ ddb, tableName: table, changes }),
    diary: new DynamoDiaryStore({ ddb, tableName: table, changes }),
    stagedExpiryDays: 14,
  });
  return new LiveSearchIndex({
    store: new DynamoS3SearchIndexStore({ ddb, s3: s3(), tableName: table, bucketName: bucket }),
    catalog,
    clock: { now: () => stack.now() },
    marks: { lagMs: 5_000 },
    turns: new DynamoTurnLog({ ddb, tableName: table }),
  });
}

async function marks(): Promise<Array<{ sk: string; ids: string[] }>> {
  const res = await ddb.send(
    new QueryCommand({
      TableName: stack.info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(USER), ':p': keys.searchChangePrefix },
      ConsistentRead: true,
    }),
  );
  return (res.Items ?? []).map((i) => ({
    sk: String(i.sk),
    ids: (i.ids as string[] | undefined) ?? [String(i.sk).slice(keys.searchChangePrefix.length)],
  }));
}

const found = async (query: string): Promise<string[]> =>
  (await admin().search(USER, { query, limit: 20 })).results.map((r) => r.id);

/**
 * `npm run reindex -- --local --user U --state FILE`, as an operator runs it. Asynchronously:
 * the stack it calls serves from this process.
 */
function reindex(userId: string, state: string): Promise<{ status: number | null; stderr: string; last: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(ROOT, 'infra/ops/reindex-cli.ts'), '--local', '--user', userId, '--state', state],
      { cwd: ROOT, encoding: 'utf8', timeout: 200_000 },
      (error, stdout, stderr) =>
        resolve({
          status: error ? ((error as { code?: number }).code ?? 1) : 0,
          stderr,
          last: stdout.trim().split('\n').at(-1) ?? '',
        }),
    );
  });
}

beforeAll(async () => {
  stack = await startHarness({ stage: 'reindextest', logLevel: 'SILENT', speed: 300 });
}, 120_000);
afterAll(async () => {
  s3client?.destroy();
  await stack?.stop();
});

describe('npm run reindex (POST /v1/users/{u}/search-index/rebuild)', () => {
  it('finds again a late turn whose change mark was lost, which a full rewrite from the marks does not', async () => {
    await stack.publisher.publish([
      turn(1, 'Reef tank water changes weekly.'),
      turn(2, 'Clownfish like anemones.'),
      turn(4, 'Corals need light.'),
      turn(5, 'Salinity matters.'),
    ]);
    await stack.waitUntilDrained();
    // The index folds turns 1–5: its turn watermark passes 3, which has not arrived.
    await indexOf().compact(USER, 1, { full: true });
    // Turn 3 comes late (redriven, say): at or below the turns counted, it is found through its change mark only.
    await stack.publisher.publish([turn(3, `My ${LATE_WORDS} notes.`)]);
    await stack.waitUntilDrained();
    expect(await found(LATE_WORDS)).toContain('turn:3');
    const marked = (await marks()).filter((m) => m.ids.includes('turn:3'));
    expect(marked.length).toBeGreaterThan(0);

    // The mark is lost (expired unfolded, say): no search finds the turn, nor does a full rewrite of the index, which folds marks.
    for (const m of marked)
      await ddb.send(new DeleteCommand({ TableName: stack.info.tableName, Key: { pk: keys.userPk(USER), sk: m.sk } }));
    expect(await found(LATE_WORDS)).not.toContain('turn:3');
    await indexOf().compact(USER, 1, { full: true });
    expect(await found(LATE_WORDS)).not.toContain('turn:3');
    expect(await found('reef tank water changes')).toContain('turn:1');

    const state = join(mkdtempSync(join(tmpdir(), 'rm-reindex-')), 'stack.json');
    writeFileSync(state, JSON.stringify(stack.info));
    const run = await reindex(USER, state);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.last)).toMatchObject({ userId: USER, items: 5, lost: false });
    expect(await found(LATE_WORDS)).toContain('turn:3');
    expect(await found('reef tank water changes')).toContain('turn:1');
    expect(iamDenials(stack)).toEqual([]);
    // A child process (tsx compiles the CLI first) on a loaded 2-core machine: its spawn is stopped at 200 s.
  }, 360_000);

  it('is for administrators only, and for one user (not GLOBAL)', async () => {
    const own = new MemoryClient(stack.info.apiUrl, async () => stack.mintUserToken([USER], USER));
    await expect(own.call('reindex', { params: { userId: USER } })).rejects.toMatchObject({ status: 403 });
    await expect(admin().call('reindex', { params: { userId: 'GLOBAL' } })).rejects.toMatchObject({ status: 400 });
    expect(iamDenials(stack)).toEqual([]);
  });
});
