/**
 * Hostile input against every event schema, queue record path and memory API route, in
 * process (bench/fuzz-targets.ts; the api and reflector functions run their own dispatchers;
 * `npm run bench -- --only fuzz` runs the same targets with 10,000 random cases). Per case: no use case throws, every rejection names its field, every write stays
 * under the user's own prefix (or rejected/), no DynamoDB item passes 400 KB, the victim's
 * memory is untouched, the model's caps hold. The checks themselves are tested first, so a
 * green run cannot come from checks that never fail.
 */
import type { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { fuzzTargets, runTarget } from '../../bench/fuzz-targets.js';
import { type FuzzTarget, largestAttributes } from '../../bench/fuzz-world.js';
import { MAX_ATTRIBUTE_BYTES, TimestampSchema, utf8Bytes } from '../../events/common.js';
import { TurnSavedSchema } from '../../events/turn-saved.js';
import { MAX_BATCH_BYTES, SqsTurnPublisher } from '../../lib/turns/sqs-turn-publisher.adapter.js';
import { mergeAttributes } from '../../lib/items/memory-item.js';
import { stagedDocuments } from '../../lib/knowledge/staging.js';
import { parseRecord } from '../../lib/turns/parse-record.js';
import { capSummaryText, MAX_SUMMARY_CHARS } from '../../lib/summaries/summary.js';
import { parseBatchAnswer, BatchAnswerError } from '../../lib/batches/batch-answer.js';
import { ATTACKER, everyErrorNamesAField, namesField, REQUEST_ROOTS, VICTIM } from '../helpers/hostile-input.js';
import { keyStaysUnder } from '../../lib/kernel/write-log.fake.js';
import { dynamoItemBytes, WriteLog } from '../../lib/kernel/write-log.fake.js';

const SEED = 20_261_122;
/**
 * Cases per target at a fixed seed: enough to meet every generator branch the assertions
 * below count, few enough for the unit tier on 2 cores. The deep run (10,000 cases, `--seed`
 * for others, and the attack on the local harness) is `npm run bench -- --only fuzz`.
 */
const CASES: Record<string, number> = {
  'turn.saved': 80,
  'turn.saved claim-check': 40,
  'session.closed': 30,
  'agent.event': 30,
  'reflector.job': 60,
  'idle.check': 30,
  'sweep (schedule event)': 30,
  'prompt injection (in process)': 80,
};
const API_CASES = 12;

const targets = await fuzzTargets({ maxBytes: 512 * 1024 });
const byName = (name: string): FuzzTarget => {
  const t = targets.find((x) => x.name === name);
  if (!t) throw new Error(`no fuzz target ${name}`);
  return t;
};

describe('the checks the fuzzing relies on', () => {
  it('keyStaysUnder refuses keys that leave the prefix however they are read', () => {
    expect(keyStaysUnder('users/u/Knowledge/Facts/x.md', 'users/u/')).toBe(true);
    expect(keyStaysUnder('users/u/summaries/../system.md', 'users/u/')).toBe(true);
    for (const bad of [
      'users/u/../v/x',
      'users/u/Knowledge/../../v/x',
      'users/u\\..\\..\\v\\x',
      'users/v/x',
      'users/u/',
      'users/u/x\u0000',
      'users/u/./../../x',
      '/users/u/x',
    ])
      expect(keyStaysUnder(bad, 'users/u/'), bad).toBe(false);
  });

  it('namesField finds a field in an error path or quoted in its message', () => {
    expect(namesField([{ path: 'signals.quality', message: 'too big' }], 'signals')).toBe(true);
    expect(namesField([{ path: 'payloadRef:query', message: 'missing' }], 'query')).toBe(true);
    expect(namesField([{ path: '(root)', message: 'Unrecognized key: "admin"' }], 'admin')).toBe(true);
    expect(namesField([{ path: 'query', message: 'missing' }], 'response')).toBe(false);
  });

  it('everyErrorNamesAField flags a rejection of an object that only blames the whole of it', () => {
    expect(everyErrorNamesAField([{ path: '(root)', message: 'Invalid input' }], true)).toHaveLength(1);
    expect(everyErrorNamesAField([{ path: '(root)', message: 'Invalid input' }], false)).toEqual([]);
    expect(everyErrorNamesAField([{ path: 'body', message: 'Unrecognized key: "x"' }], true, REQUEST_ROOTS)).toEqual(
      [],
    );
    expect(everyErrorNamesAField([], true)).toEqual(['a rejection with no errors']);
  });

  it('the write log flags other users, escaping keys, foreign partitions and items over 400 KB', () => {
    const log = new WriteLog();
    log.add('a', ATTACKER, `users/${ATTACKER}/Knowledge/x.md`);
    log.add('b', null, 'rejected/2026-02-06/turn-queue/m1.json');
    expect(log.problems(new Set([ATTACKER]))).toEqual([]);
    log.add('c', VICTIM, `users/${VICTIM}/x`);
    log.add('d', ATTACKER, `users/${ATTACKER}/Knowledge_staging/../../${VICTIM}/x`);
    log.add('e', ATTACKER, `USER#${VICTIM}|TURN#1`);
    log.addItem('f', ATTACKER, `USER#${ATTACKER}|SUMMARY#x`, { text: 'x'.repeat(410 * 1024) });
    log.add('g', null, 'rejected/../users/x');
    expect(log.problems(new Set([ATTACKER])).map((p) => p.split(':')[0])).toEqual(['c', 'd', 'e', 'f', 'g']);
  });
});

describe('fixes the fuzzing led to', () => {
  it('a model answer nested too deeply to serialise aborts the batch with a reason instead of throwing a RangeError', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}1${']'.repeat(50_000)}`);
    expect(() => parseBatchAnswer({ new_facts: deep })).toThrow(BatchAnswerError);
  });

  it('a summary is cut at its cap, never in the middle of a surrogate pair', () => {
    expect(capSummaryText('short')).toBe('short');
    const cut = capSummaryText('😀'.repeat(MAX_SUMMARY_CHARS));
    expect(cut.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(cut).toMatch(/cap\]$/);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(cut)).toBe(false);
  });
});

describe('fixes the fuzzing led to: nothing the contract accepts may outgrow a DynamoDB item', () => {
  const turnWith = (turnId: number, attributes: Record<string, string>) => ({
    type: 'turn.saved',
    version: 1,
    userId: ATTACKER,
    sessionId: 's',
    turnId,
    timestamp: '2026-02-06T14:00:00Z',
    query: 'q',
    response: 'r',
    attributes,
  });

  it('a turn whose attributes are within 50 × 4096 characters but over 256 KB of UTF-8 is rejected, naming attributes', () => {
    const ascii = TurnSavedSchema.safeParse(turnWith(1, largestAttributes(1)));
    expect(ascii.success).toBe(true);
    const cjk = TurnSavedSchema.safeParse(
      turnWith(1, Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, '中'.repeat(4096)]))),
    );
    expect(cjk.success).toBe(false);
    expect(cjk.error?.issues.map((i) => i.path.join('.'))).toEqual(['attributes']);
  });

  it('an item derived from many turns of the largest attributes carries at most MAX_ATTRIBUTE_BYTES of them', () => {
    const merged = mergeAttributes([1, 2, 3, 4], (t) => largestAttributes(t));
    const bytes = Object.entries(merged).reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);
    expect(bytes).toBeLessThanOrEqual(MAX_ATTRIBUTE_BYTES);
    expect(bytes).toBeGreaterThan(MAX_ATTRIBUTE_BYTES - 5_000);
    expect(mergeAttributes([2, 1], (t) => ({ dia_ids: `D1:${t}` }))).toEqual({ dia_ids: 'D1:1 D1:2' });
  });

  it('a staged item citing twenty such turns copies their attributes only up to the same bound', () => {
    const turns = new Map(
      Array.from({ length: 20 }, (_, i) => [i + 1, TurnSavedSchema.parse(turnWith(i + 1, largestAttributes(i + 1)))]),
    );
    const [doc] = stagedDocuments(
      {
        new_facts: [
          {
            title: 'reef',
            content: 'The user keeps a reef tank.',
            source_turns: [...turns.keys()],
            related_existing: [],
            category: 'Facts',
          },
        ],
        corrections: [],
        connections: [],
        open_questions: [],
      },
      { batchId: 'b', stagedAt: '2026-02-06T14:30:00Z', turns },
    );
    expect(dynamoItemBytes({ meta: doc?.meta, text: doc?.text, body: doc?.body })).toBeLessThan(
      MAX_ATTRIBUTE_BYTES + 10_000,
    );
    expect(Object.keys((doc?.meta.source_attributes ?? {}) as object)).toEqual(['1']);
  });

  it('the publisher splits ten turns just under the claim-check threshold into batches SQS accepts, and reports a body it never could', async () => {
    const sent: number[] = [];
    const sqs = {
      send: async (command: SendMessageBatchCommand) => {
        const entries = command.input.Entries ?? [];
        sent.push(entries.reduce((n, e) => n + Buffer.byteLength(e.MessageBody ?? ''), 0));
        return { Successful: entries.map((e) => ({ Id: e.Id })) };
      },
    };
    const publisher = new SqsTurnPublisher(sqs as unknown as SQSClient, 'https://sqs.invalid/q');
    const big = (i: number) => ({ body: 'x'.repeat(250 * 1024), groupId: 'u', deduplicationId: `d${i}` });
    const res = await publisher.publishRaw([
      ...Array.from({ length: 10 }, (_, i) => big(i)),
      { body: 'y'.repeat(MAX_BATCH_BYTES + 1), groupId: 'u', deduplicationId: 'huge' },
    ]);
    expect(res.sent).toBe(10);
    expect(res.failed).toEqual([{ index: 10, code: 'MessageTooLong', message: expect.any(String) }]);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    for (const bytes of sent) expect(bytes).toBeLessThanOrEqual(MAX_BATCH_BYTES);
  });

  it('a time the schemas accept can be written back by toISOString (years 0000–9999 in UTC), so jobs made from it parse', () => {
    for (const ok of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-02-06T14:00:00.123456789+05:45'])
      expect(TimestampSchema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ['9999-12-31T23:59:59-12:00', '0000-01-01T00:00:00+01:00'])
      expect(TimestampSchema.safeParse(bad).success, bad).toBe(false);
  });

  it('a claim check whose payload is another user’s names userId', async () => {
    const claims = { fetch: async () => JSON.stringify(turnWith(1, {})) };
    const parsed = await parseRecord(
      JSON.stringify({
        type: 'turn.saved',
        version: 1,
        userId: VICTIM,
        sessionId: 's',
        turnId: 1,
        timestamp: '2026-02-06T14:00:00Z',
        payloadRef: { key: 'claims/x.json', bytes: 1 },
      }),
      claims,
    );
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.errors.map((e) => e.path)).toEqual(['payloadRef.key', 'userId']);
  });
});

describe('hostile input (fast-check)', () => {
  const expectClean = async (target: FuzzTarget, cases: number, seed: number) => {
    const r = await runTarget(target, cases, seed);
    expect(r.examples).toEqual([]);
    expect(r.failures).toBe(0);
    expect(r.cases).toBe(cases);
    return r;
  };

  it('the turn queue: turn.saved, claim checks, session.closed and agent.event are accepted or rejected-and-kept, never thrown', {
    timeout: 60_000,
  }, async () => {
    for (const name of ['turn.saved', 'turn.saved claim-check', 'session.closed', 'agent.event']) {
      const r = await expectClean(byName(name), CASES[name] ?? 50, SEED);
      // Not vacuous: both valid and rejected records went through.
      expect(r.outcomes.rejected ?? 0, name).toBeGreaterThan(0);
      expect((r.outcomes.accepted ?? 0) + (r.outcomes.controlEvents ?? 0), name).toBeGreaterThan(0);
    }
  });

  it('the reflection and idle queues: jobs and checks run or are rejected-and-kept', { timeout: 60_000 }, async () => {
    const jobs = await expectClean(byName('reflector.job'), CASES['reflector.job'] ?? 50, SEED + 1);
    expect(jobs.outcomes.rejected ?? 0).toBeGreaterThan(0);
    expect(Object.keys(jobs.outcomes).filter((k) => k !== 'rejected').length).toBeGreaterThan(2);
    const idle = await expectClean(byName('idle.check'), CASES['idle.check'] ?? 50, SEED + 2);
    expect(idle.outcomes.rejected ?? 0).toBeGreaterThan(0);
    expect(Object.keys(idle.outcomes).length).toBeGreaterThan(1);
  });

  it('schedule events: a bad one is refused naming its field; a good one sweeps', { timeout: 60_000 }, async () => {
    const r = await expectClean(byName('sweep (schedule event)'), CASES['sweep (schedule event)'] ?? 50, SEED + 3);
    expect(r.outcomes.rejected ?? 0).toBeGreaterThan(0);
    expect(Object.keys(r.outcomes).length).toBeGreaterThan(2);
  });

  it('every memory API route, through the api function’s own dispatcher: no 500, 400s name the field, 401 without a token, nothing for another user, answers match the contract', {
    timeout: 240_000,
  }, async () => {
    const api = targets.filter((t) => t.name.startsWith('api '));
    expect(api.length).toBe(49);
    const statuses: Record<string, number> = {};
    for (const [i, t] of api.entries()) {
      const r = await expectClean(t, API_CASES, SEED + 10 + i);
      for (const [k, v] of Object.entries(r.outcomes)) statuses[k] = (statuses[k] ?? 0) + v;
    }
    // The real dispatcher (functions/api/routes.ts) answered: a request without the token, and base64 bodies it decoded and served.
    for (const status of ['200', '400', '401', '403', '404', 'base64 200', 'base64 400'])
      expect(statuses[status] ?? 0, status).toBeGreaterThan(0);
  });

  it('prompt injection: an obedient model writes nothing outside the user’s prefix and its output stays capped', {
    timeout: 60_000,
  }, async () => {
    const r = await expectClean(
      byName('prompt injection (in process)'),
      CASES['prompt injection (in process)'] ?? 50,
      SEED + 4,
    );
    for (const k of ['batch:completed', 'batch:aborted', 'summary:written', 'nightly:completed'])
      expect(r.outcomes[k] ?? 0, k).toBeGreaterThan(0);
  });
});
