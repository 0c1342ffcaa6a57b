/**
 * The search index that lives between requests (issue 18), on the local stack: items are
 * written, deleted and left to expire through the API while other requests search and the
 * reflector's compactions fold the changes into segments, all at once. A search never serves
 * an item deleted or expired before it began, and once the writers are done every committed
 * item is found — by the warm container, after a merge, and by a cold one.
 */
import { DynamoTurnLog } from '../../lib/adapters/dynamo-turn-log.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHandler } from '../../functions/api/create-handler.js';
import { ApiEnvSchema } from '../../functions/api/env.js';
import { functionClients } from '../../infra/local/clients.js';
import { type HttpHandler, startHttpApi } from '../../infra/local/http-api.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { parseEnv } from '../../lib/adapters/config.js';
import { StoreMemoryCatalog } from '../../lib/use-cases/memory-catalog.js';
import { S3DynamoKnowledgeStore } from '../../lib/adapters/knowledge-store.js';
import { DynamoDiaryStore } from '../../lib/adapters/dynamo-diary-store.js';
import { DynamoMemoryItemStore } from '../../lib/adapters/memory-item-store.js';
import { S3DynamoSummaryStore } from '../../lib/adapters/summary-store.js';
import { S3DynamoTurnStore } from '../../lib/adapters/dynamo-turn-store.js';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/adapters/search-index-store.js';
import { writeUnits } from '../../lib/adapters/dynamo-item-size.js';
import { keys, SEARCH_MARK_TTL_MS } from '../../lib/domain/memory-paths.js';
import { SegmentedIndex } from '../../lib/domain/memory-search.js';
import { newTierItem } from '../../lib/domain/memory-tiers.js';
import type { SearchIndexHead } from '../../lib/ports.js';
import { LiveSearchIndex, MAX_SEGMENTS } from '../../lib/use-cases/search-index.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';

const USER = 'index-race';
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ stage: 'indextest', logLevel: 'SILENT' });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

async function call(method: string, path: string, body?: unknown, apiUrl = stack.info.apiUrl) {
  const res = await fetch(`${apiUrl}/v1/users/${USER}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.info.adminToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<{ results?: Array<{ id: string }>; items?: Array<{ id: string }>; item?: { id: string }; nextToken?: string }>;
}

// Every item holds both words, so their weight is low: no similarity floor, or none would pass it.
const searchIds = async (apiUrl?: string) => new Set(((await call('POST', '/memory/search', { query: 'zebrafish aquarium', limit: 100, minSimilarity: 0 }, apiUrl)).results ?? []).map((r) => r.id));

/** L as the local stack sets it (infra/local/functions.ts). */
const LAG_MS = 5_000;

/**
 * The reflector's compaction, with the reflector's clients and grants (and a hook run right
 * after its pointer moved); `lagMs` its L, `markAt` the clock its stores' marks take `at` from.
 */
function reflectorIndex(afterMove?: () => Promise<void>, options: { lagMs?: number; markAt?: () => Date } = {}): LiveSearchIndex {
  const { ddb, s3 } = functionClients('reflector', stack.iam);
  const { tableName: table, bucketName: bucket } = stack.info;
  const changes = new DynamoSearchChangeLog(ddb, table, { expiring: true, ...(options.markAt ? { now: options.markAt } : {}) });
  const turns = new S3DynamoTurnStore(ddb, s3, table, bucket, changes);
  const catalog = new StoreMemoryCatalog({
    turns,
    knowledge: new S3DynamoKnowledgeStore(ddb, s3, table, bucket, changes),
    summaries: new S3DynamoSummaryStore(ddb, s3, table, bucket, changes),
    items: new DynamoMemoryItemStore(ddb, table, changes),
    diary: new DynamoDiaryStore(ddb, table, changes),
    stagedExpiryDays: 14,
  });
  const store = new DynamoS3SearchIndexStore(ddb, s3, table, bucket);
  if (afterMove) {
    const move = store.moveHead.bind(store);
    store.moveHead = async (userId: string, from: number, next: SearchIndexHead) => {
      const moved = await move(userId, from, next);
      await afterMove();
      return moved;
    };
  }
  return new LiveSearchIndex({ store, catalog, clock: { now: () => stack.now() }, marks: { lagMs: options.lagMs ?? LAG_MS }, turns: new DynamoTurnLog(ddb, table) });
}

/** The owner's change marks as stored. */
async function marksOf(userId: string): Promise<Array<Record<string, unknown>>> {
  return (await partitionOf(userId)).filter((i) => String(i.sk).startsWith(keys.searchChangePrefix));
}

/** The owner's pointer as stored. */
async function pointerOf(userId: string): Promise<Record<string, unknown> | undefined> {
  return (await partitionOf(userId)).find((i) => i.sk === keys.searchIndexSk);
}

async function partitionOf(userId: string): Promise<Array<Record<string, unknown>>> {
  const { ddb } = functionClients('reflector', stack.iam);
  const res = await ddb.send(
    new QueryCommand({
      TableName: stack.info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':p': 'SEARCH' },
      ConsistentRead: true,
    }),
  );
  return res.Items ?? [];
}

describe('the search index under concurrent writes, deletions, expiry, compactions and searches', () => {
  it('never serves a deleted or expired item, and loses no committed one', async () => {
    const compactor = reflectorIndex();
    const deleted = new Set<string>();
    const committed = new Set<string>();
    const violations: string[] = [];
    let writing = true;

    // Searchers: what was deleted before a search began must not be in its answer.
    const searcher = async () => {
      while (writing) {
        const goneBefore = new Set(deleted);
        for (const id of await searchIds()) if (goneBefore.has(id)) violations.push(`search served ${id} after its deletion`);
      }
    };
    const compactions = async () => {
      let n = 0;
      while (writing) {
        await compactor.compact(USER);
        n++;
      }
      return n;
    };
    const writer = async (w: number) => {
      for (let i = 0; i < 12; i++) {
        const { item } = await call('POST', '/memory/tiers/long_term', { text: `Zebrafish aquarium note ${w}-${i}: the tank needs a heater check`, clientId: `w${w}-${i}` });
        const id = item?.id ?? '';
        if (i % 3 === 0) {
          await call('DELETE', `/memory/tiers/long_term/${encodeURIComponent(id)}`);
          deleted.add(id);
        } else committed.add(id);
      }
    };
    const ephemeral = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => (await call('POST', '/memory/tiers/ephemeral', { text: `Zebrafish aquarium glance ${i}`, ttlSeconds: 60 })).item?.id ?? ''),
    );
    const running = [searcher(), searcher(), compactions()];
    await Promise.all(Array.from({ length: 4 }, (_, w) => writer(w)));
    writing = false;
    const [, , compacted] = await Promise.all(running);
    expect(violations).toEqual([]);
    expect(compacted).toBeGreaterThan(0);

    // The ephemeral entries were served while live; past their TTL they never are again.
    const beforeExpiry = await searchIds();
    expect(ephemeral.filter((id) => !beforeExpiry.has(id))).toEqual([]);
    await stack.advanceTo(new Date(stack.now().getTime() + 5 * 60_000));

    const expected = [...committed].sort();
    const warm = await searchIds();
    expect([...warm].sort()).toEqual(expected);
    // Folded into segments, merged once past MAX_SEGMENTS: the same answer.
    for (let i = 0; i <= MAX_SEGMENTS; i++) {
      await call('POST', '/memory/tiers/long_term', { text: `unrelated note ${i} about pottery`, clientId: `pad-${i}` });
      await compactor.compact(USER);
    }
    expect([...(await searchIds())].sort()).toEqual(expected);
    // A cold container reads the pointer and segments from scratch.
    const cold = createApiHandler(parseEnv(ApiEnvSchema, stack.info.environments.api), functionClients('api', stack.iam), { now: () => stack.now() });
    const api = await startHttpApi({ handler: cold as HttpHandler, tokenSecret: stack.info.tokenSecret, functionName: 'cold-api', timeoutSeconds: 30 });
    try {
      expect([...(await searchIds(api.url))].sort()).toEqual(expected);
    } finally {
      await api.stop();
    }
  }, 240_000);

  it('keeps serving when two compactions of one user race (one pointer move wins, its segment stays)', async () => {
    const before = await searchIds();
    const ids = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => (await call('POST', '/memory/tiers/long_term', { text: `Zebrafish aquarium race note ${i}`, clientId: `race-${i}` })).item?.id ?? ''),
    );
    const results = await Promise.all([reflectorIndex().compact(USER), reflectorIndex().compact(USER)]);
    expect(results.some((r) => r.folded > 0)).toBe(true);
    const cold = createApiHandler(parseEnv(ApiEnvSchema, stack.info.environments.api), functionClients('api', stack.iam), { now: () => stack.now() });
    const api = await startHttpApi({ handler: cold as HttpHandler, tokenSecret: stack.info.tokenSecret, functionName: 'cold-api-2', timeoutSeconds: 30 });
    try {
      expect([...(await searchIds(api.url))].sort()).toEqual([...before, ...ids].sort());
    } finally {
      await api.stop();
    }
  });

  it('marks a write once for all its ids (a write unit each); a compaction deletes no mark, moves the watermark, and keeps a change made meanwhile for the next', async () => {
    const { ddb } = functionClients('reflector', stack.iam);
    const log = new DynamoSearchChangeLog(ddb, stack.info.tableName);
    const user = 'index-marks';
    await log.mark(
      user,
      Array.from({ length: 60 }, (_, i) => `mem:packed-${String(i).padStart(3, '0')}`),
    );
    const packed = await marksOf(user);
    expect(packed.length).toBeGreaterThan(1);
    expect(packed.length).toBeLessThan(6);
    expect(packed.every((m) => writeUnits(m) === 1)).toBe(true);
    expect(packed.flatMap((m) => m.ids as string[]).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `mem:packed-${String(i).padStart(3, '0')}`));
    // The per-turn path's marks carry the table's TTL attribute, a month on, and still fit a write unit.
    await new DynamoSearchChangeLog(ddb, stack.info.tableName, { expiring: true }).mark('index-marks-ttl', Array.from({ length: 60 }, (_, i) => `mem:packed-${String(i).padStart(3, '0')}`));
    const expiring = await marksOf('index-marks-ttl');
    expect(expiring.every((m) => writeUnits(m) === 1 && Math.abs(Number(m.expiresAt) - (Date.now() + SEARCH_MARK_TTL_MS) / 1000) < 120)).toBe(true);

    // Through the API (marks without a TTL): items, then a deletion of one of them right after a compaction's pointer move.
    await reflectorIndex().compact(USER);
    const before = await searchIds();
    const a = (await call('POST', '/memory/tiers/long_term', { text: 'Zebrafish aquarium mark note a', clientId: 'mark-a' })).item?.id ?? '';
    const b = (await call('POST', '/memory/tiers/long_term', { text: 'Zebrafish aquarium mark note b', clientId: 'mark-b' })).item?.id ?? '';
    // A mark as written before one mark per write (one item's id under its own key) is read and folded too.
    const legacyAt = `${new Date().toISOString()}#legacy`;
    await ddb.send(new PutCommand({ TableName: stack.info.tableName, Item: { pk: keys.userPk(USER), sk: `SEARCHCHANGE#${a}`, kind: 'search-change', itemId: a, at: legacyAt } }));
    const marksBefore = (await marksOf(USER)).length;
    const result = await reflectorIndex(async () => void (await call('DELETE', `/memory/tiers/long_term/${encodeURIComponent(b)}`))).compact(USER);
    expect(result.folded).toBeGreaterThanOrEqual(2);
    const left = await marksOf(USER);
    // Nothing deleted: the marks it folded that had no TTL got one; the deletion's mark, written after its read, has none yet.
    expect(left.length).toBe(marksBefore + 1);
    expect(left.filter((m) => m.expiresAt === undefined).map((m) => m.ids)).toEqual([[b]]);
    expect(left.find((m) => m.itemId === a)?.expiresAt).toEqual(expect.any(Number));
    expect([...(await searchIds())].sort()).toEqual([...before, a].sort());
    await reflectorIndex().compact(USER);
    expect((await marksOf(USER)).filter((m) => m.expiresAt === undefined)).toEqual([]);
    expect([...(await searchIds())].sort()).toEqual([...before, a].sort());
    // The pointer's watermark trails the last compaction's start by L; readers read the marks from it on only.
    const watermark = String((await pointerOf(USER))?.watermark);
    expect(Date.now() - Date.parse(watermark)).toBeGreaterThanOrEqual(LAG_MS);
    expect(Date.now() - Date.parse(watermark)).toBeLessThan(LAG_MS + 60_000);
    await new Promise((r) => setTimeout(r, LAG_MS + 50));
    await call('POST', '/memory/tiers/long_term', { text: 'unrelated note about pottery glaze', clientId: 'mark-c' });
    await reflectorIndex().compact(USER);
    const store = new DynamoS3SearchIndexStore(ddb, functionClients('reflector', stack.iam).s3, stack.info.tableName, stack.info.bucketName);
    const head = await store.head(USER);
    expect((await store.changes(USER, head.watermark)).length).toBeLessThan((await store.changes(USER)).length);
  });

  it('serves a mark that lands late, after a compaction that started after its `at` (the watermark stays L behind)', async () => {
    const user = 'index-late';
    const { ddb } = functionClients('api', stack.iam);
    const items = (markAt?: () => Date) => new DynamoMemoryItemStore(ddb, stack.info.tableName, new DynamoSearchChangeLog(ddb, stack.info.tableName, { expiring: true, ...(markAt ? { now: markAt } : {}) }));
    const note = (i: number) => ({ ...newTierItem(user, 'long_term', { text: `late zebrafish note ${i}` }, stack.now()), id: `mem:late-${i}` });
    await items().create(note(0));
    const served = async (index: LiveSearchIndex) => [...new SegmentedIndex((await index.view(user)).entries).visible()].map((i) => i.id).sort();
    // The writer chose its mark's `at` 2 s before the compaction started; the write lands after it (within L = 5 s).
    const chosen = new Date(Date.now() - 2_000);
    await reflectorIndex().compact(user);
    await items(() => chosen).create(note(1));
    expect(await served(reflectorIndex())).toEqual(['mem:late-0', 'mem:late-1']);
    await reflectorIndex().compact(user);
    expect(await served(reflectorIndex())).toEqual(['mem:late-0', 'mem:late-1']);
    // Without the bound (L = 0) the same late mark falls below the watermark and its change is lost: why L is there.
    await items().create(note(3));
    const early = new Date(Date.now() - 2_000);
    expect(await reflectorIndex(undefined, { lagMs: 0 }).compact(user)).toMatchObject({ folded: 1 });
    await items(() => early).create(note(2));
    expect(await served(reflectorIndex(undefined, { lagMs: 0 }))).toEqual(['mem:late-0', 'mem:late-1', 'mem:late-3']);
  });

  it('pages a tier query with nextToken: every live item once, newest first', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await call('GET', `/memory/tiers/long_term?limit=7${token ? `&nextToken=${token}` : ''}`);
      seen.push(...(page.items ?? []).map((i) => i.id));
      token = page.nextToken;
    } while (token);
    const all = (await call('GET', '/memory/tiers/long_term?limit=500')).items?.map((i) => i.id) ?? [];
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    expect(all.length).toBeGreaterThan(7);
  });

  it('made no AWS request its function is not granted', () => {
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['api', 'reflector']));
    expect(iamDenials(stack)).toEqual([]);
  });
});
