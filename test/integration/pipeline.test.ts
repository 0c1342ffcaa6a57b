/**
 * The real handlers on the real emulators: DynamoDB Local, fauxqs (SQS + S3) and the
 * Converse endpoint, driven through the queues exactly as `npm start` drives them.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenTurns, turnLine } from '../helpers/turn-lines.js';
import { ACCESS_DENIED, answerNameOf, cutReply } from '../../infra/local/converse-protocol.js';
import { offlineResponder } from '../../infra/local/converse-server.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoS3KnowledgeStore } from '../../lib/knowledge/knowledge-store.adapter.js';
import { BEDROCK_MAX_ATTEMPTS } from '../../lib/kernel/aws-clients.adapter.js';
import { QUEUES } from '../../infra/resources.js';
import { REFLECTION_TOOL } from '../../lib/batches/run-reflection.js';
import { DynamoSearchChangeLog } from '../../lib/search/search-index-store.adapter.js';
import { bucketReader } from '../helpers/s3.js';
import { parseFrontMatter } from '../../lib/kernel/front-matter.js';
import { ledgerDelta, requestLedger } from '../../infra/local/request-ledger.js';

let stack: LocalHarness;
let bucket: ReturnType<typeof bucketReader>;

beforeAll(async () => {
  stack = await startHarness({ stage: 'itest', logLevel: 'SILENT', speed: 300 });
  bucket = bucketReader(stack.info);
});
afterAll(async () => {
  bucket?.destroy();
  await stack?.stop();
});

describe('the pipeline on the local emulators', () => {
  it('replays the bundled sample: turns stored, batches reflected, knowledge staged, logs written', async () => {
    const lines = readFileSync(new URL('../../events/samples/conversation.jsonl', import.meta.url), 'utf8').split('\n');
    const replay = await stack.replayLines(lines);
    expect(replay).toMatchObject({ lines: 30, published: 30, refused: [] });
    await stack.waitUntilDrained();
    const s = await stack.report();
    expect(s).toMatchObject({ turns: 30, duplicates: 0, rejected: 0, batches: 3, batchesAborted: 0, errors: 0 });
    expect(s.staged).toBeGreaterThanOrEqual(1);
    // One idle summary, or more when a pause in ingestion under load outlasted the idle
    // threshold (1 s at this speed) mid-session: the newest still stands for the whole session.
    expect(s.summaries).toBeGreaterThanOrEqual(1);
    const summaries = (await stack.scanItems()).filter((i) => String(i.sk).startsWith('SUMMARY#'));
    const newest = summaries.map((i) => i.sourceTurns as number[]).sort((a, b) => Math.max(...b) - Math.max(...a))[0];
    expect(newest).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));

    const user = 'users/locomo-conv-26/';
    // Small turns are one durable write: the document inline in the turn index, no S3 object.
    expect(await bucket.list(`${user}turns/`)).toEqual([]);
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        region: stack.info.region,
        credentials: stack.info.credentials,
        endpoint: stack.info.endpoints.dynamodb,
      }),
    );
    const entry = (
      await ddb.send(
        new GetCommand({ TableName: stack.info.tableName, Key: { pk: 'USER#locomo-conv-26', sk: 'TURN#0000000001' } }),
      )
    ).Item;
    ddb.destroy();
    // One copy of the turn's words: search derives them from the inline document.
    expect(entry?.summary).toBeUndefined();
    expect(entry?.text).toBeUndefined();
    expect(String(entry?.doc)).toContain('## Query\nHey Mel!');
    // The batch log is in its DynamoDB item: no S3 object.
    expect(await bucket.list(`${user}Logs/reflector/`)).toEqual([]);
    const log = await bucket.batchLog('locomo-conv-26', 'batch-1-10');
    expect(log).toMatchObject({
      batch_id: 'batch-1-10',
      status: 'completed',
      turns_reviewed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      trigger: 'turn_count',
    });
    expect(log.model).toMatchObject({ modelId: stack.info.modelId, reused: false });
    // The stage's own model id: the inference profile of the local Region, answered by the offline model.
    expect(stack.info.modelId).toBe('us.anthropic.claude-haiku-4-5-20251001-v1:0');
    expect(log.model?.inputTokens).toBeGreaterThan(0);
    const token = await stack.mintUserToken(['locomo-conv-26']);
    const review = await fetch(`${stack.info.apiUrl}/v1/users/locomo-conv-26/review/staged?limit=200`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const staged = (
      (await review.json()) as { staged: Array<{ path: string; status: string; markdown: string }> }
    ).staged.filter((i) => i.status === 'staged');
    expect(staged.length).toBe(s.staged);
    const doc = staged[0]?.markdown ?? '';
    expect(doc).toMatch(/^---\nkind: /);
    expect(doc).toContain('promotion_count: 0');
    expect(doc).toContain('dia_ids: D');
    // Each undecided staged record is also its markdown under the user's Knowledge_staging/
    // (DESIGN.md, "State"; req R-STG), carried by the user's export with the seed's front matter.
    expect((await bucket.list(`${user}Knowledge_staging/`)).sort()).toEqual(
      staged.map((i) => `${user}${i.path}`).sort(),
    );
    const exported = await fetch(`${stack.info.apiUrl}/v1/users/locomo-conv-26/export`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const documents = ((await exported.json()) as { archive: { documents: Array<{ path: string; text?: string }> } })
      .archive.documents;
    const stagedDocs = documents.filter((d) => d.path.startsWith('Knowledge_staging/'));
    expect(stagedDocs.map((d) => d.path).sort()).toEqual(staged.map((i) => i.path).sort());
    for (const d of stagedDocs) {
      const { meta, body } = parseFrontMatter(d.text ?? '');
      expect(Object.keys(meta)).toEqual(
        expect.arrayContaining(['staged_at', 'batch_id', 'promotion_count', 'source_turns', 'confidence']),
      );
      expect(meta).toMatchObject({ promotion_count: 0, batch_id: expect.stringMatching(/^batch-\d+-\d+$/) });
      expect(body).toMatch(/^# /);
      // The object is the record rendered, as the review list renders it.
      expect(d.text).toBe(staged.find((i) => i.path === d.path)?.markdown);
    }
    // A reviewer's promotion moves it to Knowledge/: the staging object goes, the Knowledge document is there.
    const [first, second] = staged;
    const promoted = await fetch(`${stack.info.apiUrl}/v1/users/locomo-conv-26/review/promote`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: first?.path, reason: 'right' }),
    });
    expect(promoted.status).toBe(200);
    const { knowledgePath } = (await promoted.json()) as { knowledgePath: string };
    expect(await bucket.list(`${user}${first?.path}`)).toEqual([]);
    expect(parseFrontMatter(await bucket.text(`${user}Knowledge/${knowledgePath}`)).meta).toMatchObject({
      batch_id: parseFrontMatter(first?.markdown ?? '').meta.batch_id,
    });
    // A discard removes its object too; the record stays (status discarded), so it never comes back.
    if (second) {
      const discarded = await fetch(`${stack.info.apiUrl}/v1/users/locomo-conv-26/review/discard`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ path: second.path, reason: 'noise' }),
      });
      expect(discarded.status).toBe(200);
      expect(await bucket.list(`${user}${second.path}`)).toEqual([]);
    }
    expect((await bucket.list(`${user}Knowledge_staging/`)).length).toBe(staged.length - (second ? 2 : 1));
  });

  it('counts republished events once and keeps malformed ones with the failing field', async () => {
    const before = await stack.report();
    const good = tenTurns('dup-user');
    const lines = [
      ...good,
      ...good,
      '{"type":"turn.saved","version":1,"userId":"dup-user","turnId":"eleven"}',
      'this is not json',
      '',
    ];
    await stack.replayLines(lines);
    await stack.waitUntilDrained();
    const s = await stack.report();
    expect(s.turns - before.turns).toBe(10);
    expect(s.duplicates - before.duplicates).toBe(10);
    expect(s.rejected - before.rejected).toBe(2);
    expect(s.batches - before.batches).toBe(1);

    const rejected = await Promise.all(
      (await bucket.list('rejected/')).map(async (k) => JSON.parse(await bucket.text(k))),
    );
    const paths = rejected.flatMap((r: { errors: Array<{ path: string }> }) => r.errors.map((e) => e.path));
    expect(paths).toEqual(expect.arrayContaining(['turnId', 'sessionId', '(body)']));
    expect(rejected.map((r: { body: string }) => r.body)).toContain('this is not json');
  });

  it('retries a failed model call after the retry delay once (req R-ERR), and completes the job', async () => {
    const ledger = requestLedger.snapshotByScope().reflector ?? {};
    const s3Before = requestLedger.s3ByKeyClass();
    let calls = 0;
    stack.emulators.converse.setResponder((req) => {
      if (!answerNameOf(req)) return offlineResponder(req);
      calls++;
      // Every attempt of the first delivery fails as Bedrock does when it is down for a moment.
      return calls <= BEDROCK_MAX_ATTEMPTS
        ? { status: 503, errorType: 'ServiceUnavailableException', message: 'down for a moment' }
        : offlineResponder(req);
    });
    try {
      await stack.replayLines(tenTurns('retry-user'));
      await stack.waitUntilDrained({ timeoutMs: 60_000 });
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    expect(calls).toBe(BEDROCK_MAX_ATTEMPTS + 1);
    const log = await bucket.batchLog('retry-user', 'batch-1-10');
    expect(log).toMatchObject({ status: 'completed' });
    // The first delivery's failure put the job back with the retry delay instead of the queue's visibility timeout.
    const d = ledgerDelta(ledger, requestLedger.snapshotByScope().reflector ?? {});
    expect(d['SQS.ChangeMessageVisibility']?.requests).toBe(1);
    // Neither delivery looked for a recorded answer in S3 (S3 bills a 404 GET too): only an item naming an object sends a read there.
    const s3After = requestLedger.s3ByKeyClass();
    expect(
      Object.keys(s3After).filter(
        (k) =>
          k.startsWith('reflector GetObject') && k.includes('model-output') && (s3After[k] ?? 0) > (s3Before[k] ?? 0),
      ),
    ).toEqual([]);
  });

  it('retries a throttled model call (the SDK attempts on each of the queue deliveries), then parks the job in the DLQ', async () => {
    const ledger = requestLedger.snapshotByScope().reflector ?? {};
    const before = await stack.report();
    let calls = 0;
    stack.emulators.converse.setResponder((req) => {
      if (!answerNameOf(req)) return offlineResponder(req); // summaries still work
      calls++;
      return { status: 429, errorType: 'ThrottlingException', message: 'Too many requests' };
    });
    try {
      await stack.replayLines(tenTurns('throttled-user'));
      await stack.waitUntilDrained({ timeoutMs: 60_000 });
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    const s = await stack.report();
    // Every delivery's call is retried by the SDK (standard mode) before the job fails it.
    expect(calls).toBe(BEDROCK_MAX_ATTEMPTS * QUEUES.job.maxReceiveCount);
    expect(s.batches - before.batches).toBe(0);
    expect(s.errors - before.errors).toBe(1);
    const failed = JSON.parse(await bucket.text('users/throttled-user/Logs/reflector/failed/batch-1-10.json'));
    expect(failed).toMatchObject({
      status: 'aborted',
      error: { message: expect.stringContaining('ModelUnavailableError') },
    });
    // Only the first delivery comes back early; the later ones wait the queue's visibility timeout.
    expect(
      ledgerDelta(ledger, requestLedger.snapshotByScope().reflector ?? {})['SQS.ChangeMessageVisibility']?.requests,
    ).toBe(1);
  });

  it('parks a job whose model access is denied, naming model access as the cause in the failure log', async () => {
    const before = await stack.report();
    stack.emulators.converse.setResponder((req) => (answerNameOf(req) ? ACCESS_DENIED : offlineResponder(req)));
    try {
      await stack.replayLines(tenTurns('denied-user'));
      await stack.waitUntilDrained({ timeoutMs: 60_000 });
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    const s = await stack.report();
    expect(s.batches - before.batches).toBe(0);
    expect(s.errors - before.errors).toBe(1);
    const failed = JSON.parse(await bucket.text('users/denied-user/Logs/reflector/failed/batch-1-10.json'));
    expect(failed).toMatchObject({ status: 'aborted' });
    expect(failed.error.message).toMatch(
      /^ModelAccessDeniedError: no access to us\.anthropic\.claude-haiku-4-5-20251001-v1:0 in us-east-1: call the model once as a principal allowed aws-marketplace:Subscribe/,
    );
  });

  it('asks a cut answer again with a larger budget in the same delivery, and records it', async () => {
    const asked: Array<{ temperature?: number; maxTokens?: number }> = [];
    stack.emulators.converse.setResponder(async (req) => {
      const full = await offlineResponder(req);
      if (answerNameOf(req))
        asked.push({ temperature: req.inferenceConfig?.temperature, maxTokens: req.inferenceConfig?.maxTokens });
      return answerNameOf(req) && req.inferenceConfig?.maxTokens === 1500 ? cutReply(req, full) : full;
    });
    try {
      await stack.replayLines(tenTurns('cut-user'));
      await stack.waitUntilDrained();
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    const log = await bucket.batchLog('cut-user', 'batch-1-10');
    expect(log).toMatchObject({
      status: 'completed',
      model: { stopReason: 'end_turn', budgetRetry: { maxTokens: 1500, retryMaxTokens: 3000, outputTokens: 1500 } },
    });
    // Req R-LLM-1 from the deployed function's defaults (the stack sets neither): temperature 0.6, 1,500 tokens.
    expect(asked).toEqual([
      { temperature: 0.6, maxTokens: 1500 },
      { temperature: 0.6, maxTokens: 3000 },
    ]);
  });

  it('truncates over-cap output and every gate rejects its case, through the Converse endpoint', async () => {
    // Knowledge the gates can see: one well-established fact (confidence 0.95).
    const aws = { region: stack.info.region, credentials: stack.info.credentials };
    const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...aws, endpoint: stack.info.endpoints.dynamodb }));
    const repo = new DynamoS3KnowledgeStore({
      ddb,
      s3: new S3Client({ ...aws, endpoint: stack.info.endpoints.s3, forcePathStyle: true }),
      tableName: stack.info.tableName,
      bucketName: stack.info.bucketName,
      changes: new DynamoSearchChangeLog({ ddb, tableName: stack.info.tableName }),
    });
    const known = 'The user keeps a reef tank with two clownfish.';
    await repo.promote(
      'gates-user',
      {
        path: 'Facts/reef_tank--b0.md',
        kind: 'fact',
        title: 'reef_tank',
        category: 'Facts',
        text: known,
        confidence: 0.85,
        sourceTurns: [1],
        batchId: 'b0',
        stagedAt: '',
        meta: {},
        body: known,
        promotedBy: ['b1', 'b2'],
        status: 'staged',
      },
      'Facts/reef_tank.md',
      `# reef_tank\n\n${known}\n`,
      {
        id: 'Facts/reef_tank.md',
        title: 'reef_tank',
        text: known,
        category: 'Facts',
        confidence: 0.95,
        sourceTurns: [1],
        summary: known,
        promotedAt: '2026-01-01T00:00:00Z',
      },
    );
    const fact = (title: string, content: string, t: number) => ({
      title,
      content,
      source_turns: [t],
      category: 'Facts',
    });
    stack.emulators.converse.setResponder((req) => {
      if (!answerNameOf(req)) return offlineResponder(req);
      const input = {
        new_facts: [
          fact('ghost', 'The user mentioned a ghost turn.', 99),
          fact('reef_tank', known, 1),
          fact('extra_1', 'x', 1),
          fact('extra_2', 'y', 1),
        ],
        corrections: [
          {
            existing_file: 'Facts/reef_tank.md',
            what_changed: 'the reef tank has three clownfish now',
            source_turns: [1],
            new_confidence_hint: 'lower',
          },
          {
            existing_file: 'Facts/reef_tank.md',
            what_changed: 'second correction',
            source_turns: [1, 2],
            new_confidence_hint: 'lower',
          },
        ],
        connections: [
          {
            file_a: 'Facts/reef_tank.md',
            file_b: '../other-user/Knowledge/Facts/secret.md',
            relationship: 'reef tank',
            source_turns: [1],
          },
          { file_a: 'Facts/reef_tank.md', file_b: 'Facts/nope.md', relationship: 'reef tank', source_turns: [1] },
        ],
        open_questions: [
          { question: 'What about quantum chromodynamics?', source_turns: [2], why_unresolved: 'never discussed' },
          {
            question: 'Which lighting suits the reef tank?',
            source_turns: [2],
            why_unresolved: 'the reply was unsure',
          },
        ],
      };
      // Haiku 4.5 answers in text (the type in the prompt, or structured output): the JSON as text.
      return {
        body: {
          output: { message: { role: 'assistant', content: [{ text: JSON.stringify(input) }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10 },
        },
      };
    });
    try {
      await stack.replayLines(
        Array.from({ length: 10 }, (_, i) =>
          turnLine(
            'gates-user',
            i + 1,
            i === 0 ? 'My reef tank has clownfish' : i === 1 ? 'Which lighting suits the reef tank?' : `entry${i}`,
          ),
        ),
      );
      await stack.waitUntilDrained();
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    const log = await bucket.batchLog('gates-user', 'batch-1-10');
    expect(log.quality_gate_results.truncated_by_caps).toEqual({
      new_facts: 2,
      corrections: 1,
      connections: 0,
      open_questions: 0,
    });
    expect(log.quality_gate_results.items_proposed).toBe(7);
    expect(log.quality_gate_results.rejections.map((r: { gate: string }) => r.gate).sort()).toEqual(
      ['drift_guard', 'dedup', 'keyword_match', 'related_file_exists', 'related_file_exists', 'turn_existence'].sort(),
    );
    expect(JSON.stringify(log.quality_gate_results.rejections)).toContain('leaves the user');
    expect(log.staged_files).toEqual(['Knowledge_staging/Questions/which_lighting_suits_the_reef_tank--batch-1-10.md']);
  });

  it('aborts a batch whose model output is malformed and logs the raw answer', async () => {
    stack.emulators.converse.setResponder(() => ({
      body: {
        output: { message: { role: 'assistant', content: [{ text: 'Sorry, I cannot produce JSON today.' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
    }));
    try {
      await stack.replayLines(tenTurns('garbled-user'));
      await stack.waitUntilDrained();
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    const log = await bucket.batchLog('garbled-user', 'batch-1-10');
    expect(log.status).toBe('aborted');
    expect(log.error?.raw).toBe('Sorry, I cannot produce JSON today.');
    expect((await stack.report()).batchesAborted).toBe(1);
  });

  it('keeps planted secrets out of DynamoDB, S3 and every model prompt, and says by kind what it redacted', async () => {
    // Made up, in their issuers' formats.
    const secrets = [
      'AKIAQWERTYUIOPASDFGH',
      'ghp_0123456789abcdefghijABCDEFGHIJ012345',
      'pg-Pa55w0rd-x9',
      'eyJzdWIiOiJzZWNyZXQtdXNlciJ9',
    ];
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${secrets[3]}.c2lnbmF0dXJlLXNpZ25hdHVyZQ`;
    const turn = (turnId: number, query: string) =>
      JSON.stringify({
        type: 'turn.saved',
        version: 1,
        userId: 'secret-user',
        sessionId: 's1',
        turnId,
        timestamp: `2026-02-07T10:${String(turnId).padStart(2, '0')}:00Z`,
        query,
        response: `Noted: ${query}`,
        context: `ctx ${query}`,
        attributes: { speaker: 'Ana', note: query },
      });
    const lines = [
      turn(1, `My deploy key is ${secrets[0]} for the staging account.`),
      turn(2, `The bot token: ${secrets[1]}`),
      turn(3, `Connect with postgres://app:${secrets[2]}@db.internal:5432/main please.`),
      turn(4, `Use Authorization: Bearer ${jwt} when calling it.`),
      ...Array.from({ length: 6 }, (_, i) =>
        turn(i + 5, `I adopted a beagle named Rex, and my key is still ${secrets[0]}.`),
      ),
      // Bad input is kept (rejected/), with its secret redacted.
      JSON.stringify({
        type: 'turn.saved',
        version: 1,
        userId: 'secret-user',
        turnId: 'eleven',
        query: `oops ${secrets[1]}`,
      }),
    ];
    const before = stack.emulators.converse.requests.length;
    await stack.replayLines(lines);
    await stack.waitUntilDrained();

    const items = await stack.scanItems();
    const objects = await Promise.all(
      [...(await bucket.list('users/secret-user/')), ...(await bucket.list('rejected/'))].map((k) => bucket.text(k)),
    );
    const prompts = stack.emulators.converse.requests.slice(before);
    expect(prompts.length).toBeGreaterThan(0);
    const stored = [JSON.stringify(items), ...objects, JSON.stringify(prompts)].join('\n');
    for (const secret of secrets) expect(stored).not.toContain(secret);
    expect(stored).toContain('[redacted:aws_access_key]');
    expect(stored).toContain('[redacted:url_password]');
    expect(
      JSON.stringify(items.filter((i) => i.pk === 'USER#secret-user' && String(i.sk).startsWith('TURN#'))),
    ).toContain('[redacted:api_token]');
  });

  it('never delivers a job again while its invocation runs, however long the process stalls (the emulator runs in it)', async () => {
    // Under load a replay's event loop stalled up to 2 s, and a running batch came back to another
    // poller (two invocations of one FIFO group at once, which Lambda never has): a stall past the
    // queue's local visibility timeout let the emulator expire it before the event source renewed it.
    const invocations = stack.sources.job.stats.invocations;
    let calls = 0;
    stack.emulators.converse.setResponder((req) => {
      if (answerNameOf(req) !== REFLECTION_TOOL.name) return offlineResponder(req);
      calls++;
      const until = Date.now() + (QUEUES.job.localVisibilityTimeoutSeconds + 1.5) * 1000;
      while (calls === 1 && Date.now() < until) {
        // the whole process stalls in the batch's model call: emulator, event sources and handlers alike
      }
      return offlineResponder(req);
    });
    try {
      await stack.replayLines(tenTurns('stall-user'));
      await stack.waitUntilDrained({ timeoutMs: 60_000 });
    } finally {
      stack.emulators.converse.setResponder(offlineResponder);
    }
    expect(calls).toBe(1);
    expect(await bucket.batchLog('stall-user', 'batch-1-10')).toMatchObject({ status: 'completed' });
    // Two jobs (the batch, then the idle summary of its ten turns), each delivered once.
    expect(stack.sources.job.stats.invocations - invocations).toBe(2);
  }, 60_000);

  it("settles the jobs a sweep fired before the clock moves on: the nightly run is over when the next morning's session comes", async () => {
    // Without it the replay published the next session while the nightly (or weekly) job still
    // ran, on the next session's clock: the local harness said sessions settle before the clock moves on.
    const user = 'settle-user';
    const turn = (i: number) =>
      JSON.stringify({
        type: 'turn.saved',
        version: 1,
        userId: user,
        sessionId: 's-evening',
        turnId: i,
        timestamp: `2027-03-01T20:0${i}:00Z`,
        query: `Evening note ${i} about the garden shed.`,
        response: 'Noted.',
      });
    await stack.replayLines([1, 2, 3, 4, 5, 6].map(turn), { clock: true });
    await stack.waitUntilDrained();
    const fired = await stack.advanceTo(new Date('2027-03-02T10:00:00Z'));
    expect(fired.map((f) => f.sweep)).toContain('nightly');
    // Nothing waited for: the run is logged as advanceTo returns, nothing is in flight.
    const runs = (await stack.scanItems()).filter(
      (i) => i.pk === `USER#${user}` && String(i.sk).startsWith('RUN#nightly#'),
    );
    expect(runs).toHaveLength(1);
    expect(Object.values(stack.sources).some((source) => source.busy)).toBe(false);
  });

  it("made no AWS request its function's synthesized IAM policies deny (infra/permissions.ts)", () => {
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['api', 'idle', 'reflector', 'signal']));
    expect(iamDenials(stack)).toEqual([]);
  });
});
