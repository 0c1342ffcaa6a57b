/**
 * Edit and restore (docs/memory-api.md "Edit and restore") through the real api handler on the
 * local harness: a Knowledge fact, a nightly finding and a summary are corrected; search finds
 * the new text and no longer the old; the audit entry holds the old text; restore brings it
 * back (and search follows); other kinds answer 400 naming `id`, unknown ids 404, a concurrent
 * change of the same text 409; what an edit stores is redacted as a turn is.
 *
 * The items are written by the real stores (as the reflector writes them), not through a
 * replayed conversation: the edit is what is under test. The handlers log at INFO, and no
 * word of an edited text, old or new, reaches stdout or stderr.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoS3SummaryStore } from '../../lib/summaries/summary-store.adapter.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import { summaryPair } from '../../lib/summaries/summary.js';
import { MemoryClient, MemoryClientError } from '../../functions/api/client.js';
import { apiRequest } from '../helpers/api.js';
import { bucketReader } from '../helpers/s3.js';

let stack: LocalHarness;
let s3: S3Client;
let client: MemoryClient;
const USER = 'edit-user';
const FACT = 'Facts/kayak.md';
const FINDING = 'Reflections/2026-01-02/unresolved-kayak.md';
const SUMMARY = 'summary-1-4';
const OLD_FACT = 'The user paddles a green sea kayak on weekends.';
const OLD_FINDING = 'The user never said where the kayak is stored.';
const OLD_SUMMARY = 'They talked about the marmalade recipe and the plum harvest.';

const output: string[] = [];

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      output.push(String(chunk));
      return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    });
  }
  stack = await startHarness({ stage: 'edittest', logLevel: 'INFO', speed: 300 });
  const ddb = createDocumentClient(createDynamoDbClient());
  s3 = new S3Client({
    region: stack.info.region,
    endpoint: stack.info.endpoints.s3,
    forcePathStyle: true,
    credentials: stack.info.credentials,
  });
  const changes = new DynamoSearchChangeLog({ ddb, tableName: stack.info.tableName });
  const knowledge = new DynamoS3KnowledgeStore({
    ddb,
    s3,
    tableName: stack.info.tableName,
    bucketName: stack.info.bucketName,
    changes,
  });
  const doc = (id: string, title: string, category: string, text: string) => ({
    path: id,
    markdown: `---\ntitle: ${title}\n---\n\n# ${title}\n\n${text}\n`,
    doc: {
      id,
      title,
      text,
      summary: text,
      category,
      confidence: 0.7,
      sourceTurns: [2],
      promotedAt: '2026-01-01T00:00:00.000Z',
    },
  });
  await knowledge.putKnowledge(USER, [
    doc(FACT, 'kayak', 'Facts', OLD_FACT),
    doc(FINDING, 'kayak storage', 'Reflections', OLD_FINDING),
  ]);
  const summaries = new DynamoS3SummaryStore({
    ddb,
    s3,
    tableName: stack.info.tableName,
    bucketName: stack.info.bucketName,
    changes,
  });
  await summaries.write(
    summaryPair({
      userId: USER,
      id: SUMMARY,
      kind: 'idle',
      trigger: 'idle',
      createdAt: '2026-01-01T00:00:00.000Z',
      sourceTurns: [1, 2, 3, 4],
      prompt: 'Summarise.',
      text: OLD_SUMMARY,
      modelId: 'offline',
      inputTokens: 10,
      outputTokens: 10,
      deleted: false,
    }),
  );
  client = new MemoryClient(stack.info.apiUrl, () => stack.info.adminToken);
}, 120_000);
afterAll(async () => {
  vi.restoreAllMocks();
  s3?.destroy();
  await stack?.stop();
});

const search = async (query: string) =>
  (await client.search(USER, { query, limit: 10 })).results.map((r) => ({ id: r.id, text: r.text }));
const auditOf = async (id: string) =>
  (await client.call('auditList', { params: { userId: USER }, query: { itemId: id } })).entries as Array<
    Record<string, unknown>
  >;
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => (e instanceof MemoryClientError ? e : Promise.reject(e)),
  );

describe('editing an item (itemEdit) and restoring it (itemRestore)', () => {
  it('a Knowledge fact: search finds the new text only, the audit entry holds the old, restore brings it back', async () => {
    const id = `knowledge:${FACT}`;
    expect(await search('green sea kayak')).toEqual(expect.arrayContaining([{ id, text: OLD_FACT }]));
    const edited = await client.editItem(USER, id, {
      text: 'The user paddles a yellow river canoe on Sundays.',
      reason: 'it is a canoe',
    });
    expect(edited.item).toMatchObject({
      id,
      kind: 'knowledge',
      text: 'The user paddles a yellow river canoe on Sundays.',
      confidence: 0.7,
    });

    expect(await search('yellow river canoe')).toEqual(
      expect.arrayContaining([{ id, text: 'The user paddles a yellow river canoe on Sundays.' }]),
    );
    expect((await search('green sea kayak')).map((r) => r.id)).not.toContain(id);
    const [entry] = await auditOf(id);
    expect(entry).toMatchObject({ action: 'edit', actor: 'local-admin', reason: 'it is a canoe', previous: OLD_FACT });
    expect(await bucketReader(stack.info).text(`users/${USER}/Knowledge/${FACT}`)).toMatch(
      /history:[\s\S]*green sea kayak[\s\S]*# kayak\n\nThe user paddles a yellow river canoe/,
    );

    // The same request again (a retry) writes nothing new.
    await client.editItem(USER, id, {
      text: 'The user paddles a yellow river canoe on Sundays.',
      reason: 'it is a canoe',
    });
    expect((await client.retrieve(USER, { id })).item.history).toHaveLength(1);
    expect(await auditOf(id)).toHaveLength(1);

    const restored = await client.restoreItem(USER, id, { at: String(entry?.at), reason: 'it was a kayak after all' });
    expect(restored.item).toMatchObject({ id, text: OLD_FACT });
    expect(restored.item.history?.map((h) => h.change)).toEqual(['edit', 'restore']);
    expect(await search('green sea kayak')).toEqual(expect.arrayContaining([{ id, text: OLD_FACT }]));
    expect((await search('yellow river canoe')).map((r) => r.id)).not.toContain(id);
    const [restore] = await auditOf(id);
    expect(restore).toMatchObject({
      action: 'restore',
      reason: 'it was a kayak after all',
      previous: 'The user paddles a yellow river canoe on Sundays.',
    });
    // A restore is a change in its own right: it can be restored away.
    expect((await client.restoreItem(USER, id, { at: String(restore?.at), reason: 'canoe it is' })).item.text).toBe(
      'The user paddles a yellow river canoe on Sundays.',
    );
    expect((await failure(client.restoreItem(USER, id, { at: '2020-01-01T00:00:00.000Z', reason: 'x' })))?.status).toBe(
      404,
    );
  });

  it('a nightly finding is edited as a fact is', async () => {
    const id = `knowledge:${FINDING}`;
    const edited = await client.editItem(USER, id, {
      text: 'The kayak is stored in the garage.',
      reason: 'the user told me',
    });
    expect(edited.item).toMatchObject({ id, contentTypes: ['finding'], text: 'The kayak is stored in the garage.' });
    expect((await search('kayak stored garage')).map((r) => r.id)).toContain(id);
    expect((await auditOf(id))[0]).toMatchObject({ action: 'edit', previous: OLD_FINDING });
  });

  it('a summary: search finds the new text only, the audit entry holds the old, restore brings it back', async () => {
    const id = `summary:${SUMMARY}`;
    expect((await search('marmalade plum harvest')).map((r) => r.id)).toContain(id);
    const edited = await client.editItem(USER, id, {
      text: 'They talked about the quince jelly and the apple press.',
      reason: 'wrong fruit',
    });
    expect(edited.item).toMatchObject({
      id,
      kind: 'summary',
      text: 'They talked about the quince jelly and the apple press.',
    });
    expect((await search('quince jelly apple press')).map((r) => r.id)).toContain(id);
    expect((await search('marmalade plum harvest')).map((r) => r.id)).not.toContain(id);
    const [entry] = await auditOf(id);
    expect(entry).toMatchObject({ action: 'edit', previous: OLD_SUMMARY, reason: 'wrong fruit' });

    const restored = await client.restoreItem(USER, id, { at: String(entry?.at), reason: 'it was marmalade' });
    expect(restored.item.text).toBe(OLD_SUMMARY);
    expect((await search('marmalade plum harvest')).map((r) => r.id)).toContain(id);
    expect((await search('quince jelly apple press')).map((r) => r.id)).not.toContain(id);
    expect((await auditOf(id))[0]).toMatchObject({
      action: 'restore',
      previous: 'They talked about the quince jelly and the apple press.',
    });
  });

  it('answers 400 naming `id` for any other kind, 404 for an unknown id, 400 naming fields for a bad body', async () => {
    for (const id of ['turn:1', 'staged:Facts/x.md', 'mem:abc', 'diary:batch-1-3', 'episode:1', 'nonsense']) {
      const error = await failure(client.editItem(USER, id, { text: 'x', reason: 'y' }));
      expect(error?.status, id).toBe(400);
      expect(error?.fields?.map((f) => f.path)).toEqual(['params.id']);
    }
    expect(
      (await failure(client.restoreItem(USER, 'turn:1', { at: '2026-01-01T00:00:00.000Z', reason: 'y' })))?.status,
    ).toBe(400);
    expect(
      (await failure(client.editItem(USER, 'knowledge:Facts/never_there.md', { text: 'x', reason: 'y' })))?.status,
    ).toBe(404);
    expect((await failure(client.editItem(USER, 'summary:no-such-summary', { text: 'x', reason: 'y' })))?.status).toBe(
      404,
    );
    const bad = await apiRequest(
      `${stack.info.apiUrl}/v1/users/${USER}/memory/items/${encodeURIComponent(`knowledge:${FACT}`)}/restore`,
      stack.info.adminToken,
      'POST',
      { at: 'yesterday' },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.map((f: { path: string }) => f.path).sort()).toEqual(['body.at', 'body.reason']);
  });

  it('redacts what an edit stores: a secret in the new text never reaches the item', async () => {
    const id = `knowledge:${FACT}`;
    const edited = await client.editItem(USER, id, {
      text: 'The boat shed key is AKIAIOSFODNN7EXAMPLE now.',
      reason: 'new key',
    });
    expect(edited.item.text).toBe('The boat shed key is [redacted:aws_access_key] now.');
  });

  it('deleting an edited item drops the words its edits kept in the audit trail, and its trust record', async () => {
    const id = `knowledge:${FINDING}`;
    await client.call('memoryOutcomes', { params: { userId: USER }, body: { ids: [id], validation: 'APPROVE' } });
    const ddb = createDocumentClient(createDynamoDbClient());
    const trustRecord = () =>
      ddb.send(
        new GetCommand({ TableName: stack.info.tableName, Key: { pk: keys.ownerPk(USER), sk: keys.trustSk(id) } }),
      );
    expect((await trustRecord()).Item).toBeDefined();
    await client.deleteItem(USER, id, 'not true');
    const entries = await auditOf(id);
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['edit', 'delete']));
    for (const e of entries) expect(e.previous, String(e.action)).toBeUndefined();
    expect((await trustRecord()).Item).toBeUndefined();
    // Another item's edit keeps its old text.
    expect((await auditOf(`summary:${SUMMARY}`)).some((e) => e.previous !== undefined)).toBe(true);
  });

  it('logs no word of the texts edited, old or new (the handlers log at INFO)', () => {
    const logged = output.join('');
    expect(logged).toContain('request redacted');
    for (const word of ['paddles', 'canoe', 'garage', 'marmalade', 'quince', 'AKIAIOSFODNN7EXAMPLE', 'it is a canoe'])
      expect(logged, word).not.toContain(word);
  });
});
