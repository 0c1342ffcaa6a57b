/**
 * `npm run migrate -- turn-keys` (infra/ops/migrate-cli.ts), as an operator runs it, against the
 * local harness (docs/data-model.md, "Window reads by key range"): batch logs and summaries still
 * under their id alone (`BATCH#{id}`, `SUMMARY#{id}`), which the memory API's listings do not
 * read, move under their last turn, and its real handler lists them in turn order again; one already written under its new key
 * keeps that one; a second run moves nothing and changes nothing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryClient } from '../../functions/api/client.js';
import { functionClients } from '../../infra/local/clients.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import type { BatchLog } from '../../lib/batches/batch-log.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import { iamDenials } from '../helpers/iam.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const USER = 'migrate-user';

let stack: LocalHarness;
let ddb: DynamoDBDocumentClient;

beforeAll(async () => {
  stack = await startHarness({ stage: 'migratetest', logLevel: 'SILENT' });
  const { region, credentials, endpoints } = stack.info;
  ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ region, credentials, endpoint: endpoints.dynamodb }));
}, 120_000);
afterAll(async () => {
  ddb?.destroy();
  await stack?.stop();
});

const log = (first: number, last: number): BatchLog => ({
  batch_id: `batch-${first}-${last}`,
  user_id: USER,
  status: 'completed',
  timestamp: `2026-03-0${last / 10}T10:00:00.000Z`,
  input_at: `2026-03-0${last / 10}T10:00:00.000Z`,
  turns_reviewed: Array.from({ length: last - first + 1 }, (_, i) => first + i),
  turns_missing: [],
  turns_omitted_for_budget: [],
  trigger: 'turn_threshold',
  kind: 'batch',
  urgency_score: 0.2,
  quality_gate_results: {
    items_proposed: 0,
    items_passed: 0,
    truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 },
    rejections: [],
  },
  staged_files: [],
  promoted_files: [],
  reinforced: [],
  model: null,
  error: null,
  duration_ms: 5,
});
const summary = (first: number, last: number, text: string) => ({
  pk: keys.userPk(USER),
  sk: keys.summarySk(`summary-${first}-${last}`),
  type: 'summary',
  userId: USER,
  id: `summary-${first}-${last}`,
  kind: 'idle-summary',
  trigger: 'idle',
  createdAt: `2026-03-0${last / 10}T11:00:00.000Z`,
  sourceTurns: Array.from({ length: last - first + 1 }, (_, i) => first + i),
  prompt: 'Summarise the conversation so far.',
  text,
  modelId: 'm',
  inputTokens: 1,
  outputTokens: 1,
  deleted: false,
});

const get = async (sk: string) =>
  (
    await ddb.send(
      new GetCommand({ TableName: stack.info.tableName, Key: { pk: keys.userPk(USER), sk }, ConsistentRead: true }),
    )
  ).Item;
const put = (item: Record<string, unknown>) =>
  ddb.send(new PutCommand({ TableName: stack.info.tableName, Item: item }));

/** The item at `sk` put back under its id alone (`BATCH#{id}`, `SUMMARY#{id}`), as the code before the migration wrote it; `keep`: the new one stays too. */
async function toOldKey(sk: string, old: string, keep = false): Promise<void> {
  const item = await get(sk);
  if (!item) throw new Error(`no item at ${sk}`);
  await put({ ...item, sk: old });
  if (!keep) await ddb.send(new DeleteCommand({ TableName: stack.info.tableName, Key: { pk: keys.userPk(USER), sk } }));
}

/** Every item of the user's, sort key → item. */
async function partition(): Promise<Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, unknown>> = {};
  let start: Record<string, unknown> | undefined;
  do {
    const res = await ddb.send(
      new QueryCommand({
        TableName: stack.info.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.userPk(USER) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of res.Items ?? []) out[String(item.sk)] = item;
    start = res.LastEvaluatedKey;
  } while (start);
  return out;
}

/** `npm run migrate -- turn-keys --local --state FILE`. Asynchronously: the stack it reaches serves from this process. */
function migrate(state: string): Promise<{ status: number | null; stderr: string; last: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(ROOT, 'infra/ops/migrate-cli.ts'), 'turn-keys', '--local', '--state', state],
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

const listed = async () => {
  const api = new MemoryClient(stack.info.apiUrl, () => stack.info.adminToken);
  const { batches } = await api.call('batchList', { params: { userId: USER }, query: { limit: 10 } });
  const { summaries } = await api.call('summaryList', { params: { userId: USER }, query: { limit: 10 } });
  return {
    batches: (batches as Array<{ batchId: string }>).map((b) => b.batchId),
    summaries: (summaries as Array<{ id: string }>).map((s) => s.id),
  };
};

describe('npm run migrate -- turn-keys', () => {
  it('moves old-key batch logs and summaries under their last turn, keeps one already moved, and a second run is a no-op', async () => {
    const reflector = functionClients('reflector', stack.iam);
    const logs = new DynamoS3BatchLogStore({
      ddb: reflector.ddb,
      s3: reflector.s3,
      tableName: stack.info.tableName,
      bucketName: stack.info.bucketName,
    });
    for (const [first, last] of [
      [1, 10],
      [11, 20],
      [21, 30],
    ] as const) {
      await logs.write(log(first, last));
      await put(summary(first, last, `Summary of turns ${first} to ${last}.`));
    }
    // The old layout: batch 11–20 and summary 21–30 under their ids alone; summary 1–10 under both
    // keys (written again by the new code across the deploy), the new one newer.
    await toOldKey(keys.batchSk('batch-11-20'), 'BATCH#batch-11-20');
    await toOldKey(keys.summarySk('summary-21-30'), 'SUMMARY#summary-21-30');
    await toOldKey(keys.summarySk('summary-1-10'), 'SUMMARY#summary-1-10', true);
    await put({ ...summary(1, 10, 'Summary of turns 1 to 10, written again.') });
    const moved = { batch: await get('BATCH#batch-11-20'), summary: await get('SUMMARY#summary-21-30') };
    // The listings read the turn-keyed range: what is under an old key is not listed.
    const before = await listed();
    expect(before.batches).toEqual(['batch-21-30', 'batch-1-10']);
    expect(before.summaries).not.toContain('summary-21-30');

    const state = join(mkdtempSync(join(tmpdir(), 'rm-migrate-')), 'stack.json');
    writeFileSync(state, JSON.stringify(stack.info));
    const first = await migrate(state);
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.last)).toEqual({ migration: 'turn-keys', moved: 2, alreadyMoved: 1 });
    const after = await partition();
    expect(Object.keys(after).filter((sk) => /^(BATCH|SUMMARY)#[a-z]/.test(sk))).toEqual([]);
    // Each moved item is what it was, under its new key; the one already moved kept its newer text.
    expect(after[keys.batchSk('batch-11-20')]).toEqual({ ...moved.batch, sk: keys.batchSk('batch-11-20') });
    expect(after[keys.summarySk('summary-21-30')]).toEqual({ ...moved.summary, sk: keys.summarySk('summary-21-30') });
    expect(after[keys.summarySk('summary-1-10')]?.text).toBe('Summary of turns 1 to 10, written again.');
    expect(await logs.get(USER, 'batch-11-20')).toEqual(log(11, 20));
    expect(await listed()).toEqual({
      batches: ['batch-21-30', 'batch-11-20', 'batch-1-10'],
      summaries: ['summary-21-30', 'summary-11-20', 'summary-1-10'],
    });

    const second = await migrate(state);
    expect(second.status, second.stderr).toBe(0);
    expect(JSON.parse(second.last)).toEqual({ migration: 'turn-keys', moved: 0, alreadyMoved: 0 });
    expect(await partition()).toEqual(after);
    expect(iamDenials(stack)).toEqual([]);
    // Two child processes (tsx compiles the CLI first) on a loaded 2-core machine: each spawn is stopped at 200 s.
  }, 480_000);
});
