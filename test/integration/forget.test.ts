/**
 * Through the real handlers on the local harness: two users replay the same
 * conversation, each shares an item with GLOBAL, one is forgotten. Afterwards nothing of hers
 * is left (items, objects and every version of them in the versioned bucket, her search index, her GLOBAL contribution and
 * the old GLOBAL segments that held it), the other user's state is byte for byte what it
 * was, and what arrives later for her from before the forget writes nothing.
 */
import { readFileSync } from 'node:fs';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { MemoryClient } from '../../functions/api/client.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { dumpUserState, type UserStateDump } from '../../infra/local/state-dump.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { jobDeduplicationId } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import type { UserArchive } from '../../lib/archive/user-archive.js';
import { bucketReader } from '../helpers/s3.js';
import { iamDenials } from '../helpers/iam.js';

const GONE = 'forget-gone';
const KEPT = 'forget-kept';
const THIRD = 'forget-third';
/** Words only the forgotten user's shared item holds. */
const HER_WORDS = 'Quillfeather marmalade recipe from grandmother Odalys';

let stack: LocalHarness;
let keptBefore: UserStateDump;
/** Her state and her export, taken just before she is forgotten. */
let goneBefore: UserStateDump;
let archive: UserArchive;
const ddb = createDocumentClient(createDynamoDbClient());

const client = (token: string) => new MemoryClient(stack.info.apiUrl, () => token);
const dump = (userId: string, options: { versions?: boolean } = {}) =>
  dumpUserState({ ddb, s3: s3() }, stack.info, userId, options);
let s3client: S3Client | undefined;
const s3 = () =>
  (s3client ??= new S3Client({
    region: stack.info.region,
    endpoint: stack.info.endpoints.s3,
    forcePathStyle: true,
    credentials: stack.info.credentials,
  }));

const partition = async (pk: string): Promise<string[]> => {
  const res = await ddb.send(
    new QueryCommand({
      TableName: stack.info.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
    }),
  );
  return (res.Items ?? []).map((i) => String(i.sk));
};

/** The sample conversation as `userId`'s, its lines merged by time with the other's. */
const sampleAs = (userId: string): TurnSaved[] =>
  readFileSync(new URL('../../events/samples/conversation.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => ({ ...(JSON.parse(l) as TurnSaved), userId }));

/** A long-term item the user saves, shared with GLOBAL by an administrator: its id. */
async function shareWithGlobal(userId: string, text: string): Promise<string> {
  const own = client(await stack.mintUserToken([userId], userId));
  const { item } = await own.tiers.create(userId, 'long_term', { text });
  const id = item.id;
  await client(stack.info.adminToken).call('itemPromote', {
    params: { userId, id },
    body: { to: 'global', reason: 'useful to all' },
  });
  return id;
}

beforeAll(async () => {
  stack = await startHarness({
    stage: 'forgettest',
    logLevel: (process.env.FORGET_LOG as 'INFO' | undefined) ?? 'SILENT',
    speed: 300,
  });
  const turns = [...sampleAs(GONE), ...sampleAs(KEPT)].sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  await stack.replayLines(
    turns.map((t) => JSON.stringify(t)),
    { clock: true },
  );
  await stack.waitUntilDrained();
  // A turn too large for SQS travels as a claim check (claims/{u}/) and is stored as an S3 document.
  const last = turns.filter((t) => t.userId === GONE).at(-1) as TurnSaved;
  const large = {
    ...last,
    turnId: last.turnId + 1,
    timestamp: new Date(Date.parse(last.timestamp) + 60_000).toISOString(),
    response: `${HER_WORDS}. `.repeat(6_000),
  };
  await stack.publisher.publish([large]);
  await stack.waitUntilDrained();
  await stack.advanceTo(new Date(stack.now().getTime() + 24 * 3_600_000));
  await stack.waitUntilDrained();
  // A promoted Knowledge document of hers (an S3 object and a knowledge index snapshot), whatever the replay promoted.
  const knowledge = new DynamoS3KnowledgeStore({
    ddb,
    s3: s3(),
    tableName: stack.info.tableName,
    bucketName: stack.info.bucketName,
    changes: new DynamoSearchChangeLog({ ddb, tableName: stack.info.tableName }),
  });
  const text = `${HER_WORDS} needs bitter oranges.`;
  const marmalade = (t: string) => ({
    path: 'Facts/marmalade.md',
    markdown: `# marmalade\n\n${t}\n`,
    doc: {
      id: 'Facts/marmalade.md',
      title: 'marmalade',
      text: t,
      summary: t,
      category: 'Facts',
      confidence: 0.8,
      sourceTurns: [1],
      promotedAt: stack.now().toISOString(),
    },
  });
  // Written twice, as an edit does: the first text stays behind as a noncurrent version.
  await knowledge.putKnowledge(GONE, [marmalade(`${HER_WORDS} needs oranges.`)]);
  await knowledge.putKnowledge(GONE, [marmalade(text)]);
  // An object of hers deleted without a version id, as a plain delete leaves it: its versions and a delete marker.
  const retired = { Bucket: stack.info.bucketName, Key: `users/${GONE}/Knowledge/Facts/retired.md` };
  await s3().send(new PutObjectCommand({ ...retired, Body: `# retired\n\n${HER_WORDS} kept bees.\n` }));
  await s3().send(new DeleteObjectCommand(retired));
  await shareWithGlobal(GONE, `${HER_WORDS}: the family's way.`);
  await shareWithGlobal(KEPT, 'Reef tanks need weekly water changes.');
  keptBefore = await dump(KEPT);
}, 240_000);
afterAll(async () => {
  s3client?.destroy();
  await stack?.stop();
});

describe('forgetting a user (DELETE /v1/users/{u})', () => {
  it('erases every item, object and version of hers, her index and her GLOBAL contribution; the other user is untouched', async () => {
    const bucket = bucketReader(stack.info);
    expect((await partition(keys.userPk(GONE))).length).toBeGreaterThan(50);
    expect((await bucket.list(`claims/${GONE}/`)).length).toBe(1);
    expect(await partition(keys.userPk(GONE))).toEqual(expect.arrayContaining([keys.searchIndexSk, keys.signalSk]));
    const globalBefore = await partition('GLOBAL');

    const own = client(await stack.mintUserToken([GONE], GONE));
    goneBefore = await dump(GONE);
    const objectsBefore = await bucket.list(`users/${GONE}/`);
    const versionsBefore = await bucket.versions(`users/${GONE}/`);
    archive = (await own.export(GONE)).archive as UserArchive;
    const asked = await own.forget(GONE);
    expect(asked.receipt).toMatchObject({ userId: GONE, requestedBy: GONE, status: 'pending' });
    // A retry while it is pending answers the same receipt.
    expect((await own.forget(GONE)).receipt.requestedAt).toBe(asked.receipt.requestedAt);
    await stack.waitUntilDrained();

    const { receipt } = await own.forgetReceipt(GONE);
    expect(receipt.status).toBe('done');
    expect(receipt.counts.items).toBeGreaterThan(50);
    // Every object she had (documents, Knowledge, indexes, the claim check; old versions counted too) was erased.
    expect(objectsBefore).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/Knowledge\//),
        expect.stringMatching(/\/index\/knowledge\//),
        expect.stringMatching(/\/index\/search\//),
        expect.stringMatching(/\/turns\//),
      ]),
    );
    expect(receipt.counts.objects).toBeGreaterThanOrEqual(objectsBefore.length + 1);
    expect(receipt.counts.globalItems).toBe(1);
    expect(await partition(keys.userPk(GONE))).toEqual([]);
    expect(await bucket.list(`users/${GONE}/`)).toEqual([]);
    expect(await bucket.list(`claims/${GONE}/`)).toEqual([]);
    // The bucket is versioned: before the forget, her overwrites and deletes had left noncurrent
    // versions and delete markers; afterwards no version of hers is left, current or not.
    expect(versionsBefore.some((v) => !v.isLatest)).toBe(true);
    expect(versionsBefore.some((v) => v.deleteMarker)).toBe(true);
    expect(await bucket.versions(`users/${GONE}/`)).toEqual([]);
    expect(await bucket.versions(`claims/${GONE}/`)).toEqual([]);
    expect(await dump(GONE, { versions: true })).toEqual({ userId: GONE, items: {}, objects: {}, versions: {} });

    // GLOBAL: her shared copy is gone, the other user's stays, and no segment of GLOBAL's index holds her words.
    const globalAfter = await partition('GLOBAL');
    expect(globalBefore.filter((sk) => sk.startsWith(keys.memoryPrefix))).toHaveLength(2);
    expect(globalAfter.filter((sk) => sk.startsWith(keys.memoryPrefix))).toHaveLength(1);
    const segments = await bucket.list('users/GLOBAL/index/search/');
    expect(segments.length).toBeGreaterThan(0);
    for (const key of segments) expect(await bucket.text(key), key).not.toContain('Quillfeather');
    // Nor any version of them: the segments compactions replaced are noncurrent versions until the forget deletes them.
    const segmentVersions = await bucket.versions('users/GLOBAL/index/search/');
    for (const v of segmentVersions.filter((x) => !x.deleteMarker))
      expect(await bucket.versionText(v.key, v.versionId), `${v.key}@${v.versionId}`).not.toContain('Quillfeather');
    // Searched by a third user, whose searches touch neither user's state (a search counts resurrections of the searcher's own items).
    const third = client(await stack.mintUserToken([THIRD], THIRD));
    const found = await third.search(THIRD, { query: 'Quillfeather marmalade grandmother', limit: 10 });
    expect(found.results.map((r) => r.text).join(' ')).not.toContain('Quillfeather');
    expect(
      (await third.search(THIRD, { query: 'weekly water changes reef', limit: 10 })).results.some((r) =>
        r.id.startsWith('mem:'),
      ),
    ).toBe(true);

    expect(await dump(KEPT)).toEqual(keptBefore);
    expect(iamDenials(stack)).toEqual([]);
    bucket.destroy();
  });

  it('drops what arrives later from before the forget — a turn, a redriven job, an idle check — and writes nothing', async () => {
    const { receipt } = await client(stack.info.adminToken).forgetReceipt(GONE);
    const before = new Date(Date.parse(receipt.requestedAt) - 3_600_000).toISOString();
    const sqs = new SQSClient({
      region: stack.info.region,
      endpoint: stack.info.endpoints.sqs,
      credentials: stack.info.credentials,
    });
    const job = {
      type: 'reflector.job',
      version: 1,
      jobId: 'batch-1-5',
      userId: GONE,
      kind: 'batch',
      trigger: 'turn_count',
      urgency: 0,
      turnIds: [1, 2, 3, 4, 5],
      requestedAt: before,
    };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: stack.info.queues.job.url,
        MessageBody: JSON.stringify(job),
        MessageGroupId: GONE,
        MessageDeduplicationId: jobDeduplicationId(job),
      }),
    );
    const check = { type: 'idle.check', version: 1, userId: GONE, lastTurnId: 30, enqueuedAt: before, dueAt: before };
    // (DelaySeconds 0: the idle queue delays a message 5 minutes unless told otherwise.)
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: stack.info.queues.idle.url,
        MessageBody: JSON.stringify(check),
        DelaySeconds: 0,
      }),
    );
    const late = { ...sampleAs(GONE)[0], turnId: 99, timestamp: before } as TurnSaved;
    await stack.publisher.publish([late]);
    await stack.waitUntilDrained();
    expect(await partition(keys.userPk(GONE))).toEqual([]);
    expect(await dump(GONE)).toEqual({ userId: GONE, items: {}, objects: {} });

    // After the forget she starts afresh: a turn of hers from then on is stored.
    // (Not drained: her idle check waits for the simulated clock to pass her quiet window.)
    await stack.publisher.publish([
      { ...late, turnId: 1, timestamp: new Date(Date.parse(receipt.requestedAt) + 60_000).toISOString() },
    ]);
    const deadline = Date.now() + 20_000;
    while (!(await partition(keys.userPk(GONE))).includes(keys.signalSk) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(await partition(keys.userPk(GONE))).toEqual(expect.arrayContaining([keys.signalSk, keys.turnSk(1)]));
    expect(await dump(KEPT)).toEqual(keptBefore);
    expect(iamDenials(stack)).toEqual([]);
    sqs.destroy();
  });

  it('restores her export into a fresh stack: the same state, searchable; a second import is refused', async () => {
    const fresh = await startHarness({
      stage: 'importtest',
      logLevel: (process.env.FORGET_LOG as 'INFO' | undefined) ?? 'SILENT',
      speed: 300,
    });
    try {
      const there = new MemoryClient(fresh.info.apiUrl, async () => fresh.mintUserToken([GONE], GONE));
      expect(archive.documents.some((d) => d.base64 !== undefined)).toBe(true);
      const { imported } = await there.import(GONE, archive);
      expect(imported).toEqual({ records: archive.records.length, documents: archive.documents.length });
      expect(await fresh.dumpState()).toEqual([goneBefore]);
      const found = await there.search(GONE, { query: 'LGBTQ support group', limit: 5 });
      expect(found.results.length).toBeGreaterThan(0);
      await expect(there.import(GONE, archive)).rejects.toMatchObject({ status: 409 });
      expect(iamDenials(fresh)).toEqual([]);
    } finally {
      await fresh.stop();
    }
  });

  it('refuses GLOBAL, and another user', async () => {
    const other = client(await stack.mintUserToken([KEPT], KEPT));
    await expect(other.forget(GONE)).rejects.toMatchObject({ status: 403 });
    await expect(client(stack.info.adminToken).forget('GLOBAL')).rejects.toMatchObject({ status: 400 });
    expect(await dump(KEPT)).toEqual(keptBefore);
  });
});
