/**
 * Req R-SCOPE-2 for every kind of item: a validation outcome moves the trust of Knowledge facts
 * and turns (not only API-written `mem:` items), search ranks by it, and two outcomes at once
 * both count. Through the use cases (recordOutcome, search, retrieve) over the real catalog and
 * search index, on the in-memory stores.
 */
import { describe, expect, it } from 'vitest';
import { adjustTrust, NO_TRUST } from '../../lib/trust/scope-trust.js';
import type { KnowledgeDoc } from '../../lib/knowledge/knowledge.js';
import * as api from '../../lib/memory-api/memory-api.js';
import { StoreMemoryCatalog } from '../../lib/search/memory-catalog.js';
import { LiveSearchIndex } from '../../lib/search/search-index.js';
import { fixedClock } from '../../lib/kernel/runtime.fake.js';
import { MemoryDiary } from '../../lib/diary/diary.fake.js';
import { MemoryItemTrust } from '../../lib/trust/item-trust.fake.js';
import { MemoryItems } from '../../lib/items/memory-item.fake.js';
import { MemorySearchIndexStore } from '../../lib/search/search-index.fake.js';
import { MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';
import { MemoryTurnStore, turn } from '../../lib/turns/turn.fake.js';
import { MemorySummaryStore } from '../../lib/summaries/summary.fake.js';

const USER = 'alice';

function world() {
  const turns = new MemoryTurnStore();
  const knowledge = new MemoryKnowledgeStore();
  const summaries = new MemorySummaryStore();
  const items = new MemoryItems();
  const trust = new MemoryItemTrust();
  const store = new MemorySearchIndexStore();
  // The DynamoDB store marks the item in the outcome's transaction; here the fake marks it after the write.
  trust.onRecord = (_u, id) => store.mark(id);
  const catalog = new StoreMemoryCatalog({
    turns,
    knowledge,
    summaries,
    items,
    diary: new MemoryDiary(),
    trust,
    stagedExpiryDays: 14,
  });
  const clock = fixedClock('2026-03-01T12:00:00.000Z');
  const search = new LiveSearchIndex({ store, catalog, clock, marks: store.timing });
  const deps = {
    catalog,
    search,
    items,
    trust,
    turns,
    knowledge,
    summaries,
    audit: { append: async () => {}, list: async () => [] },
    clock,
  } as unknown as api.MemoryApiDeps;
  const fact = (path: string, confidence = 0.6): void => {
    const text = 'The reef tank holds salt water, two clownfish and a cleaner shrimp.';
    const doc: KnowledgeDoc = {
      id: path,
      title: 'reef tank',
      text,
      summary: text,
      category: 'Facts',
      confidence,
      sourceTurns: [],
      promotedAt: '2026-02-01T00:00:00.000Z',
    };
    knowledge.knowledge.set(path, doc);
    store.mark(`knowledge:${path}`);
  };
  return { deps, trust, store, turns, fact };
}

// The in-memory index store does not tell owners apart: GLOBAL's view is left out.
const rank = async (deps: api.MemoryApiDeps) =>
  (
    await api.search(deps, USER, {
      query: 'reef tank clownfish shrimp',
      limit: 10,
      filters: { kind: ['knowledge'], includeGlobal: false },
    })
  ).results.map((r) => [r.id, r.quality]);

describe('trust for every kind of item (req R-SCOPE-2)', () => {
  it('moves the trust of a Knowledge fact and a turn, and skips only ids that name nothing', async () => {
    const { deps, turns, fact, store } = world();
    fact('Facts/reef_tank.md');
    await turns.saveTurns([turn({ userId: USER, turnId: 1, query: 'my reef tank', response: 'nice' })]);
    store.mark('turn:1');
    const out = await api.recordOutcome(deps, 'agent', USER, {
      ids: ['knowledge:Facts/reef_tank.md', 'turn:1', 'turn:99', 'knowledge:Facts/none.md'],
      validation: 'APPROVE',
      turnId: 3,
    });
    expect(out.changes).toEqual([
      { id: 'knowledge:Facts/reef_tank.md', trustFrom: 0.6, trustTo: 0.7, scopeFrom: 'user', scopeTo: 'user' },
      { id: 'turn:1', trustFrom: 0.5, trustTo: 0.6, scopeFrom: 'user', scopeTo: 'user' },
    ]);
    expect(out.skipped.map((s) => s.id)).toEqual(['turn:99', 'knowledge:Facts/none.md']);
    expect((await api.retrieve(deps, USER, { id: 'turn:1' })).item.quality).toBe(0.6);
    expect((await api.retrieve(deps, USER, { path: 'Knowledge/Facts/reef_tank.md' })).item).toMatchObject({
      quality: 0.7,
      confidence: 0.6,
    });
    const down = await api.recordOutcome(deps, 'agent', USER, { ids: ['turn:1'], validation: 'FAIL' });
    expect(down.changes[0]).toMatchObject({ trustFrom: 0.6, trustTo: 0.4 });
  });

  it('ranks a Knowledge fact a FAIL lowered below an otherwise equal one, and one an APPROVE raised above it', async () => {
    const { deps, fact } = world();
    fact('Facts/reef_a.md');
    fact('Facts/reef_b.md');
    // Equal: the tie goes by id.
    expect(await rank(deps)).toEqual([
      ['knowledge:Facts/reef_a.md', 0.6],
      ['knowledge:Facts/reef_b.md', 0.6],
    ]);
    await api.recordOutcome(deps, 'agent', USER, { ids: ['knowledge:Facts/reef_a.md'], validation: 'FAIL' });
    expect(await rank(deps)).toEqual([
      ['knowledge:Facts/reef_b.md', 0.6],
      ['knowledge:Facts/reef_a.md', 0.4],
    ]);
    // Folded by a compaction, the trust stays in the segment.
    await deps.search.compact(USER);
    expect((await rank(deps))[0]?.[0]).toBe('knowledge:Facts/reef_b.md');
    for (let i = 0; i < 3; i++)
      await api.recordOutcome(deps, 'agent', USER, { ids: ['knowledge:Facts/reef_a.md'], validation: 'APPROVE' });
    expect(await rank(deps)).toEqual([
      ['knowledge:Facts/reef_a.md', 0.7],
      ['knowledge:Facts/reef_b.md', 0.6],
    ]);
  });

  it('counts two outcomes at once: the one whose write lost reads again and counts on top', async () => {
    const { deps, trust, fact } = world();
    fact('Facts/reef_tank.md');
    const id = 'knowledge:Facts/reef_tank.md';
    // The first outcome's write waits until a second outcome, which read the same record, has written.
    const write = trust.record.bind(trust);
    const results: boolean[] = [];
    let raced = false;
    trust.record = async (...args) => {
      if (!raced) {
        raced = true;
        await api.recordOutcome(deps, 'agent', USER, { ids: [id], validation: 'APPROVE' });
      }
      const ok = await write(...args);
      results.push(ok);
      return ok;
    };
    const first = await api.recordOutcome(deps, 'agent', USER, { ids: [id], validation: 'APPROVE' });
    expect(results).toEqual([true, false, true]);
    expect(first.changes[0]).toMatchObject({ trustFrom: 0.7, trustTo: 0.8 });
    expect((await trust.get(USER, [id])).get(id)).toEqual({ adjustment: 0.2, outcomes: 2 });
    expect((await api.retrieve(deps, USER, { id })).item.quality).toBe(0.8);
  });

  it('keeps trust within 0..1 and writes nothing for an outcome that moves nothing', () => {
    expect(adjustTrust(0.95, NO_TRUST, 'APPROVE')).toEqual({
      trustFrom: 0.95,
      trustTo: 1,
      next: { adjustment: 0.05, outcomes: 1 },
    });
    // Capped at 1, a FAIL then counts from 1, not from the steps taken past it.
    expect(adjustTrust(0.95, { adjustment: 0.05, outcomes: 1 }, 'FAIL')).toMatchObject({ trustFrom: 1, trustTo: 0.8 });
    expect(adjustTrust(0.1, NO_TRUST, 'FAIL')).toMatchObject({ trustTo: 0, next: { adjustment: -0.1 } });
  });
});
