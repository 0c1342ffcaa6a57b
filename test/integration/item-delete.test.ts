/**
 * Req R-DEL through the real handlers on the local harness, over one replay of the sample
 * conversation (three sessions) with an agent.event and a nightly run: deleting one item of
 * every kind (DELETE …/memory/items/{id}), and forgetting a session by provenance
 * (POST …/memory/forget). Afterwards no search or retrieve returns what went, the user's
 * search index and relation graph dropped it, the audit trail says who, when and why, the
 * next nightly run and a re-proposal do not bring a deleted fact back, a redriven job for the
 * forgotten turns writes nothing, the rest of the user's state is byte for byte what it was,
 * and no request was denied by the functions' IAM policies.
 */
import { readFileSync } from 'node:fs';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { MemoryClient } from '../../functions/api/client.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { dumpUserState, listObjectVersions, type UserStateDump } from '../../infra/local/state-dump.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import { DynamoDiaryStore } from '../../lib/diary/dynamo-diary-store.adapter.js';
import { DynamoGraphStore } from '../../lib/graph/dynamo-graph-store.adapter.js';
import { DynamoTurnLog } from '../../lib/search/dynamo-turn-log.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoMemoryItemStore } from '../../lib/items/memory-item-store.adapter.js';
import { DynamoS3SearchIndexStore, DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { jobDeduplicationId } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { DynamoS3SummaryStore } from '../../lib/summaries/summary-store.adapter.js';
import { keys, pad } from '../../lib/kernel/memory-paths.js';
import { SearchSegments } from '../../lib/search/search-segments.js';
import type { ForgetReceipt } from '../../lib/memory-api/memory-api.js';
import { StoreMemoryCatalog } from '../../lib/search/memory-catalog.js';
import { recordRelations } from '../../lib/graph/graph-use-cases.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { iamDenials } from '../helpers/iam.js';

const USER = 'delete-user';
const DAY = 86_400_000;
const SESSION_2 = 'locomo/conv-26-session-2';
/** Session 2's turns in the sample: what the forget by provenance removes. */
const FORGOTTEN = [10, 11, 12, 13, 14, 15, 16, 17, 18];

let stack: LocalHarness;
let memory: MemoryClient;
const ddb = createDocumentClient(createDynamoDbClient());
let s3client: S3Client | undefined;
const s3 = () =>
  (s3client ??= new S3Client({
    region: stack.info.region,
    endpoint: stack.info.endpoints.s3,
    forcePathStyle: true,
    credentials: stack.info.credentials,
  }));
const changes = () => new DynamoSearchChangeLog({ ddb, tableName: stack.info.tableName });
const knowledge = () =>
  new DynamoS3KnowledgeStore({
    ddb,
    s3: s3(),
    tableName: stack.info.tableName,
    bucketName: stack.info.bucketName,
    changes: changes(),
  });
const graph = () => new DynamoGraphStore({ ddb, tableName: stack.info.tableName });
const dump = () => dumpUserState({ ddb, s3: s3() }, stack.info, USER);
/** The keys of every version and delete marker the versioned bucket keeps of the user's, current or not. */
const versionKeys = async (): Promise<string[]> =>
  (await listObjectVersions(s3(), stack.info.bucketName, `users/${USER}/`)).map((v) => v.key);

const sample = (): TurnSaved[] =>
  readFileSync(new URL('../../events/samples/conversation.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => ({ ...(JSON.parse(l) as TurnSaved), userId: USER }));

async function partition(prefix: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await ddb.send(
      new QueryCommand({
        TableName: stack.info.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.userPk(USER), ':p': prefix },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    out.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Every result any search for these words returns (the diary's content type included). */
async function searched(query: string): Promise<Array<{ id: string; sourceTurns: number[] }>> {
  const plain = await memory.search(USER, { query, limit: 100 });
  const diary = await memory.search(USER, { query, limit: 100, filters: { contentTypes: ['diary'] } });
  return [...plain.results, ...diary.results];
}

/** The ids the user's search index serves now (segments and the change marks' overlay), read as the API reads them. */
async function indexedIds(): Promise<Set<string>> {
  const { tableName: table, bucketName: bucket } = stack.info;
  const turns = new DynamoS3TurnStore({ ddb, s3: s3(), tableName: table, bucketName: bucket, changes: changes() });
  const catalog = new StoreMemoryCatalog({
    turns,
    knowledge: knowledge(),
    summaries: new DynamoS3SummaryStore({ ddb, s3: s3(), tableName: table, bucketName: bucket, changes: changes() }),
    items: new DynamoMemoryItemStore({ ddb, tableName: table, changes: changes() }),
    diary: new DynamoDiaryStore({ ddb, tableName: table, changes: changes() }),
    stagedExpiryDays: 14,
  });
  const index = new LiveSearchIndex({
    store: new DynamoS3SearchIndexStore({ ddb, s3: s3(), tableName: table, bucketName: bucket }),
    catalog,
    clock: { now: () => stack.now() },
    marks: { lagMs: 5_000 },
    turns: new DynamoTurnLog({ ddb, tableName: table }),
  });
  return new Set([...new SearchSegments((await index.view(USER)).entries).visible()].map((i) => i.id));
}

const edgeIds = async () => (await graph().load(USER)).edges.filter((e) => e.status === 'active').map((e) => e.id);

/** The relation observations a reflector and a nightly run would have recorded: each edge's evidence is turns. */
async function seedGraph(at: string): Promise<void> {
  const obs = (from: string, to: string, source: 'batch' | 'nightly', id: string, turns: number[]) => ({
    from,
    relation: 'related_to',
    to,
    confidence: 0.7,
    provenance: { source, id, turns, at },
  });
  await recordRelations(
    USER,
    [
      obs('caroline', 'support group', 'batch', 'batch-1-10', [5]),
      obs('melanie', 'pottery', 'nightly', 'nightly-seed', [7]),
      obs('caroline', 'adoption', 'batch', 'batch-11-20', [11]),
      obs('caroline', 'counseling', 'batch', 'batch-11-20', [12]),
      obs('caroline', 'counseling', 'batch', 'batch-21-29', [25]),
    ],
    at,
    graph(),
  );
}

const knowledgeDoc = (
  at: string,
  id: string,
  title: string,
  text: string,
  sourceTurns: number[],
  storedBy?: string,
) => ({
  path: id,
  markdown: `# ${title}\n\n${text}\n`,
  doc: {
    id,
    title,
    text,
    summary: text,
    category: id.split('/').slice(0, -1).join('/'),
    confidence: 0.8,
    sourceTurns,
    promotedAt: at,
    ...(storedBy ? { storedBy } : {}),
  },
});
/** The promoted fact about Caroline's sunsets, with this text. */
const sunsets = (text: string) =>
  knowledgeDoc(stack.now().toISOString(), 'Facts/caroline_paints_sunsets.md', 'caroline paints sunsets', text, [3]);

/** A promoted fact and a nightly finding (the replay's offline model promotes and finds none), through the knowledge store. */
async function seedKnowledge(at: string): Promise<void> {
  const doc = (id: string, title: string, text: string, sourceTurns: number[], storedBy?: string) =>
    knowledgeDoc(at, id, title, text, sourceTurns, storedBy);
  await knowledge().putKnowledge(USER, [
    sunsets('Caroline paints sunsets over the lake with watercolours.'),
    doc(
      'Findings/relationship/melanie_related_to_pottery.md',
      'melanie related_to pottery',
      'Melanie took up pottery classes with her kids.',
      [7],
      'nightly-seed',
    ),
    doc(
      'Facts/caroline_counseling_career.md',
      'caroline counseling career',
      'Caroline looks into counseling and mental health careers.',
      [12],
    ),
  ]);
}

beforeAll(async () => {
  stack = await startHarness({
    stage: 'deletetest',
    logLevel: (process.env.DELETE_LOG as 'INFO' | undefined) ?? 'SILENT',
    speed: 300,
  });
  memory = new MemoryClient(stack.info.apiUrl, () => stack.mintUserToken([USER], USER));
  const turns = sample();
  await stack.replayLines(
    turns.map((t) => JSON.stringify(t)),
    { clock: true },
  );
  await stack.waitUntilDrained();
  // An agent.event with an episode: its episode, and its batch's diary entry.
  const last = turns.at(-1) as TurnSaved;
  await stack.publisher.publish([
    {
      type: 'agent.event',
      version: 1,
      userId: USER,
      sessionId: last.sessionId,
      turnId: last.turnId,
      timestamp: new Date(Date.parse(last.timestamp) + 60_000).toISOString(),
      trigger: 'error',
      detail: 'The adoption agency site timed out',
      episode: {
        goal: 'Find adoption agencies near Caroline',
        actions: [{ capability: 'web.search', result: 'timed out' }],
        outcome: { success: false },
      },
    } as never,
  ]);
  await stack.waitUntilDrained();
  await stack.advanceTo(new Date(stack.now().getTime() + DAY));
  await stack.waitUntilDrained();
  const at = stack.now().toISOString();
  await seedKnowledge(at);
  await seedGraph(at);
  await memory.tiers.create(USER, 'long_term', {
    text: 'Caroline wants a quiet reading nook for the kids.',
    sourceTurns: [4],
    clientId: 'nook',
  });
  await memory.tiers.create(USER, 'long_term', {
    text: 'Caroline plans a counseling course next spring.',
    sourceTurns: [14],
    clientId: 'course',
  });
}, 300_000);
afterAll(async () => {
  s3client?.destroy();
  await stack?.stop();
});

describe('deleting one item of every kind (DELETE …/memory/items/{id})', () => {
  it('each is gone from search, retrieve, the search index and the graph; audited; the next nightly run brings none back', async () => {
    const staged = (await partition(keys.stagedPrefix))
      .map((i) => String(i.sk).slice(keys.stagedPrefix.length))
      .find((p) => p.includes('lgbtq_support_group'));
    const episode = (await partition(keys.eventEpisodePrefix)).map((i) =>
      String(i.sk).slice(keys.eventEpisodePrefix.length),
    )[0];
    const mem = (await memory.tiers.query(USER, 'long_term')).items.find((i) => i.text.includes('reading nook'))?.id;
    const ids = [
      'turn:5',
      `episode:${episode}`,
      `staged:${staged}`,
      'knowledge:Facts/caroline_paints_sunsets.md',
      'knowledge:Findings/relationship/melanie_related_to_pottery.md',
      'summary:summary-1-9',
      'diary:batch-1-10',
      String(mem),
    ];
    for (const id of ids) await expect(memory.retrieve(USER, { id }), id).resolves.toMatchObject({ item: { id } });
    const indexedBefore = await indexedIds();
    for (const id of ids.filter((i) => !i.startsWith('diary:'))) expect(indexedBefore.has(id), id).toBe(true);
    expect(await edgeIds()).toEqual(
      expect.arrayContaining(['caroline|related_to|support_group', 'melanie|related_to|pottery']),
    );

    const ofDeleted = (k: string) =>
      k.includes(`/turns/${pad(5)}/`) ||
      k.includes('caroline_paints_sunsets') ||
      k.includes('melanie_related_to_pottery') ||
      k.includes('/summaries/summary-1-9.');
    // What the versioned bucket keeps besides current objects: the fact edited once (its first
    // text a noncurrent version), and an object under the turn's folder deleted without a
    // version id (a noncurrent version behind a delete marker).
    await knowledge().putKnowledge(USER, [sunsets('Caroline paints sunsets over the lake in oils.')]);
    await knowledge().putKnowledge(USER, [sunsets('Caroline paints sunsets over the lake with watercolours.')]);
    const dropped = { Bucket: stack.info.bucketName, Key: `users/${USER}/turns/${pad(5)}/dropped.json` };
    await s3().send(new PutObjectCommand({ ...dropped, Body: '{}' }));
    await s3().send(new DeleteObjectCommand(dropped));
    const kept = (await listObjectVersions(s3(), stack.info.bucketName, `users/${USER}/`)).filter((v) =>
      ofDeleted(v.key),
    );
    expect(kept.filter((v) => v.isLatest && !v.deleteMarker).length).toBeGreaterThan(0);
    expect(kept.filter((v) => !v.isLatest && !v.deleteMarker).map((v) => v.key)).toEqual(
      expect.arrayContaining([expect.stringContaining('caroline_paints_sunsets'), dropped.Key]),
    );
    expect(kept.filter((v) => v.deleteMarker).map((v) => v.key)).toEqual([dropped.Key]);
    const kinds: string[] = [];
    for (const id of ids) {
      const { deleted, at } = await memory.deleteItem(USER, id, 'wrong, and private');
      kinds.push(deleted.kind);
      expect(Date.parse(at)).not.toBeNaN();
      await expect(memory.retrieve(USER, { id }), id).rejects.toMatchObject({ status: 404 });
      await expect(memory.deleteItem(USER, id), `${id} again`).rejects.toMatchObject({ status: 404 });
      const [entry] = (await memory.call('auditList', { params: { userId: USER }, query: { itemId: id, limit: 5 } }))
        .entries;
      expect(entry, id).toMatchObject({ action: 'delete', actor: USER, reason: 'wrong, and private', itemId: id });
      // No content in the audit trail beyond the id: neither the item's text nor its title.
      const { itemId: _, ...rest } = entry as Record<string, unknown>;
      expect(JSON.stringify(rest)).not.toMatch(/sunsets|pottery|reading nook|lgbtq|watercolours/i);
    }
    expect(kinds).toEqual(['turn', 'episode', 'staged', 'knowledge', 'knowledge', 'summary', 'diary', 'memory']);
    const check = async () => {
      const found = (
        await Promise.all(
          [
            'Caroline support group LGBTQ',
            'sunsets watercolours lake',
            'Melanie pottery classes kids',
            'reading nook kids',
            'adoption agency timed out',
            'Caroline Melanie',
          ].map(searched),
        )
      )
        .flat()
        .map((r) => r.id);
      for (const id of ids) expect(found, id).not.toContain(id);
      const indexed = await indexedIds();
      for (const id of ids) expect(indexed.has(id), id).toBe(false);
      // The edges whose only evidence was the turn and the finding went; the others stayed.
      const edges = await edgeIds();
      expect(edges).not.toContain('caroline|related_to|support_group');
      expect(edges).not.toContain('melanie|related_to|pottery');
      expect(edges).toEqual(expect.arrayContaining(['caroline|related_to|adoption', 'caroline|related_to|counseling']));
    };
    await check();
    // The turn's objects and every version of them are gone too.
    expect(await partition(keys.turnSk(5))).toEqual([]);
    const objects = Object.keys((await dump()).objects);
    expect(
      objects.filter(
        (k) =>
          k.includes(`/turns/${pad(5)}/`) ||
          k.includes('caroline_paints_sunsets') ||
          k.includes('melanie_related_to_pottery'),
      ),
    ).toEqual([]);
    // The bucket is versioned: a plain delete would leave each as a noncurrent version behind a delete marker.
    expect((await versionKeys()).filter(ofDeleted)).toEqual([]);

    // The next nightly run (and its compaction) brings none of them back.
    await stack.advanceTo(new Date(stack.now().getTime() + DAY));
    await stack.waitUntilDrained();
    await check();
    expect(iamDenials(stack)).toEqual([]);
  }, 240_000);

  it('a deleted fact proposed again is rejected by the `deleted` gate, logged with the batch, and not staged', async () => {
    const turns = sample();
    const two = turns.find((t) => t.turnId === 2) as TurnSaved;
    const stagedBefore = (await partition(keys.stagedPrefix)).map((i) => String(i.sk));
    expect(stagedBefore.some((sk) => sk.includes('lgbtq_support_group'))).toBe(false);
    // Turn 2 said again: the model proposes the same fact; a reflection is asked for now.
    await stack.publisher.publish([
      {
        ...two,
        turnId: 31,
        sessionId: 'locomo/conv-26-session-4',
        timestamp: new Date(stack.now().getTime() - 60_000).toISOString(),
      },
    ]);
    await stack.waitUntilDrained();
    await memory.call('summaryRequest', { params: { userId: USER }, body: { reflect: true } });
    await stack.waitUntilDrained();
    const stagedAfter = (await partition(keys.stagedPrefix)).map((i) => String(i.sk));
    expect(stagedAfter.filter((sk) => sk.includes('lgbtq_support_group'))).toEqual([]);
    const { batches } = await memory.call('batchList', { params: { userId: USER }, query: { limit: 5 } });
    const listed = (batches as Array<{ batchId: string; turns: number[] }>).find((b) => b.turns.includes(31));
    const log = await new DynamoS3BatchLogStore({
      ddb,
      s3: s3(),
      tableName: stack.info.tableName,
      bucketName: stack.info.bucketName,
    }).get(USER, String(listed?.batchId));
    expect(log?.quality_gate_results.rejections.filter((r) => r.gate === 'deleted')).toEqual([
      expect.objectContaining({
        item: expect.stringMatching(/lgbtq.support.group/i),
        reason: expect.stringMatching(/deleted/),
      }),
    ]);
    expect(iamDenials(stack)).toEqual([]);
  }, 120_000);
});

/** A dump without what a forget's bookkeeping writes, and without the items the receipt names (`removed`). */
function outside(d: UserStateDump, receipt: ForgetReceipt): UserStateDump {
  const r = receipt.removed;
  const sks = new Set([
    ...r.turn.map((id) => keys.turnSk(Number(id.slice(5)))),
    ...r.staged.map((id) => keys.stagedSk(id.slice(7))),
    ...r.summary.map((id) => keys.summarySk(id.slice(8))),
    ...r.diary.map((id) => keys.diarySk(id.slice(6))),
    ...r.memory.map((id) => keys.memorySk(id)),
    ...r.episode.map((id) => keys.eventEpisodeSk(id.slice(8))),
    ...r.graphEdge.flatMap((id) => {
      const [from, relation, to] = id.split('|') as [string, string, string];
      return [keys.edgeSk(id), keys.edgeToSk({ from, relation, to })];
    }),
  ]);
  const bookkeeping = (sk: string) =>
    sk.startsWith('AUDIT#') ||
    sk.startsWith('TOMBSTONE#') ||
    sk === keys.forgottenTurnsSk ||
    sk === keys.knowledgeIndexSk ||
    sk.startsWith(keys.graphLogPrefix);
  const items = Object.fromEntries(
    Object.entries(d.items).filter(([k]) => {
      const sk = k.slice(k.indexOf('|') + 1);
      return !sks.has(sk) && !bookkeeping(sk);
    }),
  );
  const gone = [
    ...r.turn.map((id) => `/turns/${pad(Number(id.slice(5)))}/`),
    ...r.knowledge.map((id) => `/Knowledge/${id.slice(10)}`),
    ...r.staged.map((id) => `/Knowledge_staging/${id.slice(7)}`),
    ...r.episode.map((id) => `/episodes/${id.slice(8)}`),
    '/index/knowledge/',
  ];
  const objects = Object.fromEntries(Object.entries(d.objects).filter(([k]) => !gone.some((g) => k.includes(g))));
  return { userId: d.userId, items, objects };
}

describe('forgetting a session by provenance (POST …/memory/forget)', () => {
  it('a dry run and the real run answer the same receipt; afterwards nothing cites those turns and the rest is byte for byte as it was', async () => {
    const before = await dump();
    const dry = (await memory.forget(USER, { sessionId: SESSION_2, dryRun: true })).receipt;
    expect(await dump()).toEqual(before);
    expect(dry.turns).toEqual(FORGOTTEN);
    expect(dry.removed.turn).toEqual(FORGOTTEN.map((t) => `turn:${t}`));
    expect(dry.removed).toMatchObject({
      knowledge: ['knowledge:Facts/caroline_counseling_career.md'],
      summary: ['summary:summary-10-18'],
      diary: ['diary:batch-11-20'],
      graphEdge: ['caroline|related_to|adoption'],
    });
    expect(dry.removed.staged.some((id) => id.includes('possession_goal'))).toBe(true);
    // The API's long-term entry citing turn 14, and the short-term entries reflection wrote from
    // session 2's batch (req R-TIER-11: each cites its source turns).
    const citing = async (tier: 'long_term' | 'short_term') =>
      (await memory.tiers.query(USER, tier, { limit: 100 })).items
        .filter((i) => i.id.startsWith('mem:') && i.sourceTurns.some((t) => FORGOTTEN.includes(t)))
        .map((i) => i.id);
    const fromReflection = await citing('short_term');
    expect(fromReflection.length).toBeGreaterThan(0);
    expect(dry.removed.memory).toEqual([...(await citing('long_term')), ...fromReflection].sort());

    const ofForgotten = (k: string) =>
      FORGOTTEN.some((t) => k.includes(`/turns/${pad(t)}/`)) ||
      k.includes('caroline_counseling_career') ||
      k.includes('/summaries/summary-10-18.');
    expect((await versionKeys()).filter(ofForgotten).length).toBeGreaterThan(0);
    const real = (await memory.forget(USER, { sessionId: SESSION_2, dryRun: false, reason: 'the user asked' })).receipt;
    // No version of their objects is left in the versioned bucket, current or not.
    expect((await versionKeys()).filter(ofForgotten)).toEqual([]);
    expect(real).toEqual({ ...dry, dryRun: false });
    const after = await dump();
    expect(outside(after, real)).toEqual(outside(before, real));
    // The knowledge index lost exactly the forgotten fact.
    for (const id of Object.values(real.removed).flat())
      expect(
        Object.keys(after.items).some((k) => k.endsWith(`|${id}`)),
        id,
      ).toBe(false);
    expect((await knowledge().loadKnowledge(USER)).map((d) => d.id)).not.toContain(
      'Facts/caroline_counseling_career.md',
    );
    // The edge with other evidence (turn 25) stays.
    expect(await edgeIds()).toContain('caroline|related_to|counseling');

    const found = (
      await Promise.all(
        [
          'Caroline counseling mental health career',
          'adoption kids loving home',
          'Melanie Caroline',
          'counseling course spring',
        ].map(searched),
      )
    ).flat();
    expect(found.length).toBeGreaterThan(0);
    for (const r of found)
      expect(
        r.sourceTurns.filter((t) => FORGOTTEN.includes(t)),
        r.id,
      ).toEqual([]);
    const indexed = await indexedIds();
    for (const id of Object.values(real.removed).flat()) expect(indexed.has(id), id).toBe(false);
    // Audited per item, no content; asked again, the session is gone.
    const [entry] = (
      await memory.call('auditList', { params: { userId: USER }, query: { itemId: 'turn:12', limit: 5 } })
    ).entries;
    expect(entry).toMatchObject({ action: 'forget', actor: USER, reason: 'the user asked' });
    expect((await memory.forget(USER, { sessionId: SESSION_2, dryRun: true })).receipt.total).toBe(0);
    expect(iamDenials(stack)).toEqual([]);
  }, 120_000);

  it('a job queued for the forgotten turns, redriven, writes nothing', async () => {
    const before = await dump();
    const sqs = new SQSClient({
      region: stack.info.region,
      endpoint: stack.info.endpoints.sqs,
      credentials: stack.info.credentials,
    });
    for (const [jobId, kind] of [
      ['batch-10-18', 'batch'],
      ['summary-10-18-again', 'idle-summary'],
    ] as const) {
      const job = {
        type: 'reflector.job',
        version: 1,
        jobId,
        userId: USER,
        kind,
        trigger: 'redrive',
        urgency: 0,
        turnIds: FORGOTTEN,
        requestedAt: stack.now().toISOString(),
      };
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: stack.info.queues.job.url,
          MessageBody: JSON.stringify(job),
          MessageGroupId: USER,
          MessageDeduplicationId: jobDeduplicationId(job),
        }),
      );
    }
    await stack.waitUntilDrained();
    expect(await dump()).toEqual(before);
    expect(iamDenials(stack)).toEqual([]);
    sqs.destroy();
  }, 60_000);

  it('refuses both sessions and turns at once, and more than 500 turns', async () => {
    await expect(memory.forget(USER, { sessionId: SESSION_2, turns: [1], dryRun: true })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      memory.forget(USER, { turns: Array.from({ length: 501 }, (_, i) => i + 1), dryRun: true }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe('MCP', () => {
  it('memory_forget_item deletes a knowledge: and a turn: id; memory_forget answers a receipt', async () => {
    await knowledge().putKnowledge(USER, [
      {
        path: 'Facts/mcp_fact.md',
        markdown: '# mcp fact\n\nCaroline owns a blue kayak.\n',
        doc: {
          id: 'Facts/mcp_fact.md',
          title: 'mcp fact',
          text: 'Caroline owns a blue kayak.',
          summary: 'Caroline owns a blue kayak.',
          category: 'Facts',
          confidence: 0.8,
          sourceTurns: [20],
          promotedAt: stack.now().toISOString(),
        },
      },
    ]);
    const client = new Client({ name: 'delete-test', version: '1' });
    const token = await stack.mintUserToken([USER], USER);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.info.apiUrl}/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['memory_forget', 'memory_forget_item']),
      );
      for (const id of ['knowledge:Facts/mcp_fact.md', 'turn:20']) {
        const res = await client.callTool({
          name: 'memory_forget_item',
          arguments: { userId: USER, id, reason: 'via MCP' },
        });
        expect(res.isError, id).toBeFalsy();
        expect(res.structuredContent).toMatchObject({ deleted: { id } });
        await expect(memory.retrieve(USER, { id })).rejects.toMatchObject({ status: 404 });
      }
      const dry = await client.callTool({
        name: 'memory_forget',
        arguments: { userId: USER, turns: [21], dryRun: true },
      });
      expect(dry.isError).toBeFalsy();
      expect(dry.structuredContent).toMatchObject({
        receipt: { dryRun: true, turns: [21], removed: { turn: ['turn:21'] } },
      });
    } finally {
      await client.close();
    }
    expect(iamDenials(stack)).toEqual([]);
  }, 60_000);
});
