import { describe, expect, it } from 'vitest';
import type { TurnSaved } from '../../events/turn-saved.js';
import type { KnowledgeDoc } from '../../lib/knowledge/knowledge.js';
import { KnowledgeSearch } from '../../lib/knowledge/knowledge-search.js';
import { safeKnowledgePath } from '../../lib/kernel/memory-paths.js';
import { applyQualityGates } from '../../lib/batches/quality-gates.js';
import type { BatchAnswer } from '../../lib/batches/batch-answer.js';
import { turn } from '../../lib/turns/turn.fake.js';

const turns = new Map<number, TurnSaved>([
  [1, turn({ turnId: 1, query: 'I keep a reef tank with two clownfish', response: 'Nice reef tank!' })],
  [2, turn({ turnId: 2, query: 'What lighting suits corals?', response: 'LED lighting works well.' })],
]);
const empty: BatchAnswer = { new_facts: [], corrections: [], connections: [], open_questions: [] };
const knowledgeDoc = (id: string, text: string, confidence = 0.75): KnowledgeDoc => ({
  id,
  title: id.replace(/^.*\/|\.md$/g, ''),
  text,
  category: id.split('/')[0] ?? '',
  confidence,
  sourceTurns: [1],
  summary: text,
  promotedAt: '2026-01-01T00:00:00Z',
});
const docs = [
  knowledgeDoc('Facts/reef_tank.md', 'The user keeps a reef tank with two clownfish.', 0.95),
  knowledgeDoc('Concepts/lighting.md', 'LED lighting suits corals.'),
];
const ctx = { turns, knowledge: new KnowledgeSearch(docs), knowledgeDocs: new Map(docs.map((d) => [d.id, d])) };
/** A new fact citing turn 1, naming no file. */
const newFact = (title: string, content: string) => ({
  title,
  content,
  source_turns: [1],
  related_existing: [],
  category: 'Facts' as const,
});

describe('quality gates (req R-GATE)', () => {
  it('keeps an item whose turns exist, whose words appear in them and whose files exist', () => {
    const output = {
      ...empty,
      new_facts: [
        {
          title: 'clownfish_names',
          content: 'The two clownfish are called Nemo and Dory, the user said.',
          source_turns: [1],
          related_existing: ['Facts/reef_tank.md'],
          category: 'Facts' as const,
        },
      ],
    };
    const r = applyQualityGates(output, ctx);
    expect(r.rejections).toEqual([]);
    expect(r.passed.new_facts).toHaveLength(1);
  });

  it('turn existence: rejects an item citing a turn the index does not hold', () => {
    const r = applyQualityGates(
      { ...empty, open_questions: [{ question: 'lighting?', source_turns: [2, 99], why_unresolved: '' }] },
      ctx,
    );
    expect(r.rejections).toEqual([
      expect.objectContaining({ gate: 'turn_existence', reason: expect.stringContaining('99') }),
    ]);
  });

  it('failed turn: rejects an item citing only FAIL or RETRY turns, drops them from one citing a successful turn too (req R-CAND-3)', () => {
    const marked = (validation: 'FAIL' | 'RETRY' | 'REVISE' | undefined) =>
      new Map([...turns].map(([id, t]) => [id, id === 1 && validation ? { ...t, signals: { validation } } : t]));
    const fact = (source_turns: number[]) => ({
      title: 'clownfish_count',
      content: 'The clownfish of the reef tank are named Nemo and Dory.',
      source_turns,
      related_existing: [],
      category: 'Facts' as const,
    });
    for (const v of ['FAIL', 'RETRY'] as const) {
      const r = applyQualityGates({ ...empty, new_facts: [fact([1])] }, { ...ctx, turns: marked(v) });
      expect(r.rejections).toEqual([
        expect.objectContaining({ gate: 'failed_turn', reason: expect.stringContaining('1') }),
      ]);
      expect(r.passed.new_facts).toEqual([]);
    }
    // REVISE and no validation are not failed; a successful turn keeps the item, citing it alone.
    for (const v of ['REVISE', undefined] as const)
      expect(
        applyQualityGates({ ...empty, new_facts: [fact([1])] }, { ...ctx, turns: marked(v) }).passed.new_facts,
      ).toHaveLength(1);
    const mixed = applyQualityGates(
      { ...empty, new_facts: [{ ...fact([1, 2]), content: 'The user keeps clownfish and asked about LED lighting.' }] },
      { ...ctx, turns: marked('FAIL') },
    );
    expect(mixed.passed.new_facts.map((f) => f.source_turns)).toEqual([[2]]);
  });

  it('keyword match: rejects an item with no word in its cited turns', () => {
    const r = applyQualityGates(
      {
        ...empty,
        new_facts: [
          {
            title: 'mortgage',
            content: 'The user refinanced a mortgage.',
            source_turns: [1],
            related_existing: [],
            category: 'Facts',
          },
        ],
      },
      ctx,
    );
    expect(r.rejections).toEqual([expect.objectContaining({ gate: 'keyword_match' })]);
  });

  it('related file exists: rejects a missing file and a path that leaves the user folder', () => {
    const conn = (file_b: string) => ({
      file_a: 'Facts/reef_tank.md',
      file_b,
      relationship: 'reef tank lighting',
      source_turns: [2],
    });
    const r = applyQualityGates(
      { ...empty, connections: [conn('Concepts/nope.md'), conn('../other-user/Knowledge/Facts/secret.md')] },
      ctx,
    );
    expect(r.rejections.map((x) => x.gate)).toEqual(['related_file_exists', 'related_file_exists']);
    expect(r.rejections[1]?.reason).toContain('leaves');
  });

  it('dedup: rejects a fact Knowledge already holds (BM25 similarity > 0.8)', () => {
    const fact = (content: string) => newFact('reef_tank', content);
    const r = applyQualityGates(
      {
        ...empty,
        new_facts: [
          fact('The user keeps a reef tank with two clownfish.'),
          fact('The user keeps two clownfish and wants a third fish for the tank soon.'),
        ],
      },
      ctx,
    );
    expect(r.rejections).toEqual([
      expect.objectContaining({ gate: 'dedup', reason: expect.stringContaining('Facts/reef_tank.md') }),
    ]);
    expect(r.passed.new_facts).toHaveLength(1);
  });

  it('transient data: rejects a fact or a question holding a URL or a price (req R-CAND-2)', () => {
    const fact = (content: string) => newFact('reef_tank_shop', content);
    const r = applyQualityGates(
      {
        ...empty,
        new_facts: [
          fact('The reef tank came from https://shop.example/reef?session=81f2, the user said.'),
          fact('The reef tank cost $349 at the shop.'),
          fact('The reef tank holds two clownfish and 120 litres.'),
        ],
        open_questions: [
          { question: 'Is 80 EUR too much for reef tank lighting?', source_turns: [2], why_unresolved: '' },
        ],
      },
      ctx,
    );
    expect(r.rejections).toEqual([
      expect.objectContaining({
        gate: 'transient_data',
        reason: expect.stringContaining('a URL (https://shop.example/'),
      }),
      expect.objectContaining({ gate: 'transient_data', reason: expect.stringContaining('a price (') }),
      expect.objectContaining({ category: 'open_questions', gate: 'transient_data' }),
    ]);
    expect(r.passed.new_facts.map((f) => f.content)).toEqual(['The reef tank holds two clownfish and 120 litres.']);
  });

  it('drift guard: rejects a one-turn correction of a fact held above 0.9, not a two-turn one', () => {
    const correction = (source_turns: number[]) => ({
      existing_file: 'Facts/reef_tank.md',
      what_changed: 'the reef tank has three clownfish',
      source_turns,
      new_confidence_hint: 'lower' as const,
    });
    const one = applyQualityGates({ ...empty, corrections: [correction([1])] }, ctx);
    expect(one.rejections).toEqual([expect.objectContaining({ gate: 'drift_guard' })]);
    const two = applyQualityGates({ ...empty, corrections: [correction([1, 2])] }, ctx);
    expect(two.rejections).toEqual([]);
    const soft = applyQualityGates(
      {
        ...empty,
        corrections: [
          {
            ...correction([2]),
            existing_file: 'Concepts/lighting.md',
            what_changed: 'LED lighting is too strong for corals',
          },
        ],
      },
      ctx,
    );
    expect(soft.rejections).toEqual([]);
  });

  it.each(['../x.md', '/etc/passwd', 'Facts/../../x.md', 'Facts//x.md', 'a\\b.md', './x.md', ''])(
    'safeKnowledgePath refuses %j',
    (p) => {
      expect(safeKnowledgePath(p)).toBeNull();
    },
  );
  it('safeKnowledgePath accepts plain relative paths', () => {
    expect(safeKnowledgePath('Knowledge/Facts/a.md')).toBe('Facts/a.md');
  });
});
