/**
 * Fewer DynamoDB units per turn, against DynamoDB Local with the functions' grants
 * enforced: the turn index's reads (runs of consecutive turns as eventually consistent
 * Queries, lone turns in a BatchGetItem, a turn a stale read missed read again strongly
 * consistent), the graph's hygiene log packed by time, a user's cost entries indexed once a
 * day, and the reflector's records kept smaller (staged records slimmed; answers, batch logs and
 * runs packed; no run-id marker), old forms read as before.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionClients } from '../../infra/local/clients.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { DynamoCostLedger } from '../../lib/costs/dynamo-cost-ledger.adapter.js';
import { DynamoGraphStore } from '../../lib/graph/dynamo-graph-store.adapter.js';
import type { CostEntry } from '../../lib/costs/daily-cost.js';
import { dayGsiPartitions, keys, stagingPrefix } from '../../lib/kernel/memory-paths.js';
import { restagedMarkdown } from '../../lib/knowledge/promotion.js';
import { parseFrontMatter } from '../../lib/kernel/front-matter.js';
import { getTextOrNull } from '../../lib/kernel/s3-objects.adapter.js';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import type { GraphLogEntry } from '../../lib/graph/relation-graph.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { itemSize } from '../../lib/kernel/dynamo-item-size.adapter.js';
import { stagedDocuments } from '../../lib/knowledge/staging.js';
import type { BatchLog } from '../../lib/batches/batch-log.js';
import type { SleepTimeRun } from '../../lib/sleep-time/run-log.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';

const USER = 'turn-reads';
let stack: LocalHarness;

beforeAll(async () => {
  stack = await startHarness({ stage: 'turnreads', logLevel: 'SILENT' });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

type Sent = { name: string; input: Record<string, unknown> };

/**
 * The reflector's document client, each request recorded; an eventually consistent read
 * leaves out the turns in `stale` (a replica that has not seen their writes yet).
 */
function readerClient(stale: ReadonlySet<number>, sent: Sent[]): DynamoDBDocumentClient {
  const { ddb } = functionClients('reflector', stack.iam);
  const send = async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
    const res = (await ddb.send(command as never)) as Record<string, unknown>;
    const input = command.input;
    const table = Object.values((input.RequestItems ?? {}) as Record<string, { ConsistentRead?: boolean }>)[0];
    const consistent = input.ConsistentRead === true || table?.ConsistentRead === true;
    sent.push({ name: command.constructor.name, input: { ...input, consistent } });
    if (consistent) return res;
    const fresh = (i: Record<string, unknown>) => !stale.has(Number(i.turnId));
    const responses = res.Responses as Record<string, Array<Record<string, unknown>>> | undefined;
    return {
      ...res,
      ...(res.Items ? { Items: (res.Items as Array<Record<string, unknown>>).filter(fresh) } : {}),
      ...(responses
        ? { Responses: Object.fromEntries(Object.entries(responses).map(([t, items]) => [t, items.filter(fresh)])) }
        : {}),
    };
  };
  return { send } as unknown as DynamoDBDocumentClient;
}

describe('fewer DynamoDB units per turn', () => {
  it('reads runs with a Query and lone turns with a BatchGetItem, and reads strongly consistent only what a stale read missed', async () => {
    const { tableName: table, bucketName: bucket } = stack.info;
    const writer = functionClients('signal', stack.iam);
    const saved = [1, 2, 3, 4, 5, 8, 10, 11].map((turnId) =>
      turn({ userId: USER, turnId, query: `question ${turnId}`, response: `answer ${turnId}` }),
    );
    await new DynamoS3TurnStore({
      ddb: writer.ddb,
      s3: writer.s3,
      tableName: table,
      bucketName: bucket,
      changes: new DynamoSearchChangeLog({ ddb: writer.ddb, tableName: table }),
    }).saveTurns(saved);

    const sent: Sent[] = [];
    const { ddb, s3 } = functionClients('reflector', stack.iam);
    const reader = new DynamoS3TurnStore({
      ddb: readerClient(new Set([3, 8]), sent),
      s3,
      tableName: table,
      bucketName: bucket,
      changes: new DynamoSearchChangeLog({ ddb, tableName: table }),
    });
    // 6 and 7 were never written; 9 is between two written turns but not asked for.
    const { turns, missing } = await reader.getTurns(USER, [11, 1, 2, 3, 4, 5, 6, 8, 10, 2]);

    expect(turns.map((t) => [t.turnId, t.query])).toEqual(
      [1, 2, 3, 4, 5, 8, 10, 11].map((id) => [id, `question ${id}`]),
    );
    expect(missing).toEqual([{ turnId: 6, reason: 'not in the turn index' }]);
    const eventual = sent.filter((s) => !s.input.consistent);
    expect(eventual.filter((s) => s.name === 'QueryCommand').map((s) => s.input.ExpressionAttributeValues)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ':first': 'TURN#0000000001', ':last': 'TURN#0000000006' }),
        expect.objectContaining({ ':first': 'TURN#0000000010', ':last': 'TURN#0000000011' }),
      ]),
    );
    // The lone turn (8) in a BatchGetItem; then only what the stale reads did not return, strongly consistent.
    const consistent = sent.filter((s) => s.input.consistent);
    expect(consistent.map((s) => s.name)).toEqual(['BatchGetCommand']);
    const keysOf = (s: Sent) =>
      Object.values(s.input.RequestItems as Record<string, { Keys: Array<{ sk: string }> }>)[0]?.Keys.map((k) => k.sk);
    expect(keysOf(consistent[0] as Sent)).toEqual(['TURN#0000000003', 'TURN#0000000006', 'TURN#0000000008']);

    // The search index's read of the same turns (their words and attributes) agrees.
    const index = await reader.turnIndex(USER, [4, 5, 8]);
    expect(index.map((e) => [e.turnId, e.text.includes(`question ${e.turnId}`)])).toEqual([
      [4, true],
      [5, true],
      [8, true],
    ]);
  });

  it('packs the graph log by time: the same entries written again are one pack, entries two packs hold are read once, the newest first', async () => {
    const { ddb } = functionClients('reflector', stack.iam);
    const { tableName: table } = stack.info;
    const graph = new DynamoGraphStore({ ddb, tableName: table });
    const user = 'graph-log-packs';
    const at = (d: number) => `2026-03-0${d}T03:00:00.000Z`;
    const decay = (d: number, n: number): GraphLogEntry => ({
      at: at(d),
      action: 'decay',
      fact: `Facts/f${n}.md`,
      detail: `decayed to 0.${n}`,
    });
    // An entry written before packs: one item of its own.
    await ddb.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk: keys.userPk(user),
          sk: keys.graphLogSk(decay(1, 1)),
          userId: user,
          kind: 'graph-log',
          entry: decay(1, 1),
        },
      }),
    );
    const night2 = Array.from({ length: 60 }, (_, n) => decay(2, n));
    await graph.apply(user, { log: night2 });
    await graph.apply(user, { log: [...night2].reverse() }); // a redelivery: the same packs
    await graph.apply(user, {
      log: [decay(2, 5), { at: at(2), action: 'prune', fact: 'Facts/f5.md', detail: 'pruned' }],
    }); // the change after its preview
    await graph.apply(user, { log: [decay(3, 7)] });

    const items = await ddb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.userPk(user), ':p': keys.graphLogPrefix },
      }),
    );
    // 1 old entry; night 2: 60 entries in two packs, then a pack of two; night 3: one pack.
    expect(items.Items?.length).toBe(5);
    const night = await graph.logAt(user, at(2));
    expect(night).toHaveLength(61);
    expect(night.map((e) => keys.graphLogSk(e))).toEqual([...new Set(night.map((e) => keys.graphLogSk(e)))].sort());
    expect(await graph.logAt(user, at(1))).toEqual([decay(1, 1)]);

    const newest = await graph.log(user, 3);
    expect(newest.map((e) => [e.at, e.action, e.fact])).toEqual([
      [at(3), 'decay', 'Facts/f7.md'],
      [at(2), 'prune', 'Facts/f5.md'],
      [at(2), 'decay', 'Facts/f9.md'],
    ]);
    const all = await graph.log(user, 500);
    expect(all).toHaveLength(63);
    expect(all.at(-1)).toEqual(decay(1, 1));
  });

  it("indexes only a user's first cost entry of a day in gsi1, and the stage's day still reads every entry", async () => {
    const { tableName: table } = stack.info;
    const reflector = new DynamoCostLedger({ ddb: functionClients('reflector', stack.iam).ddb, tableName: table });
    const api = new DynamoCostLedger({ ddb: functionClients('api', stack.iam).ddb, tableName: table });
    const entry = (userId: string, day: string, jobId: string): CostEntry => ({
      userId,
      jobId,
      kind: 'batch',
      day,
      at: `${day}T10:00:00.000Z`,
      modelId: 'm',
      inputTokens: 10,
      outputTokens: 5,
      costUsd: 0.01,
    });
    const day = '2026-04-01';
    const jobs = [
      entry('cost-a', day, 'batch-1-5'),
      entry('cost-a', day, 'batch-6-9'),
      entry('cost-b', day, 'batch-1-3'),
      entry('cost-a', day, 'summary-1-9'),
      entry('cost-a', '2026-04-02', 'batch-10-12'),
    ];
    for (const e of jobs) await reflector.record(e);
    await reflector.record({ ...jobs[0], costUsd: 99 } as CostEntry); // a redelivery leaves the first entry

    const { ddb } = functionClients('api', stack.iam);
    const indexed = await Promise.all(
      dayGsiPartitions('COSTDAY', day).map((p) =>
        ddb.send(
          new QueryCommand({
            TableName: table,
            IndexName: 'gsi1',
            KeyConditionExpression: 'gsi1pk = :d',
            ExpressionAttributeValues: { ':d': p },
          }),
        ),
      ),
    );
    expect(
      indexed
        .flatMap((r) => r.Items ?? [])
        .map((i) => (i.entry as CostEntry).jobId)
        .sort(),
    ).toEqual(['batch-1-3', 'batch-1-5']);
    const byJob = (entries: CostEntry[]) => entries.map((e) => `${e.userId}/${e.jobId}/${e.costUsd}`).sort();
    expect(byJob(await api.forDay(day))).toEqual([
      'cost-a/batch-1-5/0.01',
      'cost-a/batch-6-9/0.01',
      'cost-a/summary-1-9/0.01',
      'cost-b/batch-1-3/0.01',
    ]);
    expect(byJob(await api.forDay('2026-04-02'))).toEqual(['cost-a/batch-10-12/0.01']);
    expect(byJob(await api.forUser('cost-a', day, '2026-04-02'))).toHaveLength(4);
  });

  it("keeps the reflector's records smaller: staged records without what they repeat, answers, logs and runs packed, no run-id marker; records written before read as they were", async () => {
    const { ddb, s3 } = functionClients('reflector', stack.iam);
    const { tableName: table, bucketName: bucket } = stack.info;
    const user = 'smaller-records';
    const pk = keys.userPk(user);
    const raw = async (sk: string) =>
      (await ddb.send(new GetCommand({ TableName: table, Key: { pk, sk }, ConsistentRead: true }))).Item ?? {};
    const knowledge = new DynamoS3KnowledgeStore({
      ddb,
      s3,
      tableName: table,
      bucketName: bucket,
      changes: new DynamoSearchChangeLog({ ddb, tableName: table }, { expiring: true }),
    });

    // Staged records: the front matter's first fields and a title-and-text body are not stored, and come back as staged.
    const turns = new Map([[4, turn({ turnId: 4, attributes: { dia_ids: 'D1:4' } })]]);
    const docs = stagedDocuments(
      {
        new_facts: [
          {
            title: 'Reef tank',
            content: 'The user keeps a 40-gallon reef tank.',
            source_turns: [4],
            related_existing: [],
            category: 'Facts',
          },
        ],
        corrections: [],
        connections: [
          {
            file_a: 'Knowledge/Facts/gina.md',
            file_b: 'Knowledge/Patterns/dance.md',
            relationship: 'Both came up together.',
            source_turns: [4],
          },
        ],
        open_questions: [],
      },
      { batchId: 'batch-1-4', stagedAt: '2026-05-01T10:00:00.000Z', turns },
    );
    await knowledge.putStaged(user, docs, 'batch-1-4');
    const old = { ...docs[0]!, path: 'Facts/old--batch-0-1.md' };
    await ddb.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk,
          sk: keys.stagedSk(old.path),
          type: 'staged',
          userId: user,
          path: old.path,
          kind: old.kind,
          title: old.title,
          category: old.category,
          text: old.text,
          confidence: old.confidence,
          sourceTurns: old.sourceTurns,
          batchId: 'batch-0-1',
          stagedAt: '2026-05-01T10:00:00.000Z',
          meta: { ...old.meta, note: 'old form' },
          body: 'an old body',
          promotedBy: [],
          status: 'staged',
        },
      }),
    );
    const records = new Map((await knowledge.listStaged(user)).map((r) => [r.path, r]));
    for (const d of docs) {
      expect(records.get(d.path)).toMatchObject({
        meta: d.meta,
        body: d.body,
        text: d.text,
        batchId: 'batch-1-4',
        stagedAt: '2026-05-01T10:00:00.000Z',
      });
      const item = await raw(keys.stagedSk(d.path));
      expect(item.meta).toBeUndefined();
      expect(item.body).toBeUndefined();
      expect(itemSize(item)).toBeLessThanOrEqual(1024);
    }
    expect((await raw(keys.stagedSk(docs[1]!.path))).extra).toMatchObject({
      file_a: 'Knowledge/Facts/gina.md',
      file_b: 'Knowledge/Patterns/dance.md',
    });
    expect(records.get(old.path)).toMatchObject({ meta: { ...old.meta, note: 'old form' }, body: 'an old body' });
    // A reinforcement returns the record whole too.
    expect(await knowledge.reinforce(user, docs[0]!.path, 'batch-5-9')).toMatchObject({
      meta: docs[0]!.meta,
      body: docs[0]!.body,
      promotedBy: ['batch-5-9'],
    });

    // The model's answer: packed, with the table's TTL a month on by the wall clock; an answer recorded before as JSON text reads as it did.
    const answer = {
      output: { new_facts: [{ title: 'x'.repeat(300) }] },
      usage: { inputTokens: 900, outputTokens: 120, stopReason: 'tool_use', modelId: 'm' },
    };
    await knowledge.putModelOutput(user, 'batch-1-4', answer as never);
    expect(await knowledge.getModelOutput(user, 'batch-1-4')).toEqual(answer);
    const answerItem = await raw(keys.modelOutputSk('batch-1-4'));
    expect(answerItem.response).toBeUndefined();
    expect(Number(answerItem.expiresAt) * 1000 - Date.now()).toBeGreaterThan(29 * 86_400_000);
    await ddb.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk,
          sk: keys.modelOutputSk('batch-0-1'),
          kind: 'model-output',
          userId: user,
          jobId: 'batch-0-1',
          response: JSON.stringify(answer),
        },
      }),
    );
    expect(await knowledge.getModelOutput(user, 'batch-0-1')).toEqual(answer);

    // The batch log: packed in its item, listed and read as before; a log written before as JSON text too.
    const logs = new DynamoS3BatchLogStore({ ddb, s3, tableName: table, bucketName: bucket });
    const log = (batchId: string, timestamp: string): BatchLog => ({
      batch_id: batchId,
      user_id: user,
      status: 'completed',
      timestamp,
      turns_reviewed: [1, 2, 3, 4],
      turns_missing: [],
      turns_omitted_for_budget: [],
      trigger: 'turn_threshold',
      kind: 'batch',
      urgency_score: 0.2,
      quality_gate_results: {
        items_proposed: 2,
        items_passed: 2,
        truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 },
        rejections: [],
      },
      staged_files: docs.map((d) => `Knowledge_staging/${d.path}`),
      promoted_files: [],
      reinforced: [],
      model: null,
      error: null,
      duration_ms: 5,
    });
    await logs.write(log('batch-1-4', '2026-05-01T10:01:00.000Z'));
    expect((await raw(keys.batchSk('batch-1-4'))).log).toBeUndefined();
    await ddb.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk,
          sk: keys.batchSk('batch-0-1'),
          kind: 'batch-log',
          userId: user,
          batchId: 'batch-0-1',
          status: 'completed',
          timestamp: '2026-04-30T10:00:00.000Z',
          log: JSON.stringify(log('batch-0-1', '2026-04-30T10:00:00.000Z')),
        },
      }),
    );
    expect(await logs.get(user, 'batch-1-4')).toEqual(log('batch-1-4', '2026-05-01T10:01:00.000Z'));
    expect(await logs.get(user, 'batch-0-1')).toEqual(log('batch-0-1', '2026-04-30T10:00:00.000Z'));
    const listed = await logs.list(user, 10);
    expect(listed.map((b) => b.batchId)).toEqual(['batch-1-4', 'batch-0-1']);
    expect(listed.every((b) => !('packed' in b) && !('log' in b))).toBe(true);

    // A sleep-time run: packed, its record is its commit record (no RUNID# item); a run recorded before as a map reads as it did.
    const runs = new DynamoSleepTimeLogStore({ ddb, tableName: table });
    const run = (runId: string, startedAt: string) =>
      ({
        runId,
        userId: user,
        kind: 'nightly',
        status: 'completed',
        startedAt,
        windowFrom: startedAt,
        windowTo: startedAt,
        messagesReviewed: 3,
        stored: [],
        errors: [],
      }) as unknown as SleepTimeRun;
    const fresh = run('nightly-202605020300', '2026-05-02T03:00:00.000Z');
    expect(await runs.exists(fresh)).toBe(false);
    await runs.put(fresh);
    expect(await runs.exists(fresh)).toBe(true);
    expect(await runs.exists({ ...fresh, startedAt: '2026-05-03T03:00:00.000Z' })).toBe(false);
    const before = run('nightly-202605010300', '2026-05-01T03:00:00.000Z');
    await ddb.send(
      new PutCommand({
        TableName: table,
        Item: { pk, sk: keys.runSk('nightly', before.startedAt, before.runId), type: 'sleep-time-run', run: before },
      }),
    );
    expect(await runs.exists(before)).toBe(true);
    expect(await runs.list(user, 'nightly', '2026-05-01T00:00:00.000Z', '2026-05-03T00:00:00.000Z')).toEqual([
      before,
      fresh,
    ]);
    expect(await runs.latest(user, 'nightly')).toEqual(fresh);
    expect((await runs.runsOn('2026-05-02')).map((r) => r.runId)).toEqual([fresh.runId]);
    const partition = await ddb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      }),
    );
    expect((partition.Items ?? []).filter((i) => String(i.sk).startsWith('RUNID#'))).toEqual([]);
    expect(
      (partition.Items ?? []).find((i) => i.sk === keys.runSk('nightly', fresh.startedAt, fresh.runId))?.run,
    ).toBeUndefined();
  });

  it("keeps a staged record's markdown in S3 in step with it, each function within its grants, and repairs a write a crash cut short", async () => {
    const { tableName: table, bucketName: bucket } = stack.info;
    const store = (fn: 'reflector' | 'sweep' | 'api') => {
      const { ddb, s3 } = functionClients(fn, stack.iam);
      return {
        s3,
        knowledge: new DynamoS3KnowledgeStore({
          ddb,
          s3,
          tableName: table,
          bucketName: bucket,
          changes: new DynamoSearchChangeLog({ ddb, tableName: table }, { expiring: true }),
        }),
      };
    };
    const { s3, knowledge } = store('reflector');
    const user = 'staged-objects';
    const object = async (path: string): Promise<string | null> =>
      getTextOrNull(s3, bucket, `${stagingPrefix(user)}${path}`);
    const turns = new Map([[4, turn({ turnId: 4, attributes: { session: '1', dia_ids: 'D1:4' } })]]);
    const fact = (title: string) => ({
      title,
      content: `The user keeps a ${title}.`,
      source_turns: [4],
      related_existing: [],
      category: 'Facts' as const,
    });
    const docs = stagedDocuments(
      {
        new_facts: [fact('reef tank'), fact('bonsai'), fact('kayak')],
        corrections: [],
        connections: [],
        open_questions: [],
      },
      { batchId: 'batch-1-4', stagedAt: '2026-05-01T10:00:00.000Z', turns },
    );
    const [reef, bonsai, kayak] = docs.map((d) => d.path) as [string, string, string];

    // Staged: the object is the record rendered, the seed's front matter first.
    await knowledge.putStaged(user, docs, 'batch-1-4');
    const [record] = await knowledge.stagedRecords(user, [reef]);
    expect(await object(reef)).toBe(restagedMarkdown(record!));
    expect(parseFrontMatter((await object(reef)) ?? '').meta).toMatchObject({
      staged_at: '2026-05-01T10:00:00.000Z',
      batch_id: 'batch-1-4',
      promotion_count: 0,
      source_turns: [4],
    });

    // Reinforced: promotion_count follows. A redelivered batch writes the same object (from the record as it is now).
    await knowledge.reinforce(user, reef, 'batch-5-9');
    const once = await object(reef);
    expect(parseFrontMatter(once ?? '').meta).toMatchObject({ promotion_count: 1, promoted_by: ['batch-5-9'] });
    await knowledge.putStaged(user, docs, 'batch-1-4');
    expect(await object(reef)).toBe(once);

    // A crash after the record's write and before the object's: the redelivery writes it.
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${stagingPrefix(user)}${bonsai}` }));
    await knowledge.putStaged(user, docs, 'batch-1-4');
    expect(await object(bonsai)).not.toBeNull();

    // The reinforcement that promotes does not rewrite it; promotion removes it.
    const twice = await knowledge.reinforce(user, reef, 'batch-10-14');
    expect(await object(reef)).toBe(once);
    await knowledge.promote(user, twice, 'Facts/reef_tank.md', '# reef tank\n', {
      id: 'Facts/reef_tank.md',
      title: 'reef tank',
      text: 'x',
      category: 'Facts',
      confidence: 0.7,
      sourceTurns: [4],
      summary: 'x',
      promotedAt: '2026-05-02T00:00:00.000Z',
    });
    expect(await object(reef)).toBeNull();
    // Promoted, a redelivery writes no object again.
    await knowledge.putStaged(user, docs, 'batch-1-4');
    expect(await object(reef)).toBeNull();

    // The API's discard and the expiry sweep's delete remove theirs.
    await store('api').knowledge.recordReview(user, bonsai, {
      decision: 'discarded',
      by: 'reviewer',
      at: '2026-05-03T00:00:00.000Z',
    });
    expect(await object(bonsai)).toBeNull();
    await store('sweep').knowledge.deleteStaged(user, kayak);
    expect(await object(kayak)).toBeNull();
    expect(await knowledge.stagedRecords(user, [kayak])).toEqual([]);
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['api', 'reflector', 'sweep']));
  });

  it('made no AWS request its function is not granted', () => {
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['api', 'reflector', 'signal']));
    expect(iamDenials(stack)).toEqual([]);
  });
});
