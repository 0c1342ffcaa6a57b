/** Edit and restore (lib/knowledge/correction.ts applyEdit, restoreEdit; lib/items/edits.ts): the history they write, the ids they take, what a concurrent change gets. */
import { describe, expect, it } from 'vitest';
import { applyCorrection, applyEdit, restoreEdit, revertLatest } from '../../lib/knowledge/correction.js';
import type { KnowledgeDoc } from '../../lib/knowledge/knowledge.js';
import * as api from '../../lib/memory-api/memory-api.js';
import { fixedClock } from '../../lib/kernel/runtime.fake.js';
import { MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';

const fact: KnowledgeDoc = {
  id: 'Facts/kayak.md',
  title: 'kayak',
  text: 'A green kayak.',
  summary: 'A green kayak.',
  category: 'Facts',
  confidence: 0.7,
  sourceTurns: [2],
  promotedAt: '2026-01-01T00:00:00.000Z',
};

describe('applyEdit and restoreEdit', () => {
  it('an edit keeps the old text in the history under its time, keeps the confidence and counts as verified', () => {
    const edited = applyEdit(fact, {
      text: 'A yellow canoe.',
      by: 'ana',
      at: '2026-02-01T00:00:00.000Z',
      reason: 'a canoe',
    });
    expect(edited).toMatchObject({
      text: 'A yellow canoe.',
      summary: 'A yellow canoe.',
      confidence: 0.7,
      verifiedAt: '2026-02-01T00:00:00.000Z',
    });
    expect(edited.history).toEqual([
      {
        at: '2026-02-01T00:00:00.000Z',
        change: 'edit',
        by: 'ana',
        text: 'A green kayak.',
        confidence: 0.7,
        reason: 'a canoe',
      },
    ]);
  });

  it('a restore brings back the text the edit at `at` replaced, even after later changes, and is itself restorable', () => {
    const first = applyEdit(fact, { text: 'A yellow canoe.', by: 'ana', at: '2026-02-01T00:00:00.000Z' });
    const second = applyEdit(first, { text: 'A red canoe.', by: 'ben', at: '2026-02-02T00:00:00.000Z' });
    const restored = restoreEdit(second, '2026-02-01T00:00:00.000Z', {
      by: 'ana',
      at: '2026-02-03T00:00:00.000Z',
      reason: 'kayak',
    });
    expect(restored?.text).toBe('A green kayak.');
    expect(restored?.history?.at(-1)).toEqual({
      at: '2026-02-03T00:00:00.000Z',
      change: 'restore',
      by: 'ana',
      text: 'A red canoe.',
      confidence: 0.7,
      reason: 'kayak',
    });
    expect(
      restoreEdit(restored as KnowledgeDoc, '2026-02-03T00:00:00.000Z', { by: 'ben', at: '2026-02-04T00:00:00.000Z' })
        ?.text,
    ).toBe('A red canoe.');
  });

  it('restores only edits and restores: an unknown time, or a correction or revert (undone by revert), gives null', () => {
    const corrected = applyCorrection(fact, {
      by: 'Knowledge_staging/Corrections/x.md',
      text: 'A blue kayak.',
      hint: 'same',
      at: '2026-02-01T00:00:00.000Z',
    });
    expect(
      restoreEdit(corrected, '2026-02-01T00:00:00.000Z', { by: 'ana', at: '2026-02-02T00:00:00.000Z' }),
    ).toBeNull();
    expect(restoreEdit(fact, '2026-02-01T00:00:00.000Z', { by: 'ana', at: '2026-02-02T00:00:00.000Z' })).toBeNull();
    // The latest change, an edit included, is what revert undoes.
    const edited = applyEdit(corrected, { text: 'A yellow canoe.', by: 'ana', at: '2026-02-03T00:00:00.000Z' });
    expect(revertLatest(edited, 'ben', '2026-02-04T00:00:00.000Z')?.text).toBe('A blue kayak.');
  });
});

describe('editTarget', () => {
  it('takes knowledge (facts and findings) and summary ids; any other kind is invalid, naming params.id', () => {
    expect(api.editTarget('knowledge:Facts/kayak.md')).toEqual({ kind: 'knowledge', path: 'Facts/kayak.md' });
    expect(api.editTarget('knowledge:Knowledge/Reflections/2026-01-02/x.md')).toEqual({
      kind: 'knowledge',
      path: 'Reflections/2026-01-02/x.md',
    });
    expect(api.editTarget('summary:summary-1-4')).toEqual({ kind: 'summary', summaryId: 'summary-1-4' });
    for (const id of [
      'turn:1',
      'episode:3',
      'staged:Facts/x.md',
      'diary:b-1',
      'mem:abc',
      'knowledge:',
      'summary:',
      'kayak',
    ]) {
      expect(() => api.editTarget(id), id).toThrow(
        expect.objectContaining({ kind: 'invalid', fields: [expect.objectContaining({ path: 'params.id' })] }),
      );
    }
  });
});

describe('what a concurrent change of the same item gets', () => {
  const deps = (knowledge: MemoryKnowledgeStore, summaries: unknown = {}) =>
    ({
      knowledge,
      summaries,
      clock: fixedClock(),
      audit: { append: async () => {} },
      catalog: { itemsById: async () => new Map() },
    }) as unknown as api.MemoryApiDeps;

  it('a Knowledge edit whose text changed between its read and its write is refused as a conflict (409), and writes nothing', async () => {
    const knowledge = new MemoryKnowledgeStore();
    await knowledge.putKnowledge('u', [{ path: fact.id, markdown: '', doc: fact }]);
    const update = knowledge.updateKnowledgeIndex.bind(knowledge);
    // Another writer's edit lands after this request read the index and before it writes.
    knowledge.updateKnowledgeIndex = async (userId, change) => {
      await update(userId, (docs) => ({
        docs: docs.map((d) => applyEdit(d, { text: 'Theirs.', by: 'ben', at: '2026-02-01T00:00:00.000Z' })),
        result: null,
      }));
      knowledge.updateKnowledgeIndex = update;
      return update(userId, change);
    };
    await expect(
      api.editItem(deps(knowledge), 'ana', 'u', `knowledge:${fact.id}`, { text: 'Mine.', reason: 'r' }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    expect((await knowledge.loadKnowledge())[0]).toMatchObject({
      text: 'Theirs.',
      history: [expect.objectContaining({ by: 'ben' })],
    });
  });

  it('a summary whose conditional edit fails while it is still live is a conflict (409); once deleted, not found (404)', async () => {
    const live = {
      userId: 'u',
      id: 's-1',
      kind: 'idle',
      createdAt: '2026-01-01T00:00:00.000Z',
      sourceTurns: [1],
      prompt: 'p',
      text: 'old',
      deleted: false,
    };
    const changedMeanwhile = { byIds: async () => [live], edit: async () => null };
    await expect(
      api.editItem(deps(new MemoryKnowledgeStore(), changedMeanwhile), 'ana', 'u', 'summary:s-1', {
        text: 'new',
        reason: 'r',
      }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    let reads = 0;
    const deletedMeanwhile = {
      byIds: async () => {
        reads += 1;
        return [{ ...live, deleted: reads > 1 }];
      },
      edit: async () => null,
    };
    await expect(
      api.editItem(deps(new MemoryKnowledgeStore(), deletedMeanwhile), 'ana', 'u', 'summary:s-1', {
        text: 'new',
        reason: 'r',
      }),
    ).rejects.toMatchObject({ kind: 'not_found' });
  });
});
