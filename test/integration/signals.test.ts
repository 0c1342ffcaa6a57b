/**
 * The signals (req R-SIG) on the real emulators: every trigger, idempotent replays, claim checks, kept
 * rejects counted in a metric.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import { locomoToTurns } from '../../infra/local/locomo.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { DynamoSleepTimeLogStore } from '../../lib/sleep-time/sleep-time-log-store.adapter.js';
import { DynamoSignalStateStore, storedState } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { DAY_SHARDS, dayShard, keys } from '../../lib/kernel/memory-paths.js';
import type { SleepTimeRun } from '../../lib/sleep-time/run-log.js';
import type { StagedDocument } from '../../lib/knowledge/staging.js';
import { DynamoSourceReliabilityStore } from '../../lib/sources/dynamo-source-reliability-store.adapter.js';
import { S3RejectedEventLog } from '../../lib/turns/s3-rejected-event-log.adapter.js';
import { eventEpisodeId } from '../../lib/turns/episodes.js';
import { readLocomo } from '../helpers/locomo.js';
import { bucketReader } from '../helpers/s3.js';

let stack: LocalHarness;
let bucket: ReturnType<typeof bucketReader>;
let documentClient: DynamoDBDocumentClient;
let s3Client: S3Client;
const stdout: string[] = [];

beforeAll(async () => {
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    stdout.push(String(chunk));
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  });
  // speed 300: the 5-minute idle check fires after one second.
  stack = await startHarness({ stage: 'signals', logLevel: 'SILENT', metrics: true, speed: 300 });
  bucket = bucketReader(stack.info);
  const aws = { region: stack.info.region, credentials: stack.info.credentials };
  documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({ ...aws, endpoint: stack.info.endpoints.dynamodb }));
  s3Client = new S3Client({ ...aws, endpoint: stack.info.endpoints.s3, forcePathStyle: true });
});
afterAll(async () => {
  vi.restoreAllMocks();
  bucket?.destroy();
  documentClient?.destroy();
  s3Client?.destroy();
  await stack?.stop();
});

/** Turns in the user's turn index (a small turn's document is inline there: no S3 object). */
const indexedTurns = async (userId: string) => {
  const res = await documentClient.send(
    new QueryCommand({
      TableName: stack.info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':t': keys.turnPrefix },
    }),
  );
  return res.Items ?? [];
};

/** The user's batch logs: their DynamoDB items. */
const batchItems = async (userId: string) => {
  const res = await documentClient.send(
    new QueryCommand({
      TableName: stack.info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :b)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':b': keys.batchPrefix },
    }),
  );
  return (res.Items ?? []).filter((i) => /^BATCH#\d{10}#batch-\d+-\d+$/.test(String(i.sk)));
};

/** A summary pair's markdown document as the API lists it: rendered from its record (no S3 object). */
const summaryMarkdown = async (userId: string, id: string): Promise<string> => {
  const token = await stack.mintUserToken([userId]);
  const res = await fetch(`${stack.info.apiUrl}/v1/users/${userId}/summaries`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const summaries = ((await res.json()) as { summaries: Array<{ id: string; markdown?: string }> }).summaries;
  expect(await bucket.list(`users/${userId}/summaries/`)).toEqual([]);
  return summaries.find((s) => s.id === id)?.markdown ?? '';
};

/** The user's staged records still undecided: a staged document is its record. */
const stagedItems = async (userId: string) => {
  const res = await documentClient.send(
    new QueryCommand({
      TableName: stack.info.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':pk': keys.userPk(userId), ':s': keys.stagedPrefix },
    }),
  );
  return (res.Items ?? []).filter((i) => i.status === 'staged');
};

const perUser = async (userId: string) => {
  const keys = await bucket.list(`users/${userId}/`);
  return {
    turns: (await indexedTurns(userId)).length,
    batches: (await batchItems(userId)).length,
    staged: (await stagedItems(userId)).length,
    deferred: keys.filter((k) => k.includes('/Logs/reflector/deferred/')),
  };
};

const turn = (userId: string, turnId: number, query: string, extra: Partial<TurnSaved> = {}): TurnSaved => ({
  type: 'turn.saved',
  version: 1,
  userId,
  sessionId: 's1',
  turnId,
  timestamp: '2026-02-06T14:00:00Z',
  query,
  response: 'Tell me more.',
  ...extra,
});

describe('signals and ingestion on the local emulators', () => {
  it('a LoCoMo conversation sent twice ends with the same turns, batches and staged items as sent once', async () => {
    const conv = readLocomo('conv-30.json');
    const once = locomoToTurns(conv, { userId: 'conv30-once', source: 'locomo/conv-30' }).map((t) => JSON.stringify(t));
    const twice = locomoToTurns(conv, { userId: 'conv30-twice', source: 'locomo/conv-30' }).map((t) =>
      JSON.stringify(t),
    );
    await Promise.all([stack.replayLines(once), stack.replayLines([...twice, ...twice])]);
    await stack.waitUntilDrained({ timeoutMs: 240_000 });
    const a = await perUser('conv30-once');
    const b = await perUser('conv30-twice');
    expect(a.turns).toBe(once.length);
    expect(a.batches).toBeGreaterThanOrEqual(15);
    expect(a.staged).toBeGreaterThan(0);
    expect({ turns: b.turns, batches: b.batches, staged: b.staged }).toEqual({
      turns: a.turns,
      batches: a.batches,
      staged: a.staged,
    });
    expect((await stack.report()).duplicates).toBe(once.length);
    // Two replays of a whole conversation: a limit with room on a loaded 2-core machine.
  }, 180_000);

  it('a turn over the SQS limit travels as a claim check and is stored whole', async () => {
    const response = `start ${'lorem ipsum '.repeat(30_000)} end 💪`;
    const res = await stack.publisher.publish([
      turn('big-user', 1, 'Please summarise this long document', { response }),
    ]);
    expect(res.claimChecks).toBe(1);
    await stack.waitUntilDrained();
    const [doc] = (await bucket.list('users/big-user/turns/')).filter((k) => k.endsWith('.md'));
    const text = await bucket.text(doc ?? '');
    expect(text).toContain(' end 💪');
    expect(text.length).toBeGreaterThan(300_000);
    expect(await bucket.list('claims/big-user/')).toHaveLength(1);
    // Its document is in S3: the item keeps the words search reads.
    const [item] = await indexedTurns('big-user');
    expect(String(item?.text)).toMatch(/^Please summarise this long document\nstart lorem ipsum/);
  });

  it('a small turn is one durable write: its document inline in the turn index, no S3 object', async () => {
    await stack.publisher.publish([
      turn('small-user', 1, 'What did I say about the reef tank?', { response: 'That the clownfish spawned. 💪' }),
    ]);
    await stack.waitUntilDrained();
    const [item] = await indexedTurns('small-user');
    expect(item?.doc).toMatch(/^---\n[\s\S]*That the clownfish spawned\. 💪/);
    expect(item?.docKey).toBeUndefined();
    expect(await bucket.list('users/small-user/turns/')).toEqual([]);
    // No second copy of its words in the item: search reads them from the inline document.
    expect(item?.text).toBeUndefined();
    expect(item?.summary).toBeUndefined();
    const token = await stack.mintUserToken(['small-user']);
    const res = await fetch(`${stack.info.apiUrl}/v1/users/small-user/memory/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'clownfish spawned', limit: 5 }),
    });
    const found = (await res.json()) as { results?: Array<{ id: string; text?: string }> };
    expect(found.results?.[0]).toMatchObject({ id: 'turn:1' });
    expect(found.results?.[0]?.text).toContain('That the clownfish spawned.');
  });

  it('agent.event reflects now; session.closed and going idle write summaries as turn pairs', async () => {
    await stack.publisher.publish([
      turn('ctl-user', 1, 'I adopted a beagle named Rex.'),
      turn('ctl-user', 2, 'entry2'),
      {
        type: 'agent.event',
        version: 1,
        userId: 'ctl-user',
        timestamp: '2026-02-06T14:01:00Z',
        trigger: 'milestone',
        detail: 'first pet',
      },
      { type: 'session.closed', version: 1, userId: 'ctl-user', sessionId: 's1', timestamp: '2026-02-06T14:02:00Z' },
      ...[1, 2, 3, 4, 5].map((n) => turn('quiet-user', n, `entry${n}`)),
      turn('close-user', 1, 'I adopted a beagle named Rex.'),
      turn('close-user', 2, 'entry2'),
      { type: 'session.closed', version: 1, userId: 'close-user', sessionId: 's1', timestamp: '2026-02-06T14:03:00Z' },
    ]);
    await stack.waitUntilDrained();
    const ctl = await perUser('ctl-user');
    const log = await bucket.batchLog('ctl-user', 'batch-1-2');
    expect(log).toMatchObject({
      kind: 'event',
      trigger: 'event:milestone',
      status: 'completed',
      turns_reviewed: [1, 2],
    });
    // The event's kind and detail reach the model, with the kind's instruction.
    const asked = stack.emulators.converse.requests
      .flatMap((r) => r.messages?.flatMap((m) => m.content.map((c) => c.text ?? '')) ?? [])
      .filter((t) => t.includes('[Turn 1] ') && t.includes('I adopted a beagle named Rex.'));
    expect(
      asked.filter(
        (t) =>
          t.startsWith('## Why now\nThe user reached a milestone.') &&
          t.includes("The agent's note (milestone): first pet"),
      ),
    ).toHaveLength(1);
    expect(ctl.deferred).toEqual([]);
    // The pair is one document: the system turn, then the assistant's.
    const closing = await summaryMarkdown('ctl-user', 'summary-1-2');
    expect(closing).toMatch(/kind: session-close\n[\s\S]*trigger: session_closed/);
    expect(closing).toMatch(
      /## system\n\nWrite a concise summary of the current context\.\n\n## assistant\n\n[^\n]*beagle/,
    );
    const activity = new DynamoSignalStateStore({ ddb: documentClient, tableName: stack.info.tableName });
    expect(await activity.activeUsers(['2026-02-06'])).toEqual(
      expect.arrayContaining([
        { userId: 'quiet-user', activity: { '2026-02-06': 5 } },
        { userId: 'ctl-user', activity: { '2026-02-06': 2 } },
      ]),
    );
    // Req R-SIG-6's session-close hook: the turns no batch had taken are reflected on, and the session summarised.
    const closed = await bucket.batchLog('close-user', 'batch-1-2');
    expect(closed).toMatchObject({
      kind: 'batch',
      trigger: 'session_closed',
      status: 'completed',
      turns_reviewed: [1, 2],
    });
    expect(await summaryMarkdown('close-user', 'summary-1-2')).toMatch(
      /kind: session-close\n[\s\S]*trigger: session_closed/,
    );
    expect(await summaryMarkdown('quiet-user', 'summary-1-5')).toMatch(/kind: idle-summary\n[\s\S]*Turns 1–5/);
  });

  it('a turn whose document cannot be read is logged and left out, and the batch goes on (req R-ASM-2)', async () => {
    const user = 'lost-doc-user';
    const response = `start ${'lorem ipsum '.repeat(2_000)} end`;
    await stack.publisher.publish([
      turn(user, 1, 'I adopted a beagle named Rex.'),
      turn(user, 2, 'Please keep this long note', { response }),
      ...[3, 4, 5, 6, 7, 8, 9].map((n) => turn(user, n, `entry${n}`)),
    ]);
    await stack.waitUntilDrained();
    // Turn 2's document is an S3 object (over the inline size); it is lost before its batch reads it.
    const [doc] = (await bucket.list(`users/${user}/turns/`)).filter((k) => k.endsWith('.md'));
    expect(doc).toBeDefined();
    await s3Client.send(new DeleteObjectCommand({ Bucket: stack.info.bucketName, Key: doc ?? '' }));
    await stack.publisher.publish([turn(user, 10, 'entry10')]);
    await stack.waitUntilDrained();
    const log = await bucket.batchLog(user, 'batch-1-10');
    expect(log).toMatchObject({
      status: 'completed',
      turns_missing: [2],
      turns_reviewed: [1, 3, 4, 5, 6, 7, 8, 9, 10],
    });
    const asked = stack.emulators.converse.requests
      .flatMap((r) => r.messages?.flatMap((m) => m.content.map((c) => c.text ?? '')) ?? [])
      .filter((t) => t.includes('entry10'));
    expect(
      asked.some((t) => t.includes('I adopted a beagle named Rex.') && !t.includes('Please keep this long note')),
    ).toBe(true);
  });

  it('a summary written in one session is found by a search from the next (req R-SUM-11)', async () => {
    const user = 'two-session-user';
    await stack.publisher.publish([
      turn(user, 1, 'I adopted a beagle named Rex.', { sessionId: 's1', timestamp: '2026-02-06T10:00:00Z' }),
      turn(user, 2, 'He sleeps at the foot of my bed.', { sessionId: 's1', timestamp: '2026-02-06T10:01:00Z' }),
      { type: 'session.closed', version: 1, userId: user, sessionId: 's1', timestamp: '2026-02-06T10:02:00Z' },
      turn(user, 3, 'Can you suggest a book for the weekend?', { sessionId: 's2', timestamp: '2026-02-09T18:00:00Z' }),
    ]);
    await stack.waitUntilDrained();
    expect(await summaryMarkdown(user, 'summary-1-2')).toMatch(/kind: session-close[\s\S]*beagle/);
    // The agent, now in session s2, asks what it knows: search is per user, not per session.
    const token = await stack.mintUserToken([user]);
    const res = await fetch(`${stack.info.apiUrl}/v1/users/${user}/memory/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'beagle Rex', limit: 10 }),
    });
    const found = (await res.json()) as { results?: Array<{ id: string; kind?: string }> };
    expect(found.results?.map((r) => r.id)).toContain('summary:summary-1-2');
  });

  it('a correction that recurs in three batches is promoted into the fact it corrects', async () => {
    const user = 'corrected-user';
    const knowledge = new DynamoS3KnowledgeStore({
      ddb: documentClient,
      s3: s3Client,
      tableName: stack.info.tableName,
      bucketName: stack.info.bucketName,
      changes: new DynamoSearchChangeLog({ ddb: documentClient, tableName: stack.info.tableName }),
    });
    const text = 'The reef tank holds 20 gallons of salt water.';
    await knowledge.putKnowledge(user, [
      {
        path: 'Facts/reef_tank.md',
        markdown: `# reef tank\n\n${text}\n`,
        doc: {
          id: 'Facts/reef_tank.md',
          title: 'reef tank',
          text,
          summary: text,
          category: 'Facts',
          confidence: 0.6,
          sourceTurns: [1],
          promotedAt: '2026-02-01T00:00:00.000Z',
        },
      },
    ]);
    const saying = 'Actually, my reef tank holds 40 gallons now.';
    for (const session of [1, 2, 3]) {
      const at = (minute: number) => `2026-02-0${session + 6}T10:0${minute}:00Z`;
      await stack.publisher.publish([
        turn(user, session * 2 - 1, saying, { sessionId: `s${session}`, timestamp: at(0) }),
        turn(user, session * 2, 'We talked about water changes.', { sessionId: `s${session}`, timestamp: at(1) }),
        { type: 'session.closed', version: 1, userId: user, sessionId: `s${session}`, timestamp: at(2) },
      ]);
      await stack.waitUntilDrained();
    }
    const fact = (await knowledge.loadKnowledge(user)).find((d) => d.id === 'Facts/reef_tank.md');
    expect(fact?.text).toContain(saying);
    // Staged, the correction contradicted the fact (req R-TIER-8: 0.6 → 0.3, demoted); promoted, it rewrote it
    // from the confidence it had before that (0.6, hint `lower`: 0.5), and the demotion ended.
    const by = expect.stringMatching(/^Knowledge_staging\/Corrections\//);
    expect(fact?.history).toEqual([
      expect.objectContaining({ change: 'contradiction', text, confidence: 0.6, by }),
      expect.objectContaining({ change: 'correction', text, confidence: 0.3, by }),
    ]);
    expect(fact?.confidence).toBe(0.5);
    expect(fact?.demotedAt).toBeUndefined();
    const log = await bucket.batchLog(user, 'batch-5-6');
    expect(log.promoted_files).toEqual(['Knowledge/Facts/reef_tank.md']);
    expect(
      (await bucket.list(`users/${user}/Knowledge/`)).filter((k) => k.includes('/Knowledge/Corrections/')),
    ).toEqual([]);
  });

  it("a user's own settings, set through the API, decide their idle summary: threshold and prompt", async () => {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${stack.info.apiUrl}/v1/users/patient-user${path}`, {
        method,
        headers: {
          authorization: `Bearer ${stack.info.adminToken}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return {
        status: res.status,
        body: (await res.json()) as {
          settings?: Record<string, unknown>;
          error?: { fields?: Array<{ path: string }> };
        },
      };
    };
    // 20 minutes: past SQS's 15-minute delay, so the idle check reschedules itself on the way.
    const set = await api('POST', '/settings', {
      idleMinutes: 20,
      prompt: 'Name the next step the user wants.',
      maxTokens: 300,
    });
    expect(set).toEqual({
      status: 200,
      body: { settings: { idleMinutes: 20, prompt: 'Name the next step the user wants.', maxTokens: 300 } },
    });
    expect((await api('POST', '/settings', { maxTokens: null })).body.settings).toEqual({
      idleMinutes: 20,
      prompt: 'Name the next step the user wants.',
    });
    expect((await api('GET', '/settings')).body.settings).toEqual({
      idleMinutes: 20,
      prompt: 'Name the next step the user wants.',
    });
    expect((await api('POST', '/settings', { idleMinutes: 2000 })).body.error?.fields?.map((f) => f.path)).toEqual([
      'body.idleMinutes',
    ]);
    expect((await api('POST', '/settings', { colour: 'blue' })).body.error?.fields?.length).toBeGreaterThan(0);

    await stack.publisher.publish(
      [1, 2, 3, 4, 5].map((n) => turn('patient-user', n, `I am planning the reef tank move, step ${n}.`)),
    );
    await stack.waitUntilDrained();
    const signal = await documentClient.send(
      new GetCommand({ TableName: stack.info.tableName, Key: { pk: keys.userPk('patient-user'), sk: keys.signalSk } }),
    );
    const lastSeenAt = Date.parse(String((storedState(signal.Item ?? {}) as { lastSeenAt?: string }).lastSeenAt));
    const record = await documentClient.send(
      new GetCommand({
        TableName: stack.info.tableName,
        Key: { pk: keys.userPk('patient-user'), sk: keys.summarySk('summary-1-5') },
      }),
    );
    // The stage's 5 minutes run out in 1 s here (speed 300); the user's 20 minutes in 4 s.
    expect(Date.parse(String(record.Item?.createdAt)) - lastSeenAt).toBeGreaterThanOrEqual((20 * 60_000) / 300 - 1000);
    expect(await summaryMarkdown('patient-user', 'summary-1-5')).toContain(
      '## system\n\nName the next step the user wants.',
    );
  });

  it("reports each job's model cost with its stage as its one dimension, the one the stage's cost alarm reads", async () => {
    stdout.length = 0;
    await stack.publisher.publish([
      turn('cost-user', 1, 'I adopted a beagle named Rex.'),
      {
        type: 'agent.event',
        version: 1,
        userId: 'cost-user',
        timestamp: '2026-02-06T14:01:00Z',
        trigger: 'milestone',
        detail: 'first pet',
      },
    ]);
    await stack.waitUntilDrained();
    const emf = stdout
      .filter((l) => l.includes('"ModelCostUsd"'))
      .map(
        (l) =>
          JSON.parse(l) as Record<string, unknown> & { _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][] }> } },
      );
    expect(emf.length).toBeGreaterThan(0);
    for (const m of emf) {
      // `service` names the emitter as a plain field, not a dimension (no metric of its own).
      expect(m).toMatchObject({ service: 'reflector', stage: 'signals' });
      expect(typeof m.ModelCostUsd).toBe('number');
      expect(m._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['stage']]);
    }
    // No function defines a metric no alarm reads (lib/kernel/metrics.adapter.ts): the counts are log fields.
    const names = stdout
      .filter((l) => l.includes('"_aws"'))
      .flatMap(
        (l) =>
          (JSON.parse(l) as { _aws: { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> } })._aws
            .CloudWatchMetrics,
      )
      .flatMap((d) => d.Metrics.map((m) => m.Name));
    expect(new Set(names)).toEqual(new Set(['ModelCostUsd', 'RejectedRecords']));
  });

  it('a malformed record is kept with its field, counted in a metric, and does not sink its batch', async () => {
    stdout.length = 0;
    await stack.replayLines([
      JSON.stringify(turn('metric-user', 1, 'hello there')),
      JSON.stringify({ ...turn('metric-user', 2, 'x'), timestamp: 'noon' }),
    ]);
    await stack.waitUntilDrained();
    expect((await perUser('metric-user')).turns).toBe(1);
    const emf = stdout.filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(emf.some((m) => m.RejectedRecords === 1 && m.service === 'signal' && m.stage === 'signals')).toBe(true);
    const rejected = await new S3RejectedEventLog({ s3: s3Client, bucketName: stack.info.bucketName }).list();
    expect(rejected.flatMap((r) => r.errors.map((e) => e.path))).toContain('timestamp');
  });

  it('counts the sources turns report per domain, for all users, once each, and serves their reliability', async () => {
    const used = (outcome: 'success' | 'blocked' | 'failed', extractionQuality?: number) => [
      { domain: 'www.reef-guide.example', outcome, ...(extractionQuality !== undefined ? { extractionQuality } : {}) },
    ];
    await stack.publisher.publish([
      turn('source-a', 1, 'How warm should a reef tank be?', { sources: used('success', 0.8) }),
      turn('source-a', 2, 'And the salinity?', { sources: used('blocked') }),
      turn('source-b', 1, 'Which clownfish are hardy?', { sources: used('success', 1) }),
    ]);
    await stack.waitUntilDrained();
    // Republished (a new message for a stored turn): a duplicate, its source not counted again.
    await stack.publisher.publish([
      {
        ...turn('source-a', 1, 'How warm should a reef tank be?', { sources: used('success', 0.8) }),
        sessionId: 's1-again',
      },
    ]);
    await stack.waitUntilDrained();
    const token = await stack.mintUserToken(['source-b']);
    const res = await fetch(
      `${stack.info.apiUrl}/v1/users/source-b/sources?domains=reef-guide.example,nobody.example`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sources: Array<Record<string, unknown>> };
    expect(body.sources).toEqual([
      expect.objectContaining({
        domain: 'reef-guide.example',
        attempts: 3,
        successes: 2,
        blocked: 1,
        extractionQuality: 0.93,
        reliability: 0.56,
        advice: 'neutral',
      }),
      expect.objectContaining({ domain: 'nobody.example', attempts: 0, reliability: 0.5 }),
    ]);
    const bad = await fetch(`${stack.info.apiUrl}/v1/users/source-b/sources?domains=https://reef-guide.example/`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('query.domains');
    // A reflection over source-a's turns blends the site's reliability into what it stages.
    await stack.publisher.publish([
      { type: 'agent.event', version: 1, userId: 'source-a', timestamp: '2026-02-06T14:05:00Z', trigger: 'milestone' },
    ]);
    await stack.waitUntilDrained();
    // The staged documents as the review list renders them from their records (their S3 objects are the same markdown).
    const tokenA = await stack.mintUserToken(['source-a']);
    const review = await fetch(`${stack.info.apiUrl}/v1/users/source-a/review/staged?limit=200`, {
      headers: { authorization: `Bearer ${tokenA}` },
    });
    const cites = ((await review.json()) as { staged: Array<{ markdown: string }> }).staged.map((i) => i.markdown);
    expect(cites.length).toBeGreaterThan(0);
    expect(cites.some((doc) => /source_reliability:\n\s+reef-guide\.example: 0\.56/.test(doc))).toBe(true);
    // The adapter itself: an observation already counted adds nothing (its marker exists).
    const store = new DynamoSourceReliabilityStore(
      { ddb: documentClient, tableName: stack.info.tableName },
      { now: () => new Date() },
    );
    const observation = {
      domain: 'reef-guide.example',
      outcome: 'failed' as const,
      key: '99#0',
      at: '2026-02-06T15:00:00Z',
    };
    expect(await store.record('source-c', [observation])).toBe(1);
    expect(await store.record('source-c', [observation])).toBe(0);
    expect((await store.stats(['reef-guide.example']))[0]).toMatchObject({ attempts: 4, failed: 1 });
  });

  it('stores episodes with their turns and agent.events: found as content type episode, counted into capability confidence, documented by the reflection', async () => {
    const episode = (success: boolean) => ({
      goal: success ? 'Order new clownfish food' : 'Order a protein skimmer',
      actions: [
        { capability: 'shop.order', params: { qty: 1 }, result: success ? 'ordered' : 'out of stock', success },
      ],
      outcome: { success, ...(success ? {} : { failureReason: 'out of stock' }) },
    });
    // The plan execution that failed arrives on an agent.event (req R-EPI-1: "plan execution completes → create Episode record").
    const errorEvent = {
      type: 'agent.event' as const,
      version: 1 as const,
      userId: 'episode-user',
      timestamp: '2026-02-06T14:05:00Z',
      trigger: 'error' as const,
      turnId: 3,
      detail: 'skimmer out of stock',
      episode: {
        goal: 'Restock the protein skimmer order',
        actions: [{ capability: 'shop.order', result: 'still out of stock', success: false }],
        outcome: { success: false, failureReason: 'out of stock' },
      },
    };
    const eventEpisode = eventEpisodeId(errorEvent);
    await stack.publisher.publish([
      turn('episode-user', 1, 'Please order fish food', { episode: episode(true) }),
      turn('episode-user', 2, 'And a skimmer please', { episode: episode(false) }),
      turn('episode-user', 3, 'Did the skimmer order go through?'),
      errorEvent,
    ]);
    // Published again (a retry by the agent): the same episode, stored and counted once.
    await stack.publisher.publish([{ ...errorEvent }]);
    await stack.waitUntilDrained();
    const token = await stack.mintUserToken(['episode-user']);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${stack.info.apiUrl}/v1/users/episode-user${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, Array<Record<string, unknown>>>;
    };
    const found = await call('POST', '/memory/search', {
      query: 'order a skimmer',
      filters: { contentTypes: ['episode'] },
      limit: 5,
    });
    // Only turns that carried an episode, and the event's: turn 3 matches the words but has none.
    const ids = found.results?.map((r) => r.id) ?? [];
    expect(ids).toEqual(expect.arrayContaining([`episode:${eventEpisode}`, 'turn:2']));
    expect(ids.every((id) => id === 'turn:1' || id === 'turn:2' || id === `episode:${eventEpisode}`)).toBe(true);
    const unfiltered = await call('POST', '/memory/search', { query: 'order a skimmer', limit: 10 });
    expect(unfiltered.results?.map((r) => r.id)).toContain('turn:3');
    const { capabilities } = await call('GET', '/capabilities');
    expect(capabilities).toEqual([
      expect.objectContaining({ capability: 'shop.order', uses: 3, successes: 1, confidence: 0.4 }),
    ]);
    const doc = await bucket.text('users/episode-user/episodes/0000000002.md');
    expect(doc).toMatch(/reflections:\n\s+- batch-1-3/);
    expect(doc).toContain('failure_reason: out of stock');
    // The event's episode waited for the batch its event fired, which wrote its document.
    const eventDoc = await bucket.text(`users/episode-user/episodes/${eventEpisode}.md`);
    expect(eventDoc).toMatch(/reflections:\n\s+- batch-1-3/);
    expect(eventDoc).toContain('trigger: error');
    expect(eventDoc).toContain('# Episode: Restock the protein skimmer order');
  });

  it('indexes activity by day in write-sharded partitions, off the state item, and reads every shard', async () => {
    const day = '2026-02-06';
    const get = async (userId: string, sk: string) =>
      (
        await documentClient.send(
          new GetCommand({
            TableName: stack.info.tableName,
            Key: { pk: keys.userPk(userId), sk },
            ConsistentRead: true,
          }),
        )
      ).Item;
    // quiet-user's turns (the test above) wrote one marker for the day; its state carries no index key.
    expect(await get('quiet-user', keys.activitySk(day))).toMatchObject({
      gsi1pk: `ACTIVITY#${day}#${dayShard('quiet-user')}`,
      gsi1sk: 'USER#quiet-user',
    });
    expect((await get('quiet-user', keys.signalSk))?.gsi1pk).toBeUndefined();
    const activity = await new DynamoSignalStateStore({
      ddb: documentClient,
      tableName: stack.info.tableName,
    }).activeUsers([day]);
    expect(activity).toEqual(expect.arrayContaining([{ userId: 'quiet-user', activity: { [day]: 5 } }]));

    // Staged records and runs of users in every shard.
    const knowledge = new DynamoS3KnowledgeStore({
      ddb: documentClient,
      s3: s3Client,
      tableName: stack.info.tableName,
      bucketName: stack.info.bucketName,
      changes: new DynamoSearchChangeLog({ ddb: documentClient, tableName: stack.info.tableName }),
    });
    const users = Array.from({ length: 24 }, (_, i) => `shard-user-${i}`);
    expect(new Set(users.map(dayShard)).size).toBe(DAY_SHARDS);
    const doc = (n: string): StagedDocument => ({
      path: `Facts/${n}--b1.md`,
      kind: 'fact',
      title: n,
      category: 'Facts',
      confidence: 0.6,
      sourceTurns: [1],
      text: n,
      meta: { staged_at: `${day}T10:00:00Z` },
      body: n,
      markdown: `# ${n}`,
    });
    for (const u of users) await knowledge.putStaged(u, [doc(u)], 'b1');
    // Other users' batches of that day's turns staged on it too (a staged item's time is its batch's last turn's).
    const staged = (await knowledge.stagedOn(day)).filter((s) => s.userId.startsWith('shard-user-'));
    expect(staged.map((s) => s.userId).sort()).toEqual([...users].sort());

    const runs = new DynamoSleepTimeLogStore({ ddb: documentClient, tableName: stack.info.tableName });
    const run = (userId: string): SleepTimeRun => ({
      runId: 'nightly-202602060300',
      userId,
      kind: 'nightly',
      status: 'completed',
      startedAt: `${day}T03:00:00.000Z`,
      windowFrom: '2026-02-05T03:00:00.000Z',
      windowTo: `${day}T03:00:00.000Z`,
      sessionsReviewed: 1,
      messagesReviewed: 5,
      summariesReviewed: 0,
      chunks: 1,
      findingsByCategory: {},
      findingsRejected: [],
      memoriesStored: 0,
      stored: [],
      tokens: { input: 1, output: 1 },
      estimatedCostUsd: 0,
      model: null,
      durationMs: 1,
      errors: [],
    });
    for (const u of users.slice(0, 8)) await runs.put(run(u));
    expect((await runs.runsOn(day)).map((r) => r.userId)).toEqual([...users.slice(0, 8)].sort());
  });

  it("made no AWS request its function's synthesized IAM policies deny (infra/permissions.ts)", () => {
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['idle', 'reflector', 'signal']));
    expect(iamDenials(stack)).toEqual([]);
  });
});
