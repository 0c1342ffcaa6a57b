/**
 * The search index that lives between requests, on the local harness: items are
 * written, deleted and left to expire through the API while other requests search and the
 * reflector's compactions fold the changes into segments, all at once. A search never serves
 * an item deleted or expired before it began, and once the writers are done every committed
 * item is found — by the warm container, after a merge, and by a cold one.
 */
import { DynamoTurnLog } from '../../lib/search/dynamo-turn-log.adapter.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHandler } from '../../functions/api/create-handler.js';
import { ApiEnvSchema } from '../../functions/api/env.js';
import { functionClients } from '../../infra/local/clients.js';
import { type HttpHandler, startHttpApi } from '../../infra/local/http-api.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { parseEnv } from '../../lib/kernel/config.adapter.js';
import { StoreMemoryCatalog } from '../../lib/search/memory-catalog.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoDiaryStore } from '../../lib/diary/dynamo-diary-store.adapter.js';
import { DynamoMemoryItemStore } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoS3SummaryStore } from '../../lib/summaries/summary-store.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { createSignalHandler } from '../../functions/signal/create-handler.js';
import { SignalEnvSchema } from '../../functions/signal/env.js';
import { lambdaContext } from '../../infra/local/lambda-context.js';
import { sqsEvent } from '../../infra/local/lambda-events.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { writeUnits } from '../../lib/kernel/dynamo-item-size.adapter.js';
import { keys, SEARCH_MARK_TTL_MS } from '../../lib/kernel/memory-paths.js';
import { SearchSegments } from '../../lib/search/search-segments.js';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import type { SearchIndexHead } from '../../lib/search/search-index.port.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { MAX_SEGMENTS } from '../../lib/search/compaction-segments.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';

const USER = 'index-race';
let stack: LocalHarness;

beforeAll(async () => {
  stack = await startHarness({ stage: 'indextest', logLevel: 'SILENT' });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

async function call(method: string, path: string, body?: unknown, apiUrl = stack.info.apiUrl) {
  const res = await fetch(`${apiUrl}/v1/users/${USER}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${stack.info.adminToken}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<{
    results?: Array<{ id: string }>;
    items?: Array<{ id: string }>;
    item?: { id: string };
    nextToken?: string;
  }>;
}

// Every item holds both words, so their weight is low: no similarity floor, or none would pass it.
/** The search is made in session `s-glance`, whose ephemeral entries it finds (req R-TIER-1). */
const searchIds = async (apiUrl?: string) =>
  new Set(
    (
      (
        await call(
          'POST',
          '/memory/search',
          { query: 'zebrafish aquarium', limit: 100, minSimilarity: 0, sessionId: 's-glance' },
          apiUrl,
        )
      ).results ?? []
    ).map((r) => r.id),
  );

/** L as the local harness sets it (infra/local/functions.ts). */
const LAG_MS = 5_000;

/**
 * The reflector's compaction, with the reflector's clients and grants (and a hook run right
 * after its pointer moved); `lagMs` its L, `markAt` the clock its stores' marks take `at` from.
 */
function reflectorIndex(
  afterMove?: () => Promise<void>,
  options: { lagMs?: number; markAt?: () => Date } = {},
): LiveSearchIndex {
  const { ddb, s3 } = functionClients('reflector', stack.iam);
  const { tableName: table, bucketName: bucket } = stack.info;
  const changes = new DynamoSearchChangeLog(
    { ddb, tableName: table },
    { expiring: true, ...(options.markAt ? { now: options.markAt } : {}) },
  );
  const turns = new DynamoS3TurnStore({ ddb, s3, tableName: table, bucketName: bucket, changes });
  const catalog = new StoreMemoryCatalog({
    turns,
    knowledge: new DynamoS3KnowledgeStore({ ddb, s3, tableName: table, bucketName: bucket, changes }),
    summaries: new DynamoS3SummaryStore({ ddb, s3, tableName: table, bucketName: bucket, changes }),
    items: new DynamoMemoryItemStore({ ddb, tableName: table, changes }),
    diary: new DynamoDiaryStore({ ddb, tableName: table, changes }),
    stagedExpiryDays: 14,
  });
  const store = new DynamoS3SearchIndexStore({ ddb, s3, tableName: table, bucketName: bucket });
  if (afterMove) {
    const move = store.moveHead.bind(store);
    store.moveHead = async (userId: string, from: number, next: SearchIndexHead) => {
      const moved = await move(userId, from, next);
      await afterMove();
      return moved;
    };
  }
  return new LiveSearchIndex({
    store,
    catalog,
    clock: { now: () => stack.now() },
    marks: { lagMs: options.lagMs ?? LAG_MS },
    turns: new DynamoTurnLog({ ddb, tableName: table }),
  });
}

/** A request held until released: `reached` settles when it is held. */
interface Hold {
  when: (command: unknown) => boolean;
  reached: Promise<void>;
  release: () => void;
}

function hold(when: (command: unknown) => boolean): Hold & { hit: () => void; until: Promise<void> } {
  let hit = () => {};
  let release = () => {};
  const reached = new Promise<void>((r) => {
    hit = r;
  });
  const until = new Promise<void>((r) => {
    release = r;
  });
  return { when, reached, release, hit, until };
}

/** The signal function's turn write of one of these turns. */
const turnWrite =
  (...turnIds: number[]) =>
  (command: unknown) =>
    command instanceof BatchWriteCommand && turnIds.some((n) => JSON.stringify(command.input).includes(keys.turnSk(n)));
/** The signal function's state put. */
const statePut = (command: unknown) =>
  command instanceof PutCommand && (command.input.Item as { sk?: string } | undefined)?.sk === keys.signalSk;

/**
 * The signal function's handler with its own clients and grants, invoked directly with an SQS
 * event of these turns; `held` pauses its first request it matches until released (a delivery
 * whose write lands late).
 */
function signalHandler(held?: ReturnType<typeof hold>) {
  const clients = functionClients('signal', stack.iam);
  let ddb: DynamoDBDocumentClient = clients.ddb;
  if (held) {
    let done = false;
    const send = clients.ddb.send.bind(clients.ddb) as (command: unknown) => Promise<unknown>;
    ddb = Object.create(clients.ddb) as DynamoDBDocumentClient;
    (ddb as unknown as { send: (command: unknown) => Promise<unknown> }).send = async (command: unknown) => {
      if (!done && held.when(command)) {
        done = true;
        held.hit();
        await held.until;
      }
      return send(command);
    };
  }
  const handler = createSignalHandler(
    parseEnv(SignalEnvSchema, stack.info.environments.signal),
    { ...clients, ddb },
    { now: () => stack.now() },
  );
  return async (user: string, turnIds: number[]) => {
    const bodies = turnIds.map((turnId) => ({
      groupId: user,
      body: JSON.stringify({
        type: 'turn.saved',
        version: 1,
        userId: user,
        sessionId: 's1',
        turnId,
        timestamp: stack.now().toISOString(),
        query: `Zebrafish aquarium turn ${turnId}?`,
        response: 'Noted.',
      }),
    }));
    const res = await handler(sqsEvent(bodies), lambdaContext('signal', 30));
    expect(res.batchItemFailures).toEqual([]);
  };
}

/** The ids the user's change marks name that are turns. */
async function turnChangeMarksOf(userId: string): Promise<string[]> {
  return [
    ...new Set(
      (await marksOf(userId))
        .flatMap((m) => (m.ids as string[] | undefined) ?? [])
        .filter((id) => id.startsWith('turn:')),
    ),
  ].sort();
}

/** The turns the API's search finds for a user. */
async function turnsFound(userId: string): Promise<string[]> {
  const res = await fetch(`${stack.info.apiUrl}/v1/users/${userId}/memory/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.info.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'zebrafish aquarium turn', limit: 100, minSimilarity: 0 }),
  });
  expect(res.status).toBe(200);
  const { results } = (await res.json()) as { results: Array<{ id: string }> };
  return results
    .map((r) => r.id)
    .filter((id) => id.startsWith('turn:'))
    .sort();
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
        for (const id of await searchIds())
          if (goneBefore.has(id)) violations.push(`search served ${id} after its deletion`);
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
        const { item } = await call('POST', '/memory/tiers/long_term', {
          text: `Zebrafish aquarium note ${w}-${i}: the tank needs a heater check`,
          clientId: `w${w}-${i}`,
        });
        const id = item?.id ?? '';
        if (i % 3 === 0) {
          await call('DELETE', `/memory/tiers/long_term/${encodeURIComponent(id)}`);
          deleted.add(id);
        } else committed.add(id);
      }
    };
    const ephemeral = await Promise.all(
      Array.from(
        { length: 6 },
        async (_, i) =>
          (
            await call('POST', '/memory/tiers/ephemeral', {
              text: `Zebrafish aquarium glance ${i}`,
              ttlSeconds: 60,
              sessionId: 's-glance',
            })
          ).item?.id ?? '',
      ),
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
      await call('POST', '/memory/tiers/long_term', {
        text: `unrelated note ${i} about pottery`,
        clientId: `pad-${i}`,
      });
      await compactor.compact(USER);
    }
    expect([...(await searchIds())].sort()).toEqual(expected);
    // A cold container reads the pointer and segments from scratch.
    const cold = createApiHandler(
      parseEnv(ApiEnvSchema, stack.info.environments.api),
      functionClients('api', stack.iam),
      { now: () => stack.now() },
    );
    const api = await startHttpApi({
      handler: cold as HttpHandler,
      tokenSecret: stack.info.tokenSecret,
      functionName: 'cold-api',
      timeoutSeconds: 30,
    });
    try {
      expect([...(await searchIds(api.url))].sort()).toEqual(expected);
    } finally {
      await api.stop();
    }
  }, 240_000);

  it('keeps serving when two compactions of one user race (one pointer move wins, its segment stays)', async () => {
    const before = await searchIds();
    const ids = await Promise.all(
      Array.from(
        { length: 5 },
        async (_, i) =>
          (
            await call('POST', '/memory/tiers/long_term', {
              text: `Zebrafish aquarium race note ${i}`,
              clientId: `race-${i}`,
            })
          ).item?.id ?? '',
      ),
    );
    const results = await Promise.all([reflectorIndex().compact(USER), reflectorIndex().compact(USER)]);
    expect(results.some((r) => r.folded > 0)).toBe(true);
    const cold = createApiHandler(
      parseEnv(ApiEnvSchema, stack.info.environments.api),
      functionClients('api', stack.iam),
      { now: () => stack.now() },
    );
    const api = await startHttpApi({
      handler: cold as HttpHandler,
      tokenSecret: stack.info.tokenSecret,
      functionName: 'cold-api-2',
      timeoutSeconds: 30,
    });
    try {
      expect([...(await searchIds(api.url))].sort()).toEqual([...before, ...ids].sort());
    } finally {
      await api.stop();
    }
  });

  it('marks a write once for all its ids (a write unit each); a compaction deletes no mark, moves the watermark, and keeps a change made meanwhile for the next', async () => {
    const { ddb } = functionClients('reflector', stack.iam);
    const log = new DynamoSearchChangeLog({ ddb, tableName: stack.info.tableName });
    const user = 'index-marks';
    await log.mark(
      user,
      Array.from({ length: 60 }, (_, i) => `mem:packed-${String(i).padStart(3, '0')}`),
    );
    const packed = await marksOf(user);
    expect(packed.length).toBeGreaterThan(1);
    expect(packed.length).toBeLessThan(6);
    expect(packed.every((m) => writeUnits(m) === 1)).toBe(true);
    expect(packed.flatMap((m) => m.ids as string[]).sort()).toEqual(
      Array.from({ length: 60 }, (_, i) => `mem:packed-${String(i).padStart(3, '0')}`),
    );
    // The per-turn path's marks carry the table's TTL attribute, a month on, and still fit a write unit.
    await new DynamoSearchChangeLog({ ddb, tableName: stack.info.tableName }, { expiring: true }).mark(
      'index-marks-ttl',
      Array.from({ length: 60 }, (_, i) => `mem:packed-${String(i).padStart(3, '0')}`),
    );
    const expiring = await marksOf('index-marks-ttl');
    expect(
      expiring.every(
        (m) => writeUnits(m) === 1 && Math.abs(Number(m.expiresAt) - (Date.now() + SEARCH_MARK_TTL_MS) / 1000) < 120,
      ),
    ).toBe(true);

    // Through the API (marks without a TTL): items, then a deletion of one of them right after a compaction's pointer move.
    await reflectorIndex().compact(USER);
    const before = await searchIds();
    const a =
      (await call('POST', '/memory/tiers/long_term', { text: 'Zebrafish aquarium mark note a', clientId: 'mark-a' }))
        .item?.id ?? '';
    const b =
      (await call('POST', '/memory/tiers/long_term', { text: 'Zebrafish aquarium mark note b', clientId: 'mark-b' }))
        .item?.id ?? '';
    // A mark as written before one mark per write (one item's id under its own key) is read and folded too.
    const legacyAt = `${new Date().toISOString()}#legacy`;
    await ddb.send(
      new PutCommand({
        TableName: stack.info.tableName,
        Item: { pk: keys.userPk(USER), sk: `SEARCHCHANGE#${a}`, kind: 'search-change', itemId: a, at: legacyAt },
      }),
    );
    const marksBefore = (await marksOf(USER)).length;
    const result = await reflectorIndex(
      async () => void (await call('DELETE', `/memory/tiers/long_term/${encodeURIComponent(b)}`)),
    ).compact(USER);
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
    const store = new DynamoS3SearchIndexStore({
      ddb,
      s3: functionClients('reflector', stack.iam).s3,
      tableName: stack.info.tableName,
      bucketName: stack.info.bucketName,
    });
    const head = await store.head(USER);
    expect((await store.changes(USER, head.watermark)).length).toBeLessThan((await store.changes(USER)).length);
  });

  it('serves a mark that lands late, after a compaction that started after its `at` (the watermark stays L behind)', async () => {
    const user = 'index-late';
    const { ddb } = functionClients('api', stack.iam);
    const items = (markAt?: () => Date) =>
      new DynamoMemoryItemStore({
        ddb,
        tableName: stack.info.tableName,
        changes: new DynamoSearchChangeLog(
          { ddb, tableName: stack.info.tableName },
          { expiring: true, ...(markAt ? { now: markAt } : {}) },
        ),
      });
    const note = (i: number) => ({
      ...newTierItem(user, 'long_term', { text: `late zebrafish note ${i}` }, stack.now()),
      id: `mem:late-${i}`,
    });
    await items().create(note(0));
    const served = async (index: LiveSearchIndex) =>
      [...new SearchSegments((await index.view(user)).entries).visible()].map((i) => i.id).sort();
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

  it('finds a turn that arrives at or below the last counted one (redriven, out of order), though the turn watermark passed it: such a turn is marked', async () => {
    const user = 'index-turns-late';
    const send = signalHandler();
    // The first cycle records the user's TURNLOG and marks its turns; a turn above the counted ones after it is not marked.
    await send(user, [1]);
    await send(user, [3]);
    expect(await turnChangeMarksOf(user)).toEqual(['turn:1']);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:3']);
    await reflectorIndex().compact(user);
    expect((await pointerOf(user))?.turnWatermark).toBe(3);
    // Turn 2 comes late (redriven from the DLQ, say): at or below lastTurnId, so marked — the turn watermark (3) passed it.
    await send(user, [2]);
    expect(await turnChangeMarksOf(user)).toEqual(['turn:1', 'turn:2']);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3']);
    await send(user, [4]);
    await reflectorIndex().compact(user);
    expect((await pointerOf(user))?.turnWatermark).toBe(4);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3', 'turn:4']);
  });

  it('finds a turn whose unmarked write lands after a compaction passed it (a delivery that hung): its retry marks it', async () => {
    const user = 'index-turns-race';
    await signalHandler()(user, [1, 2]);
    await signalHandler()(user, [3]);
    // A delivery of turn 4 reads the state (lastTurnId 3) and hangs in its turn write; meanwhile the user's
    // group moves on (turn 4 parked in the DLQ after its receives, say) and turn 5 is counted.
    const write = hold(turnWrite(4));
    const hung = signalHandler(write)(user, [4]);
    await write.reached;
    await signalHandler()(user, [5]);
    // A compaction reads the state (5 counted) and the turns above its watermark: 5, not 4, whose write is on the wire.
    await reflectorIndex().compact(user);
    expect((await pointerOf(user))?.turnWatermark).toBe(5);
    // Turn 4 lands without a mark; the delivery's state put fails (the state moved), and its retry, which
    // finds turn 4 at or below lastTurnId (a duplicate now), marks it.
    write.release();
    await hung;
    expect(await turnChangeMarksOf(user)).toContain('turn:4');
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3', 'turn:4', 'turn:5']);
    await reflectorIndex().compact(user);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3', 'turn:4', 'turn:5']);
  });

  it('never moves the turn watermark past the turns the signal state counted when the compaction read it', async () => {
    const user = 'index-turns-counted';
    await signalHandler()(user, [1]);
    await signalHandler()(user, [2]);
    // Two deliveries at once (one past its visibility timeout, say), both read lastTurnId 2: one writes turn 3
    // and hangs on the wire; the other writes turn 4 and hangs before its state put.
    const late = hold(turnWrite(3));
    const unput = hold(statePut);
    const three = signalHandler(late)(user, [3]);
    await late.reached;
    const four = signalHandler(unput)(user, [4]);
    await unput.reached;
    // The compaction reads the state (2 counted), then finds turn 4 above its watermark, not 3.
    await reflectorIndex().compact(user);
    expect((await pointerOf(user))?.turnWatermark).toBe(2);
    // Turn 3 lands without a mark and its state put wins; turn 4's put fails and its retry writes it again above lastTurnId 3.
    late.release();
    await three;
    unput.release();
    await four;
    expect(await turnChangeMarksOf(user)).toEqual(['turn:1']);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3', 'turn:4']);
    await reflectorIndex().compact(user);
    expect((await pointerOf(user))?.turnWatermark).toBe(4);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3', 'turn:4']);
  });

  it('serves the unmarked turns of a pointer written without a turn watermark (from the TURNLOG), and the next search gives it one', async () => {
    const user = 'index-turns-old-pointer';
    const send = signalHandler();
    await send(user, [1]);
    await send(user, [2]);
    await reflectorIndex().compact(user);
    // As a pointer written before turn watermarks existed.
    const { ddb } = functionClients('reflector', stack.iam);
    await ddb.send(
      new UpdateCommand({
        TableName: stack.info.tableName,
        Key: { pk: keys.userPk(user), sk: keys.searchIndexSk },
        UpdateExpression: 'REMOVE turnWatermark',
      }),
    );
    await send(user, [3]);
    expect(await turnChangeMarksOf(user)).toEqual(['turn:1']);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3']);
    expect((await pointerOf(user))?.turnWatermark).toBe(3);
    expect(await turnsFound(user)).toEqual(['turn:1', 'turn:2', 'turn:3']);
  });

  it('made no AWS request its function is not granted', () => {
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['api', 'reflector', 'signal']));
    expect(iamDenials(stack)).toEqual([]);
  });
});
