/**
 * The memory API over HTTP on the local harness: the same handler API Gateway invokes, the
 * local JWT check standing in for the authorizer, data written by the real pipeline.
 */
import { readFileSync } from 'node:fs';
import { validate } from '@readme/openapi-parser';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MemoryClient } from '../../functions/api/client.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { functionsChecked, iamDenials } from '../helpers/iam.js';
import { mintToken } from '../../infra/local/tokens.js';
import { ledgerDelta, requestLedger } from '../../infra/local/request-ledger.js';
import { createDocumentClient, createDynamoDbClient } from '../../lib/kernel/aws-clients.adapter.js';
import { DynamoGraphStore } from '../../lib/graph/dynamo-graph-store.adapter.js';
import { bucketReader, localKnowledgeStore } from '../helpers/s3.js';
import { stagedDocuments } from '../../lib/knowledge/staging.js';
import { type Edge, type Entity, edgeId, neighbours } from '../../lib/graph/relation-graph.js';

const USER = 'locomo-conv-26';
let stack: LocalHarness;
let admin: string;

beforeAll(async () => {
  stack = await startHarness({ stage: 'apitest', logLevel: 'SILENT', speed: 300 });
  admin = stack.info.adminToken;
  const lines = readFileSync(new URL('../../events/samples/conversation.jsonl', import.meta.url), 'utf8').split('\n');
  await stack.replayLines(lines, { clock: true });
  await stack.waitUntilDrained();
  await stack.advanceTo(new Date(stack.now().getTime() + 24 * 3_600_000));
  await stack.waitUntilDrained();
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

async function call(method: string, path: string, options: { token?: string | null; body?: unknown } = {}) {
  const token = options.token === undefined ? admin : options.token;
  const res = await fetch(`${stack.info.apiUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(options.body !== undefined
      ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }
      : {}),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: test responses are inspected loosely
  return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as any };
}
const u = (user = USER) => `/v1/users/${encodeURIComponent(user)}`;
// biome-ignore lint/suspicious/noExplicitAny: loose result shape
type Result = any;

describe('memory.search (the fixed contract)', () => {
  it('answers {results} best first, each with id, kind, text, score, sourceTurns and attributes', async () => {
    const res = await call('POST', `${u()}/memory/search`, { body: { query: 'LGBTQ support group', limit: 10 } });
    expect(res.status).toBe(200);
    const results: Result[] = res.body.results;
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(10);
    for (const r of results) {
      expect(Object.keys(r)).toEqual(
        expect.arrayContaining(['id', 'kind', 'text', 'score', 'sourceTurns', 'attributes']),
      );
      expect(r.sourceTurns.length).toBeGreaterThan(0);
    }
    expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
    const turn = results.find((r) => r.kind === 'turn');
    expect(turn.id).toBe(`turn:${turn.sourceTurns[0]}`);
    expect(turn.attributes.dia_ids).toMatch(/^D\d+:\d+/);
    expect(results[0].text.toLowerCase()).toContain('support group');
    // A derived item carries the dia_ids of the turns it derives from.
    const derived = results.find((r) => r.kind !== 'turn');
    if (derived) expect(derived.attributes.dia_ids).toMatch(/D\d+:\d+/);
  });

  it('filters by kind, content type, scope, quality, freshness and topic', async () => {
    // A narrow query: a broad one ("Caroline Melanie painting support group kids") over three sessions
    // is answered by their three summaries alone, each standing for every turn it covers (a turn a
    // better summary covers is left out as redundant), so it would show one kind.
    const search = async (filters: Record<string, unknown>, query = 'Caroline support group') =>
      ((await call('POST', `${u()}/memory/search`, { body: { query, limit: 50, filters } })).body.results ??
        []) as Result[];
    const all = await search({});
    expect(new Set(all.map((r) => r.kind)).size).toBeGreaterThan(1);
    const turns = await search({ kind: ['turn'] });
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.every((r) => r.kind === 'turn')).toBe(true);
    const summaryText: string = (await call('GET', `${u()}/summaries`)).body.summaries[0].text;
    const summaries = await search({ contentTypes: ['summary'] }, summaryText.split(/\s+/).slice(0, 20).join(' '));
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.every((r) => r.contentTypes.includes('summary'))).toBe(true);
    const fresh = await search({ scope: ['new'] });
    expect(fresh.every((r) => r.scope === 'new')).toBe(true);
    const good = await search({ minQuality: 0.7 });
    expect(good.every((r) => r.quality >= 0.7)).toBe(true);
    expect(good.length).toBeLessThan(all.length);
    // The simulated clock stands a day after the last session (9 June 2023): two days back holds only that session.
    const recent = await search({ kind: ['turn'], maxAgeDays: 2 });
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThan(turns.length);
    expect(recent.every((r) => Date.parse(r.createdAt) >= stack.now().getTime() - 2 * 86_400_000)).toBe(true);
    const topic = await search({ topic: 'facts' });
    expect(topic.every((r) => r.primaryTopic === 'facts' || r.primaryTopic.startsWith('facts.'))).toBe(true);
  });

  it('leaves staged items out of a search unless it asks for them by kind (req R-STG-2: staging is not searched)', async () => {
    const { staged } = (await call('GET', `${u()}/review/staged`)).body;
    const item = staged[0] as Result;
    const query = String(item.text).split(/\s+/).slice(0, 25).join(' ');
    const search = async (filters?: Record<string, unknown>) =>
      ((await call('POST', `${u()}/memory/search`, { body: { query, limit: 50, ...(filters ? { filters } : {}) } }))
        .body.results ?? []) as Result[];
    expect((await search()).filter((r) => r.kind === 'staged')).toEqual([]);
    const asked = await search({ kind: ['staged'] });
    expect(asked.map((r) => r.id)).toContain(item.id);
    expect(asked.every((r) => r.kind === 'staged')).toBe(true);
  });

  it('says why each result ranked when asked (`explain: true`), and answers the same results either way', async () => {
    const body = { query: 'LGBTQ support group', limit: 10 };
    const plain = (await call('POST', `${u()}/memory/search`, { body })).body.results as Result[];
    const res = await call('POST', `${u()}/memory/search`, { body: { ...body, explain: true } });
    expect(res.status).toBe(200);
    const explained = res.body.results as Result[];
    expect(plain.length).toBeGreaterThan(0);
    expect(plain.some((r) => 'explain' in r)).toBe(false);
    expect(explained.map(({ explain: _e, ...r }) => r)).toEqual(plain);
    for (const r of explained) {
      expect(r.explain).toMatchObject({
        fused: expect.any(Number),
        quality: r.quality,
        recency: expect.any(Number),
        blend: expect.any(Number),
      });
      expect(r.explain.rankings.length).toBeGreaterThan(0);
      for (const p of r.explain.rankings)
        expect(p).toMatchObject({
          ranking: expect.stringMatching(/^(score|answer|window|summary|time|vector)$/),
          rank: expect.any(Number),
        });
    }
    // The best result matched the query's terms in some ranking (stemmed: support, group).
    const terms = explained[0].explain.rankings.flatMap((p: Result) => p.terms ?? []);
    expect(terms).toEqual(expect.arrayContaining(['support', 'group']));
    const bad = await call('POST', `${u()}/memory/search`, { body: { ...body, explain: 'yes' } });
    expect(bad.body.error.fields.map((f: Result) => f.path)).toEqual(['body.explain']);
  });

  it('answers nothing rather than noise when nothing matches, and names bad fields', async () => {
    expect(
      (await call('POST', `${u()}/memory/search`, { body: { query: 'zyxwvut quantum carburettor' } })).body.results,
    ).toEqual([]);
    const bad = await call('POST', `${u()}/memory/search`, { body: { limit: 1000, filters: { scope: ['everyone'] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.map((f: Result) => f.path)).toEqual(
      expect.arrayContaining(['body.query', 'body.limit', 'body.filters.scope.0']),
    );
    expect((await call('POST', `${u()}/memory/search`, { body: '{not json' })).body.error.fields[0].path).toBe('body');
  });
});

describe('summaries on demand (req R-SUM-9 manual reflection)', () => {
  it("writes a summary now with the caller's prompt, once however often it is asked", async () => {
    const prompt = 'Say in one sentence what the user said about painting.';
    const first = await call('POST', `${u()}/summaries`, { body: { prompt } });
    expect(first.status).toBe(200);
    expect(first.body.jobId).toMatch(/^manual-\d+-\d+-[0-9a-f]{8}$/);
    expect(first.body.turnIds.length).toBeGreaterThan(0);
    expect((await call('POST', `${u()}/summaries`, { body: { prompt } })).body.jobId).toBe(first.body.jobId);
    await stack.waitUntilDrained();
    const mine = (await call('GET', `${u()}/summaries`)).body.summaries.filter(
      (s: Result) => s.id === first.body.jobId,
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ kind: 'manual', sourceTurns: first.body.turnIds });
    // The pair's system part is the instruction the model was given: the caller's. Its document is rendered from the record (no S3 object).
    expect(mine[0].markdown).toContain(`## system\n\n${prompt}\n\n## assistant`);
    const bucket = bucketReader(stack.info);
    try {
      expect(await bucket.list(`users/${USER}/summaries/`)).not.toContain(
        `users/${USER}/summaries/${first.body.jobId}.md`,
      );
    } finally {
      bucket.destroy();
    }
    const audit = (await call('GET', `${u()}/memory/audit?itemId=${encodeURIComponent(`summary:${first.body.jobId}`)}`))
      .body.entries;
    expect(audit[0]).toMatchObject({ action: 'summary_request' });
    expect((await call('POST', `${u()}/summaries`, { body: { prompt: '' } })).status).toBe(400);
    expect((await call('POST', `${u()}/summaries`, { body: { reflect: 'yes' } })).body.error.fields[0].path).toBe(
      'body.reflect',
    );
    expect((await call('POST', `${u('nobody-here')}/summaries`, { body: {} })).status).toBe(409);
  });
});

describe('reflection on demand', () => {
  it('with `reflect`, a batch reflection over the turns no batch has taken runs beside the summary', async () => {
    const user = 'on-demand-user';
    const turns = [1, 2, 3].map((turnId) => ({
      type: 'turn.saved' as const,
      version: 1 as const,
      userId: user,
      sessionId: 's1',
      turnId,
      timestamp: `2026-02-06T14:0${turnId}:00Z`,
      query: `I am rebuilding the reef tank sump, part ${turnId}.`,
      response: 'Tell me more.',
    }));
    await stack.publisher.publish(turns);
    await stack.waitUntilDrained();
    expect((await call('GET', `${u(user)}/batches`)).body.batches).toEqual([]);
    const asked = await call('POST', `${u(user)}/summaries`, {
      body: { prompt: 'What is the user building?', reflect: true },
    });
    expect(asked.body).toMatchObject({
      jobId: expect.stringMatching(/^manual-1-3-/),
      turnIds: [1, 2, 3],
      reflect: true,
    });
    await stack.waitUntilDrained();
    const [batch] = (await call('GET', `${u(user)}/batches`)).body.batches;
    expect(batch).toMatchObject({ trigger: 'event:user_request', status: 'completed', turns: [1, 2, 3] });
    expect((await call('GET', `${u(user)}/summaries`)).body.summaries.map((s: Result) => s.id)).toContain(
      asked.body.jobId,
    );
    // Asked again with every turn reflected on: no reflection, and the answer says why (req R-SUM-9).
    const again = await call('POST', `${u(user)}/summaries`, { body: { reflect: true } });
    expect(again.body).toMatchObject({
      turnIds: [1, 2, 3],
      reflect: false,
      reason: expect.stringMatching(/^no turn is waiting for a reflection/),
    });
    await stack.waitUntilDrained();
    expect((await call('GET', `${u(user)}/batches`)).body.batches).toHaveLength(1);
  });
});

describe('summaries as turn pairs', () => {
  it('lists each summary with its place and both messages, and keeps an edit in its record', async () => {
    const [first] = (await call('GET', `${u()}/summaries`)).body.summaries as Result[];
    expect(first.afterTurn).toBe(Math.max(...first.sourceTurns));
    expect(first.messages).toEqual([
      { role: 'system', reflection: true, text: first.prompt },
      { role: 'assistant', reflection: true, text: first.text },
    ]);
    const edited = await call('POST', `${u()}/summaries/${encodeURIComponent(first.id)}`, {
      body: { text: 'Caroline and Melanie talked about a support group.', reason: 'shorter' },
    });
    expect(edited.body.summary).toMatchObject({
      text: 'Caroline and Melanie talked about a support group.',
      edits: [{ by: 'local-admin', previous: first.text, reason: 'shorter' }],
    });
    const item = (await call('POST', `${u()}/memory/retrieve`, { body: { id: `summary:${first.id}` } })).body.item;
    expect(item).toMatchObject({
      text: 'Caroline and Melanie talked about a support group.',
      pair: {
        afterTurn: first.afterTurn,
        messages: [
          { role: 'system' },
          { role: 'assistant', text: 'Caroline and Melanie talked about a support group.' },
        ],
      },
    });
    // The document as rendered from the edited record (no S3 object to rewrite).
    expect(edited.body.summary.markdown).toMatch(
      /edited: 1[\s\S]*## assistant\n\nCaroline and Melanie talked about a support group\.\n$/,
    );
    expect((await call('POST', `${u()}/summaries/no-such-summary`, { body: { text: 'x' } })).status).toBe(404);
    expect(
      (await call('POST', `${u()}/summaries/${encodeURIComponent(first.id)}`, { body: { text: '' } })).status,
    ).toBe(400);
  });
});

describe('summaries: soft-deleted items never come back', () => {
  it('a deleted summary is gone from search, retrieve, tier queries and the default listing', async () => {
    const { summaries } = (await call('GET', `${u()}/summaries`)).body;
    expect(summaries.length).toBeGreaterThan(0);
    const victim = summaries[0];
    const id = `summary:${victim.id}`;
    const query = victim.text.split(/\s+/).slice(0, 12).join(' ');
    const quality = async () => (await call('GET', `${u()}/summaries/quality`)).body.quality;
    const start = await quality();
    const before = (await call('POST', `${u()}/memory/search`, { body: { query, limit: 50 } })).body
      .results as Result[];
    expect(before.map((r) => r.id)).toContain(id);
    // Req R-SUM-10's quality metrics: a summary returned to an agent is resurrected once more.
    const found = await quality();
    expect(found.resurrections).toBe(start.resurrections + before.filter((r) => r.kind === 'summary').length);
    expect(found.resurrected).toBeGreaterThanOrEqual(1);
    expect(found.topics.length).toBeGreaterThan(0);

    expect((await call('DELETE', `${u()}/summaries/${encodeURIComponent(victim.id)}`)).body).toEqual({
      id: victim.id,
      deleted: true,
    });
    const after = (await call('POST', `${u()}/memory/search`, { body: { query, limit: 50 } })).body.results as Result[];
    expect(after.map((r) => r.id)).not.toContain(id);
    expect((await call('POST', `${u()}/memory/retrieve`, { body: { id } })).status).toBe(404);
    expect(
      (await call('GET', `${u()}/memory/tiers/long_term?kind=summary`)).body.items.map((i: Result) => i.id),
    ).not.toContain(id);
    expect((await call('GET', `${u()}/summaries`)).body.summaries.map((s: Result) => s.id)).not.toContain(victim.id);
    const kept = (await call('GET', `${u()}/summaries?includeDeleted=true`)).body.summaries.find(
      (s: Result) => s.id === victim.id,
    );
    expect(kept).toMatchObject({ deleted: true });
    const audit = (await call('GET', `${u()}/memory/audit?itemId=${encodeURIComponent(id)}`)).body.entries;
    expect(audit[0]).toMatchObject({ action: 'summary_delete', actor: 'local-admin' });
    // Deleted, counted as such, and never given back since.
    expect(await quality()).toMatchObject({ deleted: start.deleted + 1, resurrectionsOfDeleted: 0 });
  });
});

describe('memory.save: candidates are committed only when the turn is APPROVE', () => {
  it('discards on FAIL, REVISE and RETRY, commits on APPROVE, and the turn’s stored outcome wins', async () => {
    for (const validation of ['FAIL', 'REVISE', 'RETRY']) {
      const res = await call('POST', `${u()}/memory/save`, {
        body: {
          validation,
          candidates: [{ text: `User prefers decaf oolong tea (${validation})`, type: 'preference' }],
        },
      });
      expect(res.body).toMatchObject({ committed: [], discarded: 1 });
      expect(res.body.reason).toContain(validation);
    }
    const missing = await call('POST', `${u()}/memory/save`, { body: { candidates: [{ text: 'no outcome given' }] } });
    expect(missing.body.committed).toEqual([]);
    const none = (await call('POST', `${u()}/memory/search`, { body: { query: 'decaf oolong tea' } })).body.results;
    expect(none).toEqual([]);

    const ok = await call('POST', `${u()}/memory/save`, {
      body: {
        validation: 'APPROVE',
        turnId: 3,
        candidates: [{ text: 'User prefers decaf oolong tea in the evening', type: 'preference' }],
      },
    });
    expect(ok.body.committed).toHaveLength(1);
    expect(ok.body.committed[0]).toMatchObject({
      kind: 'memory',
      scope: 'new',
      tier: 'long_term',
      contentTypes: ['preference'],
      sourceTurns: [3],
    });
    expect(ok.body.committed[0].attributes.dia_ids).toMatch(/^D1:/);
    expect(ok.body.committed[0].expiresAt).not.toBeNull();
    const found = (await call('POST', `${u()}/memory/search`, { body: { query: 'decaf oolong tea' } })).body.results;
    expect(found[0]).toMatchObject({ id: ok.body.committed[0].id, kind: 'memory' });
    // Saving the same candidate again (a retry) does not make a second item.
    const again = await call('POST', `${u()}/memory/save`, {
      body: {
        validation: 'APPROVE',
        turnId: 3,
        candidates: [{ text: 'User prefers decaf oolong tea in the evening', type: 'preference' }],
      },
    });
    expect(again.body.committed[0].id).toBe(ok.body.committed[0].id);
    expect(
      (
        await call('POST', `${u()}/memory/search`, { body: { query: 'decaf oolong tea', limit: 50 } })
      ).body.results.filter((r: Result) => r.kind === 'memory'),
    ).toHaveLength(1);
  });

  it('discards a candidate holding a URL or a price, audited, and commits the rest (req R-CAND-2)', async () => {
    const res = await call('POST', `${u()}/memory/save`, {
      body: {
        validation: 'APPROVE',
        turnId: 4,
        candidates: [
          { text: 'User compares kettles at https://shop.example/kettles?page=2', type: 'fact' },
          { text: 'The gooseneck kettle costs €89 this week', type: 'fact' },
          { text: 'User brews green tea at 80 degrees', type: 'preference' },
        ],
      },
    });
    expect(res.body).toMatchObject({ discarded: 2 });
    expect(res.body.committed.map((c: { text: string }) => c.text)).toEqual(['User brews green tea at 80 degrees']);
    expect(res.body.reason).toBe('candidate 1 holds a URL; candidate 2 holds a price');
    const audit = (await call('GET', `${u()}/memory/audit?itemId=${encodeURIComponent('turn:4')}`)).body.entries;
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'discard_candidates',
        reason: 'candidate 1 holds a URL; candidate 2 holds a price',
        note: expect.stringContaining('2 of 3 candidate(s): transient data'),
      }),
    ]);
  });

  it('a turn stored with FAIL cannot have its candidates committed by claiming APPROVE', async () => {
    const user = 'api-failed-turn';
    await stack.replayLines([
      JSON.stringify({
        type: 'turn.saved',
        version: 1,
        userId: user,
        sessionId: 's',
        turnId: 1,
        timestamp: stack.now().toISOString(),
        query: 'Book the flight',
        response: 'Done',
        signals: { validation: 'FAIL' },
      }),
    ]);
    await stack.waitUntilDrained();
    const res = await call('POST', `${u(user)}/memory/save`, {
      body: { turnId: 1, validation: 'APPROVE', candidates: [{ text: 'User flies business class' }] },
    });
    expect(res.body).toMatchObject({ committed: [], discarded: 1 });
    expect(res.body.reason).toContain('FAIL');
  });
});

describe('tiers: TTL, promotion and demotion with an audit trail', () => {
  it('promotes and demotes with reasons, each move audited (who, what, when, why)', async () => {
    const created = await call('POST', `${u()}/memory/tiers/short_term`, {
      body: { text: 'Melanie is planning a camping trip with the kids', type: 'conversation', sessionId: 's-9' },
    });
    expect(created.body).toMatchObject({ created: true, item: { tier: 'short_term', status: 'short_term' } });
    const id: string = created.body.item.id;
    // Req R-TIER-2: short-term conversation entries live one hour.
    expect(Date.parse(created.body.item.expiresAt) - Date.parse(created.body.item.createdAt)).toBe(3_600_000);
    const up = await call('POST', `${u()}/memory/items/${encodeURIComponent(id)}/promote`, {
      body: { reason: 'mentioned in three sessions' },
    });
    expect(up.body.item).toMatchObject({ tier: 'long_term', status: 'canonical', expiresAt: null });
    expect((await call('POST', `${u()}/memory/items/${encodeURIComponent(id)}/promote`, { body: {} })).status).toBe(
      409,
    );
    const down = await call('POST', `${u()}/memory/items/${encodeURIComponent(id)}/demote`, {
      body: { reason: 'contradiction', note: 'the trip was cancelled' },
    });
    expect(down.body.item).toMatchObject({ tier: 'short_term' });
    expect(
      (await call('POST', `${u()}/memory/items/${encodeURIComponent(id)}/demote`, { body: { reason: 'because' } })).body
        .error.fields[0].path,
    ).toBe('body.reason');

    const entries = (await call('GET', `${u()}/memory/audit?itemId=${encodeURIComponent(id)}`)).body
      .entries as Result[];
    expect(entries.map((e) => e.action)).toEqual(['demote', 'promote', 'create']);
    expect(entries[0]).toMatchObject({
      actor: 'local-admin',
      from: 'long_term',
      to: 'short_term',
      reason: 'contradiction',
      note: 'the trip was cancelled',
    });
    expect(entries[1]).toMatchObject({ from: 'short_term', to: 'long_term', reason: 'mentioned in three sessions' });
    expect(entries.every((e) => typeof e.at === 'string' && e.userId === USER)).toBe(true);
  });

  it('contradicts an entry (−0.3, below its floor one tier down, audited), counts evidence once, and undoes it (req R-TIER-8)', async () => {
    const created = await call('POST', `${u()}/memory/tiers/long_term`, {
      body: { text: 'Caroline lives in Lisbon', confidence: 0.9 },
    });
    const path = `${u()}/memory/items/${encodeURIComponent(created.body.item.id as string)}`;
    const first = await call('POST', `${path}/contradict`, { body: { evidence: 'turn:7', note: 'she moved' } });
    expect(first.body.item).toMatchObject({ tier: 'long_term', confidence: 0.6 });
    expect((await call('POST', `${path}/contradict`, { body: { evidence: 'turn:7' } })).body.item).toMatchObject({
      confidence: 0.6,
    });
    const second = await call('POST', `${path}/contradict`, { body: { evidence: 'turn:8' } });
    expect(second.body.item).toMatchObject({ tier: 'short_term', status: 'short_term', confidence: 0.3 });
    const undone = await call('POST', `${path}/contradict/undo`);
    expect(undone.body.item).toMatchObject({
      tier: 'long_term',
      status: 'canonical',
      confidence: 0.6,
      expiresAt: null,
    });
    expect((await call('POST', `${path}/contradict/undo`)).body.item).toMatchObject({ confidence: 0.9 });
    expect((await call('POST', `${path}/contradict/undo`)).status).toBe(409);
    const entries = (
      await call('GET', `${u()}/memory/audit?itemId=${encodeURIComponent(created.body.item.id as string)}`)
    ).body.entries as Result[];
    expect(entries.map((e) => e.action)).toEqual([
      'undo_contradict',
      'undo_contradict',
      'demote',
      'contradict',
      'create',
    ]);
    expect(entries[2]).toMatchObject({
      from: 'long_term',
      to: 'short_term',
      reason: 'contradiction',
      actor: 'local-admin',
    });
    expect(entries[3]).toMatchObject({ from: '0.9', to: '0.6', note: 'she moved' });
  });

  it('redacts a secret in what a request would store, as a turn is', async () => {
    const created = await call('POST', `${u()}/memory/tiers/long_term`, {
      body: { text: 'The deploy key is AKIAZXCVBNMASDFGHJKL, rotate it monthly' },
    });
    expect(created.body.item.text).toBe('The deploy key is [redacted:aws_access_key], rotate it monthly');
    const read = await call('GET', `${u()}/memory/tiers/long_term`);
    expect(JSON.stringify(read.body)).not.toContain('AKIAZXCVBNMASDFGHJKL');
  });

  it('short-lived items vanish from every read once their TTL has passed', async () => {
    const created = await call('POST', `${u()}/memory/tiers/ephemeral`, {
      body: { text: 'The user is looking at a red kayak right now', ttlSeconds: 60, sessionId: 's-kayak' },
    });
    const id: string = created.body.item.id;
    const inTier = async () => (await call('GET', `${u()}/memory/tiers/ephemeral`)).body.items.map((i: Result) => i.id);
    expect(await inTier()).toContain(id);
    expect(
      (await call('POST', `${u()}/memory/search`, { body: { query: 'red kayak', sessionId: 's-kayak' } })).body
        .results[0]?.id,
    ).toBe(id);
    expect(Date.parse(created.body.item.expiresAt) - Date.parse(created.body.item.createdAt)).toBe(60_000);
    await stack.advanceTo(new Date(Date.parse(created.body.item.expiresAt) + 1000));
    expect(await inTier()).not.toContain(id);
    expect(
      (await call('POST', `${u()}/memory/search`, { body: { query: 'red kayak', sessionId: 's-kayak' } })).body.results,
    ).toEqual([]);
    expect((await call('POST', `${u()}/memory/retrieve`, { body: { id } })).status).toBe(404);
  });

  it('an ephemeral entry is found by a search in its own session only, over HTTP and MCP (req R-TIER-1)', async () => {
    const created = await call('POST', `${u()}/memory/tiers/ephemeral`, {
      body: { text: 'The user is weighing a teal canoe against a yellow one', sessionId: 's-canoe-a' },
    });
    const id: string = created.body.item.id;
    const found = async (extra: Record<string, unknown>) =>
      (
        await call('POST', `${u()}/memory/search`, { body: { query: 'teal canoe yellow', minSimilarity: 0, ...extra } })
      ).body.results.map((r: Result) => r.id);
    expect(await found({ sessionId: 's-canoe-a' })).toContain(id);
    expect(await found({ sessionId: 's-canoe-b' })).not.toContain(id);
    expect(await found({})).not.toContain(id);
    // Asking for the tier by name does not widen it.
    expect(await found({ filters: { tier: ['ephemeral'] } })).toEqual([]);
    expect(await found({ filters: { tier: ['ephemeral'] }, sessionId: 's-canoe-b' })).toEqual([]);
    const mcp = new Client({ name: 'api-test', version: '1' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.info.apiUrl}/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${admin}` } },
      }),
    );
    try {
      const viaMcp = async (sessionId?: string) => {
        const r = await mcp.callTool({
          name: 'memory_search',
          arguments: { userId: USER, query: 'teal canoe yellow', ...(sessionId ? { sessionId } : {}) },
        });
        return JSON.parse((r as Result).content[0].text).results.map((x: Result) => x.id);
      };
      expect(await viaMcp('s-canoe-a')).toContain(id);
      expect(await viaMcp()).not.toContain(id);
    } finally {
      await mcp.close();
    }
    // The owner's readers fetch it by id from anywhere (docs/memory-api.md, "Search": sessions are not a credential boundary).
    expect((await call('POST', `${u()}/memory/retrieve`, { body: { id } })).body.item).toMatchObject({
      id,
      tier: 'ephemeral',
      sessionId: 's-canoe-a',
    });
    const bad = await call('POST', `${u()}/memory/search`, { body: { query: 'canoe', sessionId: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.map((f: Result) => f.path)).toEqual(['body.sessionId']);
  });

  it('trust follows validation outcomes: APPROVE up to USER scope, FAIL down to NEW, REVISE nothing', async () => {
    const saved = await call('POST', `${u()}/memory/save`, {
      body: { validation: 'APPROVE', candidates: [{ text: 'User keeps a sourdough starter called Bubbles' }] },
    });
    const id: string = saved.body.committed[0].id;
    const outcome = async (validation: string) =>
      (await call('POST', `${u()}/memory/outcomes`, { body: { ids: [id, 'turn:1'], validation } })).body;
    expect((await outcome('REVISE')).changes[0]).toMatchObject({ trustFrom: 0.5, trustTo: 0.5, scopeTo: 'new' });
    await outcome('APPROVE');
    const up = await outcome('APPROVE');
    expect(up.changes[0]).toMatchObject({ trustTo: 0.7, scopeFrom: 'new', scopeTo: 'user' });
    // A turn's trust moves too (its trust record: docs/memory-api.md, "Trust"); its scope is its store's.
    expect(up.changes[1]).toMatchObject({ id: 'turn:1', scopeFrom: 'user', scopeTo: 'user' });
    expect(up.skipped).toEqual([]);
    expect((await call('POST', `${u()}/memory/retrieve`, { body: { id } })).body.item).toMatchObject({
      scope: 'user',
      expiresAt: null,
    });
    await outcome('FAIL');
    const down = await outcome('FAIL');
    expect(down.changes[0]).toMatchObject({ scopeFrom: 'user', scopeTo: 'new' });
    const actions = (await call('GET', `${u()}/memory/audit?itemId=${encodeURIComponent(id)}`)).body.entries.map(
      (e: Result) => e.action,
    );
    expect(actions).toEqual(['scope_down', 'trust', 'scope_up', 'trust', 'trust', 'commit']);
  });
});

describe('relation graph', () => {
  it("holds the edges reflections found, takes a user's edge, lists neighbours and the hygiene log", async () => {
    const batches = (await call('GET', `${u()}/batches?limit=100`)).body.batches as Result[];
    expect(batches.length).toBeGreaterThan(0);
    const created = await call('POST', `${u()}/graph/edges`, {
      body: { from: 'The Reef Tank', relation: 'contains', to: 'Clownfish', note: 'the user said so' },
    });
    expect(created.status).toBe(200);
    expect(created.body.edge).toMatchObject({ id: 'reef_tank|contains|clownfish', userCreated: true, confidence: 0.9 });
    const around = await call('GET', `${u()}/graph/entities/${encodeURIComponent('reef tanks')}/neighbours`);
    expect(around.body).toMatchObject({
      entity: 'reef_tank',
      neighbours: [expect.objectContaining({ entity: 'clownfish', relation: 'contains', direction: 'out' })],
    });
    expect((await call('GET', `${u()}/graph/log?limit=5`)).status).toBe(200);
    expect(
      (await call('POST', `${u()}/graph/edges/restore`, { body: { id: 'reef_tank|contains|clownfish' } })).status,
    ).toBe(409);
    expect((await call('POST', `${u()}/graph/entities/clownfish/split`)).status).toBe(409);
    // Fact hygiene's restore: only a pruned fact comes back; the body names its field when wrong.
    const missing = await call('POST', `${u()}/knowledge/restore`, {
      body: { path: 'Knowledge/Facts/never_there.md' },
    });
    expect(missing.status).toBe(404);
    expect((await call('POST', `${u()}/knowledge/restore`, { body: { fact: 'x' } })).body).toMatchObject({
      error: { fields: expect.arrayContaining([expect.objectContaining({ path: 'body.path' })]) },
    });
    const bad = await call('POST', `${u()}/graph/edges`, { body: { from: 'x', relation: 'is', to: 'X' } });
    expect(bad.status).toBe(400);
  });
});

describe('authorisation', () => {
  it('a user-scoped credential reads and writes its own user only, and GLOBAL only reads', async () => {
    const mine = await stack.mintUserToken([USER]);
    expect((await call('POST', `${u()}/memory/search`, { token: mine, body: { query: 'support group' } })).status).toBe(
      200,
    );
    expect(
      (await call('POST', `${u()}/memory/tiers/short_term`, { token: mine, body: { text: 'my own note' } })).status,
    ).toBe(200);
    for (const [method, path, body] of [
      ['POST', `${u('someone-else')}/memory/search`, { query: 'support group' }],
      ['POST', `${u('someone-else')}/memory/tiers/short_term`, { text: 'planted' }],
      ['GET', `${u('someone-else')}/summaries`, undefined],
      ['POST', `${u('GLOBAL')}/memory/tiers/long_term`, { text: 'everyone should see this' }],
      ['POST', `${u('GLOBAL')}/memory/save`, { validation: 'APPROVE', candidates: [{ text: 'global fact' }] }],
    ] as const) {
      const res = await call(method, path, { token: mine, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect(
      (await call('POST', `${u('GLOBAL')}/memory/search`, { token: mine, body: { query: 'anything' } })).status,
    ).toBe(200);
  });

  it('no credential, a forged one or an expired one gets 401', async () => {
    expect((await call('POST', `${u()}/memory/search`, { token: null, body: { query: 'x' } })).status).toBe(401);
    const forged = await mintToken('not-the-secret', { sub: 'mallory', admin: true });
    expect((await call('POST', `${u()}/memory/search`, { token: forged, body: { query: 'x' } })).status).toBe(401);
    const expired = await mintToken(stack.info.tokenSecret, { sub: 'late', users: [USER] }, -10);
    expect((await call('POST', `${u()}/memory/search`, { token: expired, body: { query: 'x' } })).status).toBe(401);
  });

  it('only an administrator shares an item with every user (GLOBAL), and users then find it', async () => {
    const created = (
      await call('POST', `${u()}/memory/tiers/long_term`, {
        body: { text: 'Pottery glazes need a second firing at cone six' },
      })
    ).body.item;
    const path = `${u()}/memory/items/${encodeURIComponent(created.id)}/promote`;
    expect(
      (await call('POST', path, { token: await stack.mintUserToken([USER]), body: { to: 'global' } })).status,
    ).toBe(403);
    expect(
      (await call('POST', path, { body: { to: 'global', reason: 'useful to everyone' } })).body.item,
    ).toMatchObject({ userId: 'GLOBAL', scope: 'global' });
    const other = await stack.mintUserToken(['another-user']);
    const hits = (
      await call('POST', `${u('another-user')}/memory/search`, {
        token: other,
        body: { query: 'pottery glazes firing' },
      })
    ).body.results;
    expect(hits[0]).toMatchObject({ id: created.id, userId: 'GLOBAL', scope: 'global' });
  });
});

describe('graph neighbours read by adjacency', () => {
  const GRAPH_USER = 'graph-neighbours';
  const edge = (from: string, relation: string, to: string): Edge => ({
    id: edgeId(from, relation, to),
    from,
    relation,
    to,
    baseConfidence: 0.7,
    confidence: 0.7,
    verifiedAt: '2026-01-01T00:00:00.000Z',
    createdAt: '2026-01-01T00:00:00.000Z',
    status: 'active',
    userCreated: false,
    provenance: [],
  });
  const entity = (key: string, mergedInto?: string): Entity => ({
    key,
    label: key,
    createdAt: '2026-01-01T00:00:00.000Z',
    userCreated: false,
    ...(mergedInto ? { mergedInto } : {}),
  });
  const unrelated = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => edge(`x${from + i}`, 'near', `y${from + i}`));
  const readUnits = async (path: string) => {
    const before = requestLedger.snapshot();
    const res = await call('GET', path);
    const d = ledgerDelta(before, requestLedger.snapshot());
    return {
      body: res.body,
      units: Object.entries(d)
        .filter(([k]) => k.startsWith('DynamoDB.'))
        .reduce((n, [, v]) => n + v.readUnits, 0),
    };
  };

  it('finds edges out and in, through aliases and merge chains, reading the same whatever else the graph holds', async () => {
    const graph = new DynamoGraphStore({
      ddb: createDocumentClient(createDynamoDbClient()),
      tableName: stack.info.tableName,
    });
    // a2 was merged into a (its edges are a's); b was merged into bb (a's neighbour shows as bb).
    await graph.apply(GRAPH_USER, {
      edges: [
        edge('a', 'likes', 'b'),
        edge('c', 'knows', 'a'),
        edge('a2', 'owns', 'd'),
        edge('e', 'near', 'a2'),
        ...unrelated(0, 20),
      ],
      entities: [
        entity('a'),
        entity('a2', 'a'),
        entity('b', 'bb'),
        entity('bb'),
        entity('c'),
        entity('d'),
        entity('e'),
      ],
    });
    const path = `${u(GRAPH_USER)}/graph/entities/a2/neighbours`;
    const first = await readUnits(path);
    expect(first.body.entity).toBe('a');
    expect(first.body.aliases).toEqual(['a2']);
    expect(first.body.neighbours.map((n: Result) => [n.entity, n.relation, n.direction]).sort()).toEqual([
      ['bb', 'likes', 'out'],
      ['c', 'knows', 'in'],
      ['d', 'owns', 'out'],
      ['e', 'near', 'in'],
    ]);
    // The same answer the whole graph gives.
    const whole = await graph.load(GRAPH_USER);
    expect(first.body).toEqual(
      JSON.parse(
        JSON.stringify(neighbours('a2', whole.edges, new Map(whole.entities.map((e) => [e.key, e])), stack.now())),
      ),
    );
    await graph.apply(GRAPH_USER, { edges: unrelated(20, 400) });
    const again = await readUnits(path);
    expect(again.body).toEqual(first.body);
    expect(again.units).toBe(first.units);
  });
});

describe('review of staged items', () => {
  it('lists staged items with gate history, promotes one to Knowledge and discards another for good', async () => {
    const { staged } = (await call('GET', `${u()}/review/staged`)).body;
    expect(staged.length).toBeGreaterThanOrEqual(2);
    expect(staged[0].history[0]).toMatchObject({ event: 'staged', batchId: expect.stringMatching(/^batch-/) });
    expect(staged[0].history[0].detail).toContain('drift_guard');
    const [a, b] = staged;
    const promoted = await call('POST', `${u()}/review/promote`, { body: { path: a.path } });
    expect(promoted.body.knowledgePath).toMatch(/\.md$/);
    const knowledge = (
      await call('POST', `${u()}/memory/retrieve`, { body: { path: `Knowledge/${promoted.body.knowledgePath}` } })
    ).body.item;
    expect(knowledge).toMatchObject({ kind: 'knowledge', status: 'canonical', text: a.text });
    const discarded = await call('POST', `${u()}/review/discard`, {
      body: { path: b.path, reason: 'not about the user' },
    });
    expect(discarded.body.status).toBe('discarded');
    const left = (await call('GET', `${u()}/review/staged`)).body.staged.map((s: Result) => s.path);
    expect(left).not.toContain(a.path);
    expect(left).not.toContain(b.path);
    const decided = (await call('GET', `${u()}/review/staged?includeDecided=true`)).body.staged.find(
      (s: Result) => s.path === b.path,
    );
    expect(decided).toMatchObject({
      status: 'discarded',
      review: { decision: 'discarded', by: 'local-admin', reason: 'not about the user' },
    });
    expect((await call('POST', `${u()}/memory/retrieve`, { body: { id: b.id } })).status).toBe(404);
  });

  it('pages the review list: a page reads at most `limit` records, the pages together are the whole list', async () => {
    const whole = (await call('GET', `${u()}/review/staged?includeDecided=true&limit=200`)).body;
    expect(whole.nextToken).toBeUndefined();
    expect(whole.staged.length).toBeGreaterThanOrEqual(2);
    const paths: string[] = [];
    let token: string | undefined;
    for (let page = 0; page <= whole.staged.length; page++) {
      const res = (
        await call(
          'GET',
          `${u()}/review/staged?includeDecided=true&limit=1${token ? `&nextToken=${encodeURIComponent(token)}` : ''}`,
        )
      ).body;
      expect(res.staged.length).toBeLessThanOrEqual(1);
      paths.push(...res.staged.map((s: Result) => s.path));
      token = res.nextToken;
      if (!token) break;
    }
    expect(token).toBeUndefined();
    expect(paths).toEqual(whole.staged.map((s: Result) => s.path));
    expect((await call('GET', `${u()}/review/staged?nextToken=bm90LWEtdG9rZW4`)).status).toBe(400);
  });
});

describe("MCP: the memory API as tools, through the SDK's own client", () => {
  const connect = async (token: string) => {
    const client = new Client({ name: 'api-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.info.apiUrl}/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  };
  const parsed = (r: Result) => JSON.parse(r.content[0].text);

  it("lists the five tools with the contract's input schemas and answers as the HTTP API does", async () => {
    const client = await connect(admin);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'memory_forget',
        'memory_forget_item',
        'memory_retrieve',
        'memory_save',
        'memory_search',
      ]);
      const search = tools.find((t) => t.name === 'memory_search');
      expect(Object.keys(search?.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(['userId', 'query', 'limit']),
      );
      // The HTTP side through the typed client.
      const http = new MemoryClient(stack.info.apiUrl, () => admin);
      const viaMcp = parsed(
        await client.callTool({
          name: 'memory_search',
          arguments: { userId: USER, query: 'camping with the kids', limit: 5 },
        }),
      );
      const viaHttp = await http.search(USER, { query: 'camping with the kids', limit: 5 });
      expect(viaMcp.results.length).toBeGreaterThan(0);
      expect(viaMcp).toEqual(viaHttp);
      const first = viaHttp.results[0] as { id: string };
      expect(
        parsed(await client.callTool({ name: 'memory_retrieve', arguments: { userId: USER, id: first.id } })),
      ).toEqual(await http.retrieve(USER, { id: first.id }));

      const created = await http.tiers.create(USER, 'short_term', { text: 'a note to forget through MCP' });
      const gone = await client.callTool({
        name: 'memory_forget_item',
        arguments: { userId: USER, id: created.item.id },
      });
      expect(gone.isError).toBeFalsy();
      await expect(http.retrieve(USER, { id: created.item.id })).rejects.toMatchObject({
        name: 'MemoryClientError',
        status: 404,
      });
      await expect(http.search(USER, { query: '' })).rejects.toMatchObject({
        status: 400,
        fields: [{ path: 'body.query' }],
      });
      const bad = await client.callTool({ name: 'memory_retrieve', arguments: { userId: USER } });
      expect(bad.isError).toBe(true);
      expect(parsed(bad).error.fields[0].path).toBe('body.id');
    } finally {
      await client.close();
    }
  });

  it("a token for one user cannot reach another's memory through MCP, and no token is refused", async () => {
    const client = await connect(await stack.mintUserToken(['another-user']));
    try {
      for (const [name, args] of [
        ['memory_search', { query: 'camping' }],
        ['memory_retrieve', { id: 'mem:anything' }],
        ['memory_save', { candidates: [{ text: 'planted' }] }],
        ['memory_forget_item', { id: 'mem:anything' }],
        ['memory_forget_item', { id: 'turn:1' }],
        ['memory_forget', { turns: [1], dryRun: false }],
      ] as const) {
        const r = await client.callTool({ name, arguments: { userId: USER, ...args } });
        expect(r.isError, name).toBe(true);
        expect(parsed(r).error.message, name).toMatch(/not allowed|may not|forbidden|access/i);
      }
    } finally {
      await client.close();
    }
    const anonymous = await fetch(`${stack.info.apiUrl}/v1/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
    expect(
      (
        await fetch(`${stack.info.apiUrl}/v1/mcp`, {
          headers: { authorization: `Bearer ${admin}`, accept: 'text/event-stream' },
        })
      ).status,
    ).toBe(405);
  });
});

describe('corrections', () => {
  it('a promoted correction changes the fact it targets, keeps the earlier text, is logged, and can be reverted', async () => {
    const user = 'correction-user';
    const { knowledge, destroy } = localKnowledgeStore(stack.info);
    const target = 'Facts/reef_tank.md';
    const text = 'The reef tank holds 20 gallons of salt water.';
    await knowledge.putKnowledge(user, [
      {
        path: target,
        markdown: `---\ntitle: reef tank\nbatch_id: batch-1-3\n---\n\n# reef tank\n\n${text}\n`,
        doc: {
          id: target,
          title: 'reef tank',
          text,
          summary: text,
          category: 'Facts',
          confidence: 0.6,
          sourceTurns: [2],
          promotedAt: '2026-01-01T00:00:00.000Z',
        },
      },
    ]);
    const output = {
      new_facts: [],
      connections: [],
      open_questions: [],
      corrections: [
        {
          existing_file: target,
          what_changed: 'The reef tank holds 40 gallons of salt water, not 20.',
          source_turns: [7],
          new_confidence_hint: 'higher' as const,
        },
      ],
    };
    const [doc] = stagedDocuments(output, {
      batchId: 'batch-5-8',
      stagedAt: '2026-01-09T00:00:00.000Z',
      turns: new Map(),
    });
    await knowledge.putStaged(user, [doc!], 'batch-5-8');
    const staged = `Knowledge_staging/${doc!.path}`;

    const promoted = await call('POST', `${u(user)}/review/promote`, { body: { path: staged } });
    expect(promoted.body).toEqual({ knowledgePath: target, corrected: true });
    const retrieve = async () =>
      (await call('POST', `${u(user)}/memory/retrieve`, { body: { path: `Knowledge/${target}` } })).body.item;
    const corrected = await retrieve();
    expect(corrected).toMatchObject({ text: 'The reef tank holds 40 gallons of salt water, not 20.', confidence: 0.7 });
    expect(corrected.history).toEqual([
      expect.objectContaining({ change: 'correction', by: staged, text, confidence: 0.6 }),
    ]);
    // No second document: the correction lives in its target.
    expect(
      (
        await call('POST', `${u(user)}/memory/retrieve`, {
          body: { path: `Knowledge/${doc!.path.replace(/--[^/]+\.md$/, '.md')}` },
        })
      ).status,
    ).toBe(404);
    const hits = (
      await call('POST', `${u(user)}/memory/search`, {
        body: { query: '40 gallons salt water', filters: { kind: ['knowledge'] } },
      })
    ).body.results;
    expect(hits[0]).toMatchObject({ id: `knowledge:${target}`, text: corrected.text });
    const file = await bucketReader(stack.info).text(`users/${user}/Knowledge/${target}`);
    expect(file).toMatch(
      /batch_id: batch-1-3[\s\S]*history:[\s\S]*20 gallons[\s\S]*# reef tank\n\nThe reef tank holds 40 gallons/,
    );
    const graphLog = (await call('GET', `${u(user)}/graph/log`)).body.entries;
    expect(graphLog).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'correct', fact: target })]));
    const audit = (await call('GET', `${u(user)}/memory/audit?itemId=${encodeURIComponent(`staged:${doc!.path}`)}`))
      .body.entries;
    expect(audit[0]).toMatchObject({
      action: 'review_promote',
      to: `Knowledge/${target}`,
      note: expect.stringContaining('correction'),
    });
    // Promoting again changes nothing.
    expect((await call('POST', `${u(user)}/review/promote`, { body: { path: staged } })).body.knowledgePath).toBe(
      target,
    );
    expect((await retrieve()).history).toHaveLength(1);

    const reverted = await call('POST', `${u(user)}/knowledge/revert`, {
      body: { path: `Knowledge/${target}`, reason: 'the user was joking' },
    });
    expect(reverted.status).toBe(200);
    expect(await retrieve()).toMatchObject({
      text,
      confidence: 0.6,
      history: [
        expect.objectContaining({ change: 'correction' }),
        expect.objectContaining({ change: 'revert', by: 'local-admin', reason: 'the user was joking' }),
      ],
    });
    expect((await call('GET', `${u(user)}/graph/log`)).body.entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: 'revert', fact: target })]),
    );
    expect(
      (await call('POST', `${u(user)}/knowledge/revert`, { body: { path: 'Knowledge/Facts/never_there.md' } })).status,
    ).toBe(404);
    expect(
      (await call('POST', `${u()}/knowledge/revert`, { body: { path: 'Knowledge/Facts/never_there.md', why: 'x' } }))
        .body,
    ).toMatchObject({ error: { fields: expect.any(Array) } });
    destroy();
  });

  it('contradicts a Knowledge fact (−0.3, below the long-term floor served short-term, audited) and undoes it (req R-TIER-8)', async () => {
    const user = 'fact-contradiction-user';
    const { knowledge, destroy } = localKnowledgeStore(stack.info);
    const target = 'Facts/commute.md';
    const text = 'The user cycles to work every day.';
    await knowledge.putKnowledge(user, [
      {
        path: target,
        markdown: `---\ntitle: commute\nbatch_id: batch-1-3\n---\n\n# commute\n\n${text}\n`,
        doc: {
          id: target,
          title: 'commute',
          text,
          summary: text,
          category: 'Facts',
          confidence: 0.75,
          sourceTurns: [2],
          promotedAt: '2026-01-01T00:00:00.000Z',
        },
      },
    ]);
    const id = `knowledge:${target}`;
    const path = `${u(user)}/memory/items/${encodeURIComponent(id)}`;
    const first = await call('POST', `${path}/contradict`, { body: { evidence: 'turn:9', note: 'sold the bike' } });
    expect(first.body.item).toMatchObject({ id, text, tier: 'short_term', status: 'short_term', confidence: 0.45 });
    expect((await call('POST', `${path}/contradict`, { body: { evidence: 'turn:9' } })).body.item).toMatchObject({
      confidence: 0.45,
    });
    const hits = (
      await call('POST', `${u(user)}/memory/search`, {
        body: { query: 'cycles to work', filters: { tier: ['long_term'] } },
      })
    ).body.results as Result[];
    expect(hits.map((h) => h.id)).not.toContain(id);
    const undone = await call('POST', `${path}/contradict/undo`);
    expect(undone.body.item).toMatchObject({ tier: 'long_term', status: 'canonical', confidence: 0.75 });
    expect((await call('POST', `${path}/contradict/undo`)).status).toBe(409);
    const audit = (await call('GET', `${u(user)}/memory/audit?itemId=${encodeURIComponent(id)}`)).body
      .entries as Result[];
    expect(audit.map((e) => e.action)).toEqual(['undo_contradict', 'demote']);
    expect(audit[1]).toMatchObject({
      from: 'long_term',
      to: 'short_term',
      reason: 'contradiction',
      actor: 'local-admin',
      note: expect.stringContaining('0.75 → 0.45'),
    });
    expect((await call('GET', `${u(user)}/graph/log`)).body.entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: 'contradict', fact: target })]),
    );
    expect(
      (await call('POST', `${u()}/memory/items/${encodeURIComponent('staged:x.md')}/contradict`, { body: {} })).status,
    ).toBe(409);
    destroy();
  });
});

describe('daily model cost', () => {
  it("serves each day's model cost of a user and, to administrators, of the stage, from the jobs the replay ran", async () => {
    const mine = (await call('GET', `${u()}/costs?days=90`)).body.days as Result[];
    expect(mine).toHaveLength(90);
    expect(mine.at(-1).day).toBe(stack.now().toISOString().slice(0, 10));
    const batches = (await call('GET', `${u()}/batches?limit=500`)).body.batches.filter((b: Result) => b.modelId);
    const summaries = (await call('GET', `${u()}/summaries?includeDeleted=true&limit=500`)).body.summaries;
    const runs = (await call('GET', `${u()}/sleep-time/runs?limit=500`)).body.runs.filter((r: Result) => r.model);
    const jobs = (group: string) => mine.reduce((n, d) => n + d.byGroup[group].jobs, 0);
    expect(jobs('batch')).toBe(batches.length);
    expect(jobs('summary')).toBe(summaries.length);
    expect(jobs('nightly') + jobs('weekly')).toBe(runs.length);
    const total = mine.reduce((n, d) => n + d.costUsd, 0);
    expect(total).toBeGreaterThan(0);
    const stage = (await call('GET', '/v1/costs?days=31')).body.days as Result[];
    for (const day of mine.slice(-31)) {
      const all = stage.find((d) => d.day === day.day);
      expect(all.costUsd).toBeGreaterThanOrEqual(day.costUsd);
      if (day.jobs > 0) expect(all.users).toBeGreaterThanOrEqual(1);
    }
    const userToken = await stack.mintUserToken([USER]);
    expect((await call('GET', '/v1/costs', { token: userToken })).status).toBe(403);
    expect((await call('GET', `${u()}/costs?days=91`)).body).toMatchObject({
      error: { fields: [expect.objectContaining({ path: 'query.days' })] },
    });
  });
});

describe('sleep-time runs (req R-SLP-11 API) and the OpenAPI document', () => {
  it('serves the log, the latest run and the self-assessment', async () => {
    const log = (await call('GET', `${u()}/sleep-time/runs?limit=5`)).body.runs;
    expect(log.length).toBeGreaterThan(0);
    const latest = (await call('GET', `${u()}/sleep-time/runs/latest`)).body.run;
    expect(latest.startedAt).toBe(log[0].startedAt);
    const assessment = (await call('GET', `${u()}/sleep-time/assessment?days=365`)).body;
    expect(assessment.assessment.runs).toBe(assessment.points.length);
    expect(assessment.assessment.trend).toMatch(/improving|stable|degrading|insufficient_data/);
    expect((await call('GET', `${u('nobody-here')}/sleep-time/runs/latest`)).status).toBe(404);
  });

  it('/openapi.json is a valid OpenAPI 3.x document naming every route', async () => {
    const res = await call('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    const result = await validate(structuredClone(res.body));
    expect(result.valid, JSON.stringify(result)).toBe(true);
    expect(res.body.paths['/v1/users/{userId}/memory/search'].post.requestBody).toBeDefined();
  });

  it("made no AWS request its function's synthesized IAM policies deny (infra/permissions.ts)", () => {
    expect(functionsChecked(stack)).toEqual(expect.arrayContaining(['api', 'idle', 'reflector', 'signal']));
    expect(iamDenials(stack)).toEqual([]);
  });
});
