/**
 * The memory's lifecycle through the real handlers on the local harness: req R-TIER's tiers and
 * diary, and the input times that decide state. Tiers: the API
 * (corroboration, automatic promotion), the signal function (a session's close clears its
 * ephemeral entries), the sweep function (expiry with its reason) and the nightly run (decay
 * and garbage collection), each move in the audit trail. Items 12 and 13, the diary: an
 * agent.event's batch writes a reflection entry that the next event's batch reads, entries
 * are listed and searched, and a person keeps or drops one.
 *
 * Its own stack, whose simulated clock starts at the wall clock's time: DynamoDB Local's TTL
 * deletes by the wall clock, so entries written at a replayed conversation's 2023 dates would
 * vanish under the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { bucketReader } from '../helpers/s3.js';
import { apiRequest } from '../helpers/api.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';

let stack: LocalHarness;
let admin: string;

beforeAll(async () => {
  stack = await startHarness({ stage: 'tiertest', logLevel: 'SILENT', speed: 300 });
  admin = stack.info.adminToken;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const call = (method: string, path: string, body?: unknown) =>
  apiRequest(`${stack.info.apiUrl}${path}`, admin, method, body);
const u = (user: string) => `/v1/users/${encodeURIComponent(user)}`;
// biome-ignore lint/suspicious/noExplicitAny: loose result shape
type Result = any;
const audit = async (user: string, id: string): Promise<Result[]> =>
  (await call('GET', `${u(user)}/memory/audit?itemId=${encodeURIComponent(id)}`)).body.entries;
const DAY = 86_400_000;

describe('tiers as req R-TIER defines them', () => {
  it('a short-term entry lives 7 days; written again in another session it is corroborated, and promoted at confidence > 0.8 in 2+ sessions', async () => {
    const user = 'tier-promote';
    const entry = { text: 'The user prefers answers with a short summary first', confidence: 0.7 };
    const first = await call('POST', `${u(user)}/memory/tiers/short_term`, { ...entry, sessionId: 's-1' });
    expect(first.body).toMatchObject({ created: true, item: { tier: 'short_term', confidence: 0.7 } });
    expect(Date.parse(first.body.item.expiresAt) - Date.parse(first.body.item.createdAt)).toBe(7 * DAY);
    const id: string = first.body.item.id;
    // The same session again (a retry) changes nothing.
    expect(
      (await call('POST', `${u(user)}/memory/tiers/short_term`, { ...entry, sessionId: 's-1' })).body,
    ).toMatchObject({ created: false, item: { id, tier: 'short_term', confidence: 0.7 } });
    const again = await call('POST', `${u(user)}/memory/tiers/short_term`, { ...entry, sessionId: 's-2' });
    expect(again.body).toMatchObject({
      created: false,
      item: {
        id,
        tier: 'long_term',
        status: 'canonical',
        confidence: 0.85,
        expiresAt: null,
        seen: { sessions: ['s-1', 's-2'] },
      },
    });
    const moves = await audit(user, id);
    expect(moves.map((e) => e.action)).toEqual(['promote', 'corroborate', 'create']);
    expect(moves[0]).toMatchObject({ actor: 'tier-policy', from: 'short_term', to: 'long_term' });
    expect(moves[0].reason).toContain('confidence 0.85 > 0.8, seen in 2 sessions');

    // Seen in two sessions but not confident enough: it stays short-term.
    const weak = { text: 'The user might be moving to Lisbon', confidence: 0.5 };
    await call('POST', `${u(user)}/memory/tiers/short_term`, { ...weak, sessionId: 's-1' });
    expect(
      (await call('POST', `${u(user)}/memory/tiers/short_term`, { ...weak, sessionId: 's-2' })).body.item,
    ).toMatchObject({ tier: 'short_term', confidence: 0.65 });
  });

  it("a session's close clears its ephemeral entries, and only its own", async () => {
    const user = 'tier-session';
    const mine = await call('POST', `${u(user)}/memory/tiers/ephemeral`, {
      text: 'Comparing two kayaks right now',
      sessionId: 's-closing',
    });
    const other = await call('POST', `${u(user)}/memory/tiers/ephemeral`, {
      text: 'Drafting a packing list',
      sessionId: 's-open',
    });
    const ephemeral = async () =>
      (await call('GET', `${u(user)}/memory/tiers/ephemeral`)).body.items.map((i: Result) => i.id).sort();
    expect(await ephemeral()).toEqual([mine.body.item.id, other.body.item.id].sort());
    await stack.publisher.publish([
      {
        type: 'session.closed',
        version: 1,
        userId: user,
        sessionId: 's-closing',
        timestamp: stack.now().toISOString(),
      },
    ]);
    await stack.waitUntilDrained();
    expect(await ephemeral()).toEqual([other.body.item.id]);
    const moves = await audit(user, mine.body.item.id);
    expect(moves[0]).toMatchObject({
      action: 'session_close',
      actor: 'tier-policy',
      from: 'ephemeral',
      reason: 'session s-closing closed',
    });
  });

  it("a session's close promotes its ephemeral entries that matter to short-term, with why, and clears the rest (req R-TIER-11)", async () => {
    const user = 'tier-close-promote';
    const tiers = `${u(user)}/memory/tiers`;
    const marked = await call('POST', `${tiers}/ephemeral`, {
      text: 'Always answer in metric units',
      sessionId: 's-1',
      significance: ['user_signal'],
    });
    const again = { text: 'Asked twice about kayak rentals', sessionId: 's-1' };
    const recurring = await call('POST', `${tiers}/ephemeral`, { ...again, sourceTurns: [1] });
    expect((await call('POST', `${tiers}/ephemeral`, { ...again, sourceTurns: [2] })).body.item).toMatchObject({
      occurrences: 2,
    });
    const idle = await call('POST', `${tiers}/ephemeral`, { text: 'Scrolled the rental list', sessionId: 's-1' });
    await stack.publisher.publish([
      { type: 'session.closed', version: 1, userId: user, sessionId: 's-1', timestamp: stack.now().toISOString() },
    ]);
    await stack.waitUntilDrained();
    const shortTerm = (await call('GET', `${tiers}/short_term`)).body.items.map((i: Result) => i.id).sort();
    expect(shortTerm).toEqual([marked.body.item.id, recurring.body.item.id].sort());
    expect((await call('GET', `${tiers}/ephemeral`)).body.items).toEqual([]);
    expect((await audit(user, marked.body.item.id))[0]).toMatchObject({
      action: 'promote',
      actor: 'tier-policy',
      from: 'ephemeral',
      to: 'short_term',
      reason: 'session s-1 closed; it matters: user_signal',
    });
    expect((await audit(user, recurring.body.item.id))[0].reason).toBe(
      'session s-1 closed; it matters: recurrence (2 writes)',
    );
    expect((await audit(user, idle.body.item.id))[0]).toMatchObject({
      action: 'session_close',
      reason: 'session s-1 closed',
    });
  });

  it('the expiry sweep expires a short-term entry whose 7 days ran out, "unverified/unsupported" when its confidence decayed below 0.5', async () => {
    const user = 'tier-expiry';
    const lonely = await call('POST', `${u(user)}/memory/tiers/short_term`, {
      text: 'There is a red mug on the desk',
      sessionId: 's-1',
      confidence: 0.6,
    });
    const id: string = lonely.body.item.id;
    await stack.advanceTo(new Date(Date.parse(lonely.body.item.expiresAt) + DAY));
    await stack.waitUntilDrained();
    const moves = await audit(user, id);
    expect(moves[0]).toMatchObject({ action: 'expire', actor: 'tier-policy', from: 'short_term' });
    // 0.6 seen once, decaying from a day after: 0.6 × 0.5^(6/7) at the end of its window.
    expect(moves[0].reason).toBe('unverified/unsupported: confidence 0.33 < 0.5 when its TTL ran out');
    expect((await call('POST', `${u(user)}/memory/retrieve`, { id })).status).toBe(404);
    // Written again after it expired: a new entry under the same id, not the dead one.
    const again = await call('POST', `${u(user)}/memory/tiers/short_term`, {
      text: 'There is a red mug on the desk',
      sessionId: 's-2',
      confidence: 0.6,
    });
    expect(again.body).toMatchObject({
      created: true,
      item: { id, tier: 'short_term', deleted: false, seen: { sessions: ['s-2'] } },
    });
    expect((await call('POST', `${u(user)}/memory/retrieve`, { id })).status).toBe(200);
  });

  it('the nightly run decays short-term entries nobody wrote again and collects those below 0.1', async () => {
    const user = 'tier-decay';
    const faint = await call('POST', `${u(user)}/memory/tiers/short_term`, {
      text: 'Perhaps the user owns a bicycle',
      sessionId: 's-1',
      confidence: 0.1,
    });
    const strong = await call('POST', `${u(user)}/memory/tiers/short_term`, {
      text: 'The user is training for a marathon',
      sessionId: 's-1',
      confidence: 0.9,
    });
    await stack.advanceTo(new Date(stack.now().getTime() + 2 * DAY + 3_600_000));
    // Enough messages for the nightly selection to pick the user.
    const t0 = stack.now().getTime();
    await stack.publisher.publish(
      Array.from({ length: 6 }, (_, i) => ({
        type: 'turn.saved' as const,
        version: 1 as const,
        userId: user,
        sessionId: 's-2',
        turnId: i + 1,
        timestamp: new Date(t0 + i * 60_000).toISOString(),
        query: `Training week ${i + 1}: how far should I run?`,
        response: 'About ten kilometres.',
      })),
    );
    await stack.waitUntilDrained();
    await stack.advanceTo(new Date(t0 + DAY));
    await stack.waitUntilDrained();
    const gone = await audit(user, faint.body.item.id);
    expect(gone[0]).toMatchObject({ action: 'garbage', actor: 'tier-policy', from: 'short_term' });
    expect(gone[0].reason).toMatch(/^confidence 0\.0\d < 0\.1$/);
    const kept = await call('POST', `${u(user)}/memory/retrieve`, { id: strong.body.item.id });
    expect(kept.body.item.confidence).toBeLessThan(0.9);
    expect((await audit(user, strong.body.item.id))[0]).toMatchObject({
      action: 'decay',
      from: '0.9',
      to: String(kept.body.item.confidence),
    });
  });
});

describe('the diary: reflection entries, read by the next reflection, listed, searched, kept or dropped', () => {
  const user = 'diary-user';
  let t = 0;
  const turns = (from: number, queries: string[]) =>
    queries.map((query, i) => ({
      type: 'turn.saved' as const,
      version: 1 as const,
      userId: user,
      sessionId: 's-1',
      turnId: from + i,
      timestamp: new Date(stack.now().getTime() + t++ * 1000).toISOString(),
      query,
      response: 'Let me check the booking system.',
    }));
  const event = (trigger: 'error' | 'correction', detail: string) => ({
    type: 'agent.event' as const,
    version: 1 as const,
    userId: user,
    sessionId: 's-1',
    timestamp: new Date(stack.now().getTime() + t++ * 1000).toISOString(),
    trigger,
    detail,
  });
  const diary = async (query = '') => (await call('GET', `${u(user)}/diary${query}`)).body;

  it('an event batch writes a reflection entry (trigger, insight, recommendation, confidence, emotion) that the next event batch is shown', async () => {
    await stack.publisher.publish([
      ...turns(1, ['Please book the ferry to Naxos for Friday', 'Is the ferry booking confirmed yet?']),
      event('error', 'The ferry booking API timed out twice'),
    ]);
    await stack.waitUntilDrained();
    const first = (await diary('?type=reflection')).entries as Result[];
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      type: 'reflection',
      trigger: 'event:error',
      visible: true,
      written: true,
      reflection: { confidence: 0.6 },
    });
    expect(first[0].reflection.insight).toContain('After error (The ferry booking API timed out twice)');
    expect(first[0].emotion).toMatchObject({
      confidence: expect.any(Number),
      caution: expect.any(Number),
      sentiment: expect.any(Number),
    });

    const asked = stack.emulators.converse.requests.length;
    await stack.publisher.publish([
      ...turns(3, ['No, I said Saturday, not Friday', 'Saturday morning ferry please']),
      event('correction', 'The user corrected the travel day'),
    ]);
    await stack.waitUntilDrained();
    const prompts = stack.emulators.converse.requests
      .slice(asked)
      .flatMap((r) => r.messages?.flatMap((m) => m.content.map((c) => c.text ?? '')) ?? []);
    const second = prompts.find((p) => p.includes('## Your reflection'));
    expect(second).toContain('## Earlier diary entries');
    expect(second).toContain(first[0].reflection.insight);
    const entries = (await diary('?type=reflection')).entries as Result[];
    expect(entries.map((e) => e.trigger)).toEqual(['event:correction', 'event:error']);
    expect(entries[0].reflection.recommendation).toContain('earlier:');
  });

  it('entries are found by search when asked for (content type diary), never in an ordinary search; a person drops and keeps one, audited', async () => {
    const entry = ((await diary('?type=reflection')).entries as Result[]).find((e) => e.trigger === 'event:error');
    const id = `diary:${entry.id}`;
    const found = async (body: Record<string, unknown>) =>
      (
        (await call('POST', `${u(user)}/memory/search`, { query: 'ferry booking', limit: 20, ...body })).body
          .results as Result[]
      ).map((r) => r.id);
    expect(await found({ filters: { contentTypes: ['diary'] } })).toContain(id);
    expect(await found({})).not.toContain(id);

    const dropped = await call('POST', `${u(user)}/diary/${encodeURIComponent(entry.id)}`, {
      decision: 'drop',
      reason: 'not useful',
    });
    expect(dropped.body.entry).toMatchObject({
      visible: false,
      override: { decision: 'drop', by: 'local-admin', reason: 'not useful' },
    });
    expect((await diary()).entries.map((e: Result) => e.id)).not.toContain(entry.id);
    expect((await diary('?include=all')).entries.map((e: Result) => e.id)).toContain(entry.id);
    expect(await found({ filters: { contentTypes: ['diary'] } })).not.toContain(id);

    await call('POST', `${u(user)}/diary/${encodeURIComponent(entry.id)}`, { decision: 'keep' });
    expect(await found({ filters: { contentTypes: ['diary'] } })).toContain(id);
    expect((await audit(user, id)).map((e) => e.action)).toEqual(['diary_keep', 'diary_drop']);
    expect((await call('POST', `${u(user)}/diary/batch-999-999`, { decision: 'keep' })).status).toBe(404);
  });

  it('an event with no turn waiting reflects on its own detail (req R-EVT-1), and its entry is the newest', async () => {
    await stack.publisher.publish([event('error', 'The Naxos ferry operator cancelled every Saturday sailing')]);
    await stack.waitUntilDrained();
    const [batch] = (await call('GET', `${u(user)}/batches`)).body.batches as Result[];
    expect(batch).toMatchObject({
      trigger: 'event:error',
      status: 'completed',
      turns: [],
      eventOnly: { reason: expect.stringMatching(/^no turn was waiting/), material: ['detail'] },
    });
    const [entry] = (await diary('?type=reflection')).entries as Result[];
    expect(entry).toMatchObject({ id: batch.batchId, trigger: 'event:error', turns: [] });
    expect(entry.reflection.insight).toMatch(
      /^After error \(The Naxos ferry operator cancelled every Saturday sailing\), the event was about /,
    );
  });

  it('an entry written by hand is always written (seed 004 M3), newest, audited, searched, once however often sent', async () => {
    const text = 'Lesson: confirm ferry times with the operator before booking the hotel.';
    const first = await call('POST', `${u(user)}/diary`, { text });
    expect(first.status).toBe(200);
    expect(first.body.entry).toMatchObject({
      trigger: 'manual',
      type: 'observation',
      written: true,
      visible: true,
      turns: [],
      criteria: { user_signal: ['written by hand by local-admin'] },
    });
    const again = await call('POST', `${u(user)}/diary`, { text: `  ${text} ` });
    expect(again.body.entry.id).toBe(first.body.entry.id);
    const [newest] = (await diary()).entries as Result[];
    expect(newest.id).toBe(first.body.entry.id);
    const id = `diary:${first.body.entry.id}`;
    const hits = (
      await call('POST', `${u(user)}/memory/search`, {
        query: 'confirm ferry times',
        filters: { contentTypes: ['diary'] },
      })
    ).body.results as Result[];
    expect(hits.map((h) => h.id)).toContain(id);
    expect((await audit(user, id)).map((e) => e.action)).toEqual(['create']);
    expect((await call('POST', `${u(user)}/diary`, { text: ' ' })).body).toMatchObject({
      error: { fields: [expect.objectContaining({ path: 'body.text' })] },
    });
  });
});

describe('input times decide state, not processing times', () => {
  it("a batch reviewed days after its turns stages its items at its last turn's time, so the expiry sweep counts from the conversation", async () => {
    const user = 'late-user';
    const said = [
      'My dog is named Rex and he loves the beach.',
      'I went to Lisbon last spring with my sister.',
      'I work as a nurse at the city hospital.',
      'My sister Ana is a painter.',
      'I love hiking in the mountains.',
    ];
    const start = stack.now().getTime() - 3 * DAY;
    const turns = Array.from({ length: 10 }, (_, i) => ({
      type: 'turn.saved' as const,
      version: 1 as const,
      userId: user,
      sessionId: 's-old',
      turnId: i + 1,
      timestamp: new Date(start + i * 60_000).toISOString(),
      query: said[i % said.length] ?? '',
      response: 'Noted.',
    }));
    await stack.publisher.publish(turns);
    await stack.waitUntilDrained();
    const staged = (await call('GET', `${u(user)}/review/staged?includeDecided=true`)).body.staged as Result[];
    expect(staged.length).toBeGreaterThan(0);
    const lastTurnAt = turns.at(-1)?.timestamp;
    for (const s of staged) expect(s.history[0]).toMatchObject({ event: 'staged', at: lastTurnAt });
    const bucket = bucketReader(stack.info);
    // Each is its markdown under Knowledge_staging/ too (DESIGN.md, "State").
    expect((await bucket.list(`users/${user}/Knowledge_staging/`)).sort()).toEqual(
      staged.map((s) => `users/${user}/${s.path}`).sort(),
    );

    // 30 days after the last turn, the expiry sweep deletes them (no batch promoted them twice), their
    // objects with them, each deletion logged with its reason in the user's EXPIRYLOG#{day} item.
    await stack.advanceTo(new Date(Date.parse(String(lastTurnAt)) + 31 * DAY));
    expect((await call('GET', `${u(user)}/review/staged?includeDecided=true`)).body.staged).toEqual([]);
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        region: stack.info.region,
        credentials: stack.info.credentials,
        endpoint: stack.info.endpoints.dynamodb,
      }),
    );
    try {
      expect(await bucket.list(`users/${user}/Knowledge_staging/`)).toEqual([]);
      // The sweep function's DeleteObject of them was within its synthesized policy (infra/permissions.ts).
      expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['reflector', 'sweep']));
      expect(iamDenials(stack)).toEqual([]);
      const logs = await ddb.send(
        new QueryCommand({
          TableName: stack.info.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': `USER#${user}`, ':p': 'EXPIRYLOG#' },
        }),
      );
      const deletions = (logs.Items ?? []).flatMap((i) => i.deletions as Array<{ path: string; reason: string }>);
      expect(deletions.map((d) => d.path).sort()).toEqual(
        staged.map((s) => String(s.path).replace(/^Knowledge_staging\//, '')).sort(),
      );
      for (const d of deletions) expect(d.reason).toMatch(/more than 30 days ago, with promotion_count [01] < 2/);
      expect(await bucket.list(`users/${user}/Logs/`)).toEqual([]);
    } finally {
      ddb.destroy();
      bucket.destroy();
    }
  });
});
