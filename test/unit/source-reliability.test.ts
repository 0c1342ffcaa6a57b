/**
 * Req R-SRC, source reliability: outcomes per domain, shared by all users, counted once,
 * served back with advice, and blended into the confidence of documents citing the sources.
 */
import { describe, expect, it } from 'vitest';
import { TurnSavedSchema } from '../../events/turn-saved.js';
import {
  addObservation,
  blendSourceReliability,
  emptyStats,
  normaliseDomain,
  observationsOf,
  reliabilityOf,
  type SourceObservation,
} from '../../lib/sources/source-reliability.js';
import { stagedDocuments } from '../../lib/knowledge/staging.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import * as api from '../../lib/memory-api/memory-api.js';
import { ingestDeps } from '../helpers/use-case-deps.js';
import { turn } from '../../lib/turns/turn.fake.js';

const records = (turns: object[]) => turns.map((t, i) => ({ messageId: `m${i}`, body: JSON.stringify(t) }));

const obs = (outcome: SourceObservation['outcome'], quality?: number, i = 0): SourceObservation => ({
  domain: 'example.com',
  outcome,
  ...(quality !== undefined ? { quality } : {}),
  key: `${i}#0`,
  at: '2026-02-06T14:00:00Z',
});

const reliabilityAfter = (list: SourceObservation[]) =>
  reliabilityOf(list.reduce(addObservation, emptyStats('example.com')));

describe('source reliability (req R-SRC)', () => {
  it('starts neutral and moves with outcomes: successes raise it, blocks and failures lower it', () => {
    expect(reliabilityOf(emptyStats('example.com'))).toMatchObject({
      reliability: 0.5,
      advice: 'neutral',
      attempts: 0,
    });
    const good = reliabilityAfter(Array.from({ length: 8 }, (_, i) => obs('success', 0.9, i)));
    expect(good).toMatchObject({
      attempts: 8,
      successes: 8,
      successRate: 0.9,
      extractionQuality: 0.91,
      reliability: 0.82,
      advice: 'prefer',
    });
    const blocked = reliabilityAfter(
      Array.from({ length: 8 }, (_, i) => obs(i < 6 ? 'blocked' : 'failed', undefined, i)),
    );
    expect(blocked).toMatchObject({
      attempts: 8,
      blocked: 6,
      failed: 2,
      successRate: 0.1,
      reliability: 0.1,
      advice: 'avoid',
    });
    // One more success moves a mixed record up, one more block moves it down.
    const mixed = [
      obs('success', 0.8, 1),
      obs('blocked', undefined, 2),
      obs('success', 0.6, 3),
      obs('failed', undefined, 4),
    ];
    const base = reliabilityAfter(mixed).reliability;
    expect(reliabilityAfter([...mixed, obs('success', 0.9, 5)]).reliability).toBeGreaterThan(base);
    expect(reliabilityAfter([...mixed, obs('blocked', undefined, 5)]).reliability).toBeLessThan(base);
  });

  it('gives advice only after enough outcomes', () => {
    expect(
      reliabilityAfter([
        obs('blocked', undefined, 1),
        obs('blocked', undefined, 2),
        obs('blocked', undefined, 3),
        obs('blocked', undefined, 4),
      ]).advice,
    ).toBe('neutral');
    expect(reliabilityAfter([1, 2, 3, 4, 5].map((i) => obs('blocked', undefined, i))).advice).toBe('avoid');
  });

  it('counts low extraction quality against a site that answers', () => {
    const poor = reliabilityAfter(Array.from({ length: 6 }, (_, i) => obs('success', 0.2, i)));
    expect(poor.successRate).toBe(0.88);
    expect(poor.reliability).toBeLessThan(0.3);
  });

  it("blends reliability into a document's confidence by at most ±0.1, leaving it without sources", () => {
    expect(blendSourceReliability(0.75, [])).toBe(0.75);
    expect(blendSourceReliability(0.75, [0.5])).toBe(0.75);
    expect(blendSourceReliability(0.75, [1])).toBe(0.85);
    expect(blendSourceReliability(0.75, [0, 0.2])).toBe(0.67);
  });

  it('reads observations from a turn, normalising domains and keeping quality of successes only', () => {
    const t = turn({
      turnId: 7,
      sources: [
        { domain: 'www.example.com', outcome: 'success', extractionQuality: 0.7 },
        { domain: 'example.org', outcome: 'blocked', extractionQuality: 0.9 },
      ],
    });
    expect(observationsOf(t)).toEqual([
      { domain: 'example.com', outcome: 'success', quality: 0.7, key: '7#0', at: t.timestamp },
      { domain: 'example.org', outcome: 'blocked', key: '7#1', at: t.timestamp },
    ]);
    expect(normaliseDomain('WWW.Docs.Example.com')).toBe('docs.example.com');
  });

  it('rejects a source that is not a host name, naming the field', () => {
    const bad = TurnSavedSchema.safeParse({
      ...turn(),
      sources: [{ domain: 'https://example.com/page', outcome: 'success' }],
    });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['sources', 0, 'domain']);
    const outcome = TurnSavedSchema.safeParse({ ...turn(), sources: [{ domain: 'example.com', outcome: 'timeout' }] });
    expect(outcome.error?.issues[0]?.path).toEqual(['sources', 0, 'outcome']);
  });

  it('counts each reported source once, across users, however often the turn is delivered', async () => {
    const deps = ingestDeps();
    const sources = [{ domain: 'example.com', outcome: 'success' as const, extractionQuality: 0.9 }];
    const t1 = turn({ userId: 'alice', turnId: 1, sources });
    await ingestTurns(records([t1]), deps);
    // The same message again (a redelivery) and the same turn republished: nothing more counted.
    await ingestTurns(records([t1]), deps);
    await ingestTurns([{ messageId: 'republished', body: JSON.stringify(t1) }], deps);
    await ingestTurns(
      records([turn({ userId: 'bob', turnId: 1, sources: [{ domain: 'www.example.com', outcome: 'blocked' }] })]),
      deps,
    );
    const [stats] = await deps.sources.stats(['example.com']);
    expect(stats).toMatchObject({ attempts: 2, successes: 1, blocked: 1, qualityCount: 1 });
    const served = await api.sourceReliability(
      { sources: deps.sources } as unknown as api.MemoryApiDeps,
      'Example.com, unknown.example.org',
    );
    expect(served.sources.map((s) => [s.domain, s.attempts, s.reliability])).toEqual([
      ['example.com', 2, 0.48],
      ['unknown.example.org', 0, 0.5],
    ]);
  });

  it('counts a source once when the delivery that counted it failed later (its state write lost)', async () => {
    const deps = ingestDeps();
    const save = deps.signalState.save.bind(deps.signalState);
    let failures = 1;
    deps.signalState.save = async (...args) => {
      if (failures-- > 0) throw new Error('DynamoDB timed out');
      return save(...args);
    };
    const t = turn({ userId: 'alice', turnId: 1, sources: [{ domain: 'example.com', outcome: 'failed' }] });
    expect((await ingestTurns(records([t]), deps)).failedMessageIds).toEqual(['m0']);
    expect((await ingestTurns(records([t]), deps)).accepted).toBe(1);
    expect((await deps.sources.stats(['example.com']))[0]).toMatchObject({ attempts: 1, failed: 1 });
  });

  it("stages documents with their sources' reliability in the confidence and the front matter", () => {
    const turns = new Map([
      [
        1,
        turn({
          turnId: 1,
          sources: [
            { domain: 'good.example.com', outcome: 'success' },
            { domain: 'bad.example.com', outcome: 'blocked' },
          ],
        }),
      ],
      [2, turn({ turnId: 2 })],
    ]);
    const fact = (n: number) => ({
      title: `fact ${n}`,
      content: 'c',
      source_turns: [n],
      related_existing: [],
      category: 'Facts' as const,
    });
    const docs = stagedDocuments(
      { new_facts: [fact(1), fact(2)], corrections: [], connections: [], open_questions: [] },
      {
        batchId: 'batch-1-2',
        stagedAt: '2026-02-06T14:30:00.000Z',
        turns,
        sourceReliability: new Map([
          ['good.example.com', 0.9],
          ['bad.example.com', 0.1],
        ]),
      },
    );
    // Only the site the turn read successfully counts; turn 2 cited no source.
    expect(docs.map((d) => d.confidence)).toEqual([0.68, 0.6]);
    expect(docs[0]?.meta.source_reliability).toEqual({ 'good.example.com': 0.9 });
    expect(docs[1]?.meta.source_reliability).toBeUndefined();
  });
});
