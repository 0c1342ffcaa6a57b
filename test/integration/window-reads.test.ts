/**
 * Window reads by key range ("hold up for users with months of history"): a user's
 * batch logs and context summaries are keyed by the last turn their id names, so the nightly
 * and weekly runs, through the reflector's real handler on DynamoDB Local, read their window,
 * not the history; items written under the old keys (`BATCH#{id}`, `SUMMARY#{id}`) are moved
 * by the migration and found as before; the runs' results are those of the whole read.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import { functionClients } from '../../infra/local/clients.js';
import { ledgerDelta, requestLedger } from '../../infra/local/request-ledger.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { DynamoS3BatchLogStore } from '../../lib/batches/batch-log-store.adapter.js';
import { DynamoS3TurnStore } from '../../lib/turns/dynamo-turn-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { auditRow } from '../../lib/items/memory-item-store.adapter.js';
import { jobDeduplicationId } from '../../lib/jobs/sqs-job-queue.adapter.js';
import { moveToTurnKeys } from '../../lib/turns/turn-keys-migration.adapter.js';
import type { BatchLog } from '../../lib/batches/batch-log.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import type { AuditEntry } from '../../lib/tiers/memory-tiers.js';
import type { SleepTimeRun } from '../../lib/sleep-time/run-log.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { apiRequest } from '../helpers/api.js';
import { iamDenials } from '../helpers/iam.js';

const USER = 'long-history';
const H = 3_600_000;
let stack: LocalHarness;
let ddb: DynamoDBDocumentClient;

beforeAll(async () => {
  stack = await startHarness({ stage: 'windowreads', logLevel: 'SILENT' });
  const { region, credentials, endpoints } = stack.info;
  ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ region, credentials, endpoint: endpoints.dynamodb }));
  requestLedger.recordItemKinds(true);
}, 120_000);
afterAll(async () => {
  requestLedger.recordItemKinds(false);
  ddb?.destroy();
  await stack?.stop();
});

const log = (first: number, last: number, inputAt: string): BatchLog => ({
  batch_id: `batch-${first}-${last}`,
  user_id: USER,
  status: 'completed',
  timestamp: inputAt,
  input_at: inputAt,
  turns_reviewed: Array.from({ length: last - first + 1 }, (_, i) => first + i),
  turns_missing: [],
  turns_omitted_for_budget: [],
  trigger: 'turn_threshold',
  kind: 'batch',
  urgency_score: 0.2,
  quality_gate_results: {
    items_proposed: 1,
    items_passed: 1,
    truncated_by_caps: { new_facts: 0, corrections: 0, connections: 0, open_questions: 0 },
    rejections: [],
  },
  staged_files: [`Knowledge_staging/Facts/topic-${last}--batch-${first}-${last}.md`],
  promoted_files: [],
  reinforced: [],
  model: null,
  error: null,
  duration_ms: 5,
});
const summary = (id: string, createdAt: string, sourceTurns: number[], text: string) => ({
  pk: keys.userPk(USER),
  type: 'summary',
  userId: USER,
  id,
  kind: 'idle-summary',
  trigger: 'idle',
  createdAt,
  sourceTurns,
  prompt: 'Summarise the conversation so far.',
  text,
  modelId: 'm',
  inputTokens: 1,
  outputTokens: 1,
  deleted: false,
});
const put = (item: Record<string, unknown>) =>
  ddb.send(new PutCommand({ TableName: stack.info.tableName, Item: item }));

/** What the old code read: every item of the kind, its read units (eventually consistent, as it read). */
async function wholeRead(prefix: string, user = USER): Promise<number> {
  let units = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const res = await ddb.send(
      new QueryCommand({
        TableName: stack.info.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.userPk(user), ':p': prefix },
        ReturnConsumedCapacity: 'TOTAL',
        ExclusiveStartKey: start,
      }),
    );
    units += res.ConsumedCapacity?.CapacityUnits ?? 0;
    start = res.LastEvaluatedKey;
  } while (start);
  return units;
}

/** The read units of the newest `count` items of the kind, read at once: what a page of them costs. */
async function newestRead(prefix: string, count: number, user: string): Promise<number> {
  const res = await ddb.send(
    new QueryCommand({
      TableName: stack.info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.userPk(user), ':p': prefix },
      ScanIndexForward: false,
      Limit: count,
      ReturnConsumedCapacity: 'TOTAL',
    }),
  );
  return res.ConsumedCapacity?.CapacityUnits ?? 0;
}

async function runJob(kind: 'nightly' | 'weekly', requestedAt: string, turnIds: number[]) {
  const job: Job = {
    type: 'reflector.job',
    version: 1,
    jobId: `${kind}-${requestedAt.slice(0, 16).replace(/[-:T]/g, '')}`,
    userId: USER,
    kind,
    trigger: 'schedule',
    urgency: 0,
    turnIds,
    requestedAt,
  };
  const sqs = new SQSClient({
    region: stack.info.region,
    endpoint: stack.info.endpoints.sqs,
    credentials: stack.info.credentials,
  });
  const before = requestLedger.snapshotByScope().reflector ?? {};
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: stack.info.queues.job.url,
      MessageBody: JSON.stringify(job),
      MessageGroupId: USER,
      MessageDeduplicationId: jobDeduplicationId(job),
    }),
  );
  await stack.waitUntilDrained();
  sqs.destroy();
  const used = ledgerDelta(before, requestLedger.snapshotByScope().reflector ?? {});
  const runs = await new DynamoSleepTimeLogStore({ ddb, tableName: stack.info.tableName }).list(
    USER,
    kind,
    requestedAt,
    requestedAt,
  );
  const run = runs.find((r) => r.runId === job.jobId);
  if (!run) throw new Error(`no ${kind} run logged`);
  return { run, used, queryUnits: (k: string) => used[`ItemKind.${k}|Query`]?.readUnits ?? 0 };
}

describe('the nightly and weekly runs read their window, not the history', () => {
  it('reads only the window by key range, finds items of the old keys once moved, and reflects as the whole read did', async () => {
    const { tableName: table, bucketName: bucket } = stack.info;
    const writer = functionClients('reflector', stack.iam);
    const logs = new DynamoS3BatchLogStore({ ddb: writer.ddb, s3: writer.s3, tableName: table, bucketName: bucket });
    // Months of history: 150 batches of 4 turns and their summaries, October to mid-December.
    for (let i = 0; i < 150; i++) {
      const at = new Date(Date.parse('2025-10-01T10:00:00Z') + i * 12 * H).toISOString();
      await logs.write(log(4 * i + 1, 4 * i + 4, at));
      const id = `summary-${4 * i + 1}-${4 * i + 4}`;
      await put({
        ...summary(
          id,
          new Date(Date.parse(at) + H).toISOString(),
          [1, 2, 3, 4].map((n) => 4 * i + n),
          `Old summary ${i}: ${'a long-gone week of reef tanks. '.repeat(20)}`,
        ),
        sk: keys.summarySk(id),
      });
    }
    // The week: a day in it (turns 851–860), and the night's day (901–910), two of its items under the old keys.
    await logs.write(log(851, 860, '2026-03-05T10:00:00.000Z'));
    await put({
      ...summary(
        'summary-851-860',
        '2026-03-05T11:00:00.000Z',
        [851, 852, 853, 854, 855, 856, 857, 858, 859, 860],
        'Week summary: planning a trip to Lisbon.',
      ),
      sk: keys.summarySk('summary-851-860'),
    });
    // Asked for again by a person a day later (req R-SUM-9): the same turns, a newer summary.
    await put({
      ...summary(
        'manual-851-860-0badcafe',
        '2026-03-06T09:00:00.000Z',
        [851, 852, 853, 854, 855, 856, 857, 858, 859, 860],
        'Manual summary: Lisbon, the tram and the tiles.',
      ),
      sk: keys.summarySk('manual-851-860-0badcafe'),
    });
    const day = Array.from({ length: 10 }, (_, i) =>
      turn({
        userId: USER,
        turnId: 901 + i,
        query: `Day question ${i}: which coral grows fastest?`,
        response: 'Montipora, usually.',
        timestamp: new Date(Date.parse('2026-03-09T10:00:00Z') + i * 60_000).toISOString(),
      }),
    );
    const signal = functionClients('signal', stack.iam);
    await new DynamoS3TurnStore({
      ddb: signal.ddb,
      s3: signal.s3,
      tableName: table,
      bucketName: bucket,
      changes: new DynamoSearchChangeLog({ ddb: signal.ddb, tableName: table }),
    }).saveTurns(day);
    await logs.write(log(901, 905, '2026-03-09T10:04:00.000Z'));
    await put({
      ...summary(
        'summary-901-905',
        '2026-03-09T11:00:00.000Z',
        [901, 902, 903, 904, 905],
        'Night summary: corals that grow fast.',
      ),
      sk: keys.summarySk('summary-901-905'),
    });
    const old = log(906, 908, '2026-03-09T10:07:00.000Z');
    await put({
      pk: keys.userPk(USER),
      sk: 'BATCH#batch-906-908',
      kind: 'batch-log',
      userId: USER,
      batchId: old.batch_id,
      status: 'completed',
      timestamp: old.timestamp,
      inputAt: old.input_at,
      log: JSON.stringify(old),
    });
    await put({
      ...summary(
        'summary-906-908',
        '2026-03-09T11:30:00.000Z',
        [906, 907, 908],
        'Night summary under the old key: the frag swap.',
      ),
      sk: 'SUMMARY#summary-906-908',
    });

    // The migration moves the two old-key items (and only them), once.
    expect(await moveToTurnKeys(ddb, table)).toEqual({ moved: 2, alreadyMoved: 0 });
    expect(await moveToTurnKeys(ddb, table)).toEqual({ moved: 0, alreadyMoved: 0 });
    const at = async (sk: string) =>
      (await ddb.send(new GetCommand({ TableName: table, Key: { pk: keys.userPk(USER), sk } }))).Item;
    expect(await at('BATCH#batch-906-908')).toBeUndefined();
    expect(await logs.get(USER, 'batch-906-908')).toEqual(old);
    expect((await at(keys.summarySk('summary-906-908')))?.text).toBe('Night summary under the old key: the frag swap.');

    // Nightly: the day's turns, the two batches over them read through their summaries.
    const nightly = await runJob(
      'nightly',
      '2026-03-10T03:00:00.000Z',
      day.map((t) => t.turnId),
    );
    expect(nightly.run).toMatchObject({ messagesReviewed: 10, summariesReviewed: 2, turnsSummarised: 8 });
    const wholeBatches = await wholeRead(keys.batchPrefix);
    const wholeSummaries = await wholeRead(keys.summaryPrefix);
    // The whole history is many units; the night's reads are its few items (half a unit each per 4 KB).
    expect(wholeBatches).toBeGreaterThan(5);
    expect(wholeSummaries).toBeGreaterThan(5);
    expect(nightly.queryUnits('BATCH#')).toBeLessThanOrEqual(0.5);
    expect(nightly.queryUnits('SUMMARY#')).toBeLessThanOrEqual(0.5);
    expect(nightly.used['ItemKind.BATCH#|Query']?.requests).toBe(1);

    // Weekly: the week's three batches, its four summaries and the night's findings; nothing older.
    const weekly = await runJob('weekly', '2026-03-10T04:00:00.000Z', []);
    const request = stack.emulators.converse.requests.at(-1);
    const prompt = JSON.stringify(request ?? {});
    for (const text of [
      'planning a trip to Lisbon',
      'Lisbon, the tram and the tiles',
      'corals that grow fast',
      'the frag swap',
      'topic-908',
      'topic-860',
    ])
      expect(prompt).toContain(text);
    expect(prompt).not.toContain('Old summary');
    expect(prompt).not.toContain('topic-600');
    expect(weekly.run).toMatchObject({ summariesReviewed: 3 + 4 + nightly.run.stored.length, sessionsReviewed: 4 });
    // Its read passes the window by one page at most (16 items), not the 150 of each kind before it.
    expect(weekly.queryUnits('BATCH#')).toBeLessThan(wholeBatches / 4);
    expect(weekly.queryUnits('SUMMARY#')).toBeLessThan(wholeSummaries / 4);
    expect(iamDenials(stack)).toEqual([]);
  }, 180_000);
});

describe('the memory API lists a page, not the history', () => {
  const LISTER = 'long-listings';
  const LIMIT = 10;
  /** One request through the API function's real handler, with the read units its Queries used, by item kind. */
  async function viaApi(method: string, path: string, body?: unknown, user = LISTER) {
    const before = requestLedger.snapshotByScope().api ?? {};
    const res = await apiRequest(`${stack.info.apiUrl}/v1/users/${user}${path}`, stack.info.adminToken, method, body);
    const used = ledgerDelta(before, requestLedger.snapshotByScope().api ?? {});
    return { ...res, units: (kind: string) => used[`ItemKind.${kind}|Query`]?.readUnits ?? 0 };
  }

  it('serves the newest `limit` batch logs, summaries and sleep-time runs, reading about that many items of 120', async () => {
    const { tableName: table, bucketName: bucket } = stack.info;
    const reflector = functionClients('reflector', stack.iam);
    const logs = new DynamoS3BatchLogStore({
      ddb: reflector.ddb,
      s3: reflector.s3,
      tableName: table,
      bucketName: bucket,
    });
    const runs = new DynamoSleepTimeLogStore({ ddb: reflector.ddb, tableName: table });
    const base = Date.parse('2025-09-01T10:00:00Z');
    for (let i = 0; i < 120; i++) {
      const at = new Date(base + i * 12 * H).toISOString();
      // Batch 117 ran last (redelivered after a day): by run time it would lead the listing.
      const ranAt = i === 116 ? new Date(base + 130 * 12 * H).toISOString() : at;
      // The newest has every optional attribute of the listing.
      const extra =
        i === 119
          ? {
              assessment: { confidence: 0.5, caution: 0.25, sentiment: 0.1 },
              error: { message: 'the model answered twice' },
            }
          : {};
      await logs.write({
        ...log(4 * i + 1, 4 * i + 4, at),
        user_id: LISTER,
        timestamp: ranAt,
        model: { modelId: 'm', inputTokens: 1, outputTokens: 1, latencyMs: 5, reused: false },
        ...extra,
      });
      const id = `summary-${4 * i + 1}-${4 * i + 4}`;
      await put({
        ...summary(
          id,
          new Date(Date.parse(at) + H).toISOString(),
          [1, 2, 3, 4].map((n) => 4 * i + n),
          `Summary ${i}: ${'of the reef tank and its corals, '.repeat(50)}`,
        ),
        pk: keys.userPk(LISTER),
        userId: LISTER,
        sk: keys.summarySk(id),
        deleted: i >= 118,
      });
      const run = (kind: 'nightly' | 'weekly', startedAt: string) =>
        ({
          runId: `${kind}-${startedAt}`,
          userId: LISTER,
          kind,
          status: 'completed',
          startedAt,
          windowFrom: startedAt,
          windowTo: startedAt,
          sessionsReviewed: 1,
          messagesReviewed: 3,
          summariesReviewed: 0,
          chunks: 1,
          findingsByCategory: {},
          findingsRejected: [],
          memoriesStored: 8,
          stored: Array.from({ length: 8 }, () => ({
            path: `Facts/${randomUUID()}.md`,
            statement: `${randomUUID()} ${randomUUID()} ${randomUUID()}`,
          })),
          errors: [],
        }) as unknown as SleepTimeRun;
      await runs.put(run('nightly', new Date(base + i * 24 * H + 17 * H).toISOString()));
      if (i % 6 === 0) await runs.put(run('weekly', new Date(base + i * 24 * H + 18 * H).toISOString()));
    }
    // Asked for again by a person (req R-SUM-9) after the last two were deleted: the turns of the newest live one.
    await put({
      ...summary(
        'manual-469-472-0badcafe',
        new Date(base + 125 * 12 * H).toISOString(),
        [469, 470, 471, 472],
        'Manual summary.',
      ),
      pk: keys.userPk(LISTER),
      userId: LISTER,
      sk: keys.summarySk('manual-469-472-0badcafe'),
    });
    const whole = {
      batches: await wholeRead(keys.batchPrefix, LISTER),
      summaries: await wholeRead(keys.summaryPrefix, LISTER),
      runs: await wholeRead(keys.runsPrefix, LISTER),
    };

    // Batch logs: newest first by the turns they cover, not by when they ran; the listing's attributes only.
    const batches = await viaApi('GET', `/batches?limit=${LIMIT}`);
    expect(batches.status).toBe(200);
    expect(batches.body.batches.map((b: { batchId: string }) => b.batchId)).toEqual(
      Array.from({ length: LIMIT }, (_, k) => `batch-${4 * (119 - k) + 1}-${4 * (119 - k) + 4}`),
    );
    const stored =
      (
        await ddb.send(
          new GetCommand({ TableName: table, Key: { pk: keys.userPk(LISTER), sk: keys.batchSk('batch-477-480') } }),
        )
      ).Item ?? {};
    const { pk: _pk, sk: _sk, packed: _packed, ...listing } = stored;
    expect(batches.body.batches[0]).toEqual(listing);
    expect(batches.units('BATCH#')).toBeLessThanOrEqual(await newestRead(keys.batchPrefix, LIMIT, LISTER));

    // Summaries: the live ones newest first by key (the manual one beside the summary it redid), then with the deleted.
    const live = await viaApi('GET', `/summaries?limit=${LIMIT}`);
    const liveIds = [
      'summary-469-472',
      'manual-469-472-0badcafe',
      ...Array.from({ length: LIMIT - 2 }, (_, k) => `summary-${4 * (116 - k) + 1}-${4 * (116 - k) + 4}`),
    ];
    expect(live.body.summaries.map((x: { id: string }) => x.id)).toEqual(liveIds);
    // The page, the two deleted ones above it and the few more read after them (at most as many again).
    expect(live.units('SUMMARY#')).toBeLessThanOrEqual(await newestRead(keys.summaryPrefix, 2 * LIMIT, LISTER));
    const all = await viaApi('GET', `/summaries?limit=${LIMIT}&includeDeleted=true`);
    expect(all.body.summaries.map((x: { id: string }) => x.id)).toEqual([
      'summary-477-480',
      'summary-473-476',
      ...liveIds.slice(0, LIMIT - 2),
    ]);
    expect(all.units('SUMMARY#')).toBeLessThanOrEqual(await newestRead(keys.summaryPrefix, LIMIT, LISTER));
    expect((await viaApi('GET', '/summaries')).body.summaries).toHaveLength(50);

    // Sleep-time runs: the newest `limit` of each kind, merged.
    const listed = await viaApi('GET', `/sleep-time/runs?limit=${LIMIT}`);
    const startedAt = listed.body.runs.map((r: SleepTimeRun) => r.startedAt);
    const expected = [
      ...Array.from({ length: 120 }, (_, i) => new Date(base + i * 24 * H + 17 * H).toISOString()),
      ...Array.from({ length: 20 }, (_, w) => new Date(base + 6 * w * 24 * H + 18 * H).toISOString()),
    ]
      .sort()
      .reverse()
      .slice(0, LIMIT);
    expect(startedAt).toEqual(expected);
    expect(listed.units('RUN#')).toBeLessThanOrEqual(
      (await newestRead(keys.runKindPrefix('nightly'), LIMIT, LISTER)) +
        (await newestRead(keys.runKindPrefix('weekly'), LIMIT, LISTER)),
    );

    // A manual summary with no turns since the last: the newest live summary's turns, read from the top of the key range.
    const asked = await viaApi('POST', '/summaries', { prompt: 'Again, shorter.' });
    expect(asked.status).toBe(200);
    expect(asked.body.turnIds).toEqual([469, 470, 471, 472]);
    expect(asked.units('SUMMARY#')).toBeLessThanOrEqual(await newestRead(keys.summaryPrefix, 3, LISTER));

    // Against the whole history (what every one of these read before): a small part of it.
    for (const [kind, units] of [
      ['BATCH#', batches.units('BATCH#')],
      ['SUMMARY#', live.units('SUMMARY#')],
      ['RUN#', listed.units('RUN#')],
      ['SUMMARY#', asked.units('SUMMARY#')],
    ] as const) {
      expect(units, kind).toBeLessThan(
        (kind === 'BATCH#' ? whole.batches : kind === 'RUN#' ? whole.runs : whole.summaries) / 4,
      );
    }
    console.log(
      JSON.stringify({
        whole,
        page: {
          batches: batches.units('BATCH#'),
          summaries: live.units('SUMMARY#'),
          summariesWithDeleted: all.units('SUMMARY#'),
          runs: listed.units('RUN#'),
          requestSummary: asked.units('SUMMARY#'),
        },
      }),
    );
    await stack.waitUntilDrained();
    expect(iamDenials(stack)).toEqual([]);
  }, 180_000);

  it('serves the newest `limit` audit entries, of the user or of one item, reading about that many of 120', async () => {
    const AUDITED = 'long-audit-trail';
    const base = Date.parse('2025-09-01T10:00:00Z');
    // Every third entry is item-7's; each carries a reason long enough to weigh a read unit.
    for (let i = 0; i < 120; i++) {
      const entry: AuditEntry = {
        userId: AUDITED,
        itemId: `item-${i % 3 === 0 ? 7 : i}`,
        action: 'promote',
        actor: 'tester',
        at: new Date(base + i * H).toISOString(),
        reason: `${i} ${'because it recurred, '.repeat(150)}`,
      };
      await put(auditRow(entry));
    }
    const whole = await wholeRead(keys.auditPrefix, AUDITED);
    const newest = await viaApi('GET', `/memory/audit?limit=${LIMIT}`, undefined, AUDITED);
    expect(newest.status).toBe(200);
    expect(newest.body.entries.map((e: AuditEntry) => e.at)).toEqual(
      Array.from({ length: LIMIT }, (_, k) => new Date(base + (119 - k) * H).toISOString()),
    );
    expect(newest.units('AUDIT#')).toBeLessThanOrEqual(await newestRead(keys.auditPrefix, LIMIT, AUDITED));
    // One item's: a third of the entries are its, so three pages' worth are read, and what
    // queryFirst reads past the page (a request after one that dropped items asks twice as many).
    const ofItem = await viaApi('GET', `/memory/audit?itemId=item-7&limit=${LIMIT}`, undefined, AUDITED);
    expect(ofItem.body.entries.map((e: AuditEntry) => e.at)).toEqual(
      Array.from({ length: LIMIT }, (_, k) => new Date(base + (117 - 3 * k) * H).toISOString()),
    );
    expect(ofItem.units('AUDIT#')).toBeLessThanOrEqual(await newestRead(keys.auditPrefix, 5 * LIMIT, AUDITED));
    for (const units of [newest.units('AUDIT#'), ofItem.units('AUDIT#')]) expect(units).toBeLessThan(whole / 2);
    console.log(
      JSON.stringify({ whole, page: { audit: newest.units('AUDIT#'), auditOfItem: ofItem.units('AUDIT#') } }),
    );
    expect(iamDenials(stack)).toEqual([]);
  }, 60_000);
});
