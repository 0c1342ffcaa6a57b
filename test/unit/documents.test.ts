import { describe, expect, it } from 'vitest';
import { TurnSavedSchema } from '../../events/turn-saved.js';
import { assembleBatch, buildReflectorPrompt } from '../../lib/batches/batch-assembly.js';
import { parseReflectorPrompt } from '../../lib/offline-model/rule-reflector.js';
import { parseFrontMatter } from '../../lib/kernel/front-matter.js';
import { stagedDocuments } from '../../lib/knowledge/staging.js';
import { parseTurnDocument, renderTurnDocument, turnContentHash } from '../../lib/turns/turn-document.js';
import { turn } from '../../lib/turns/turn.fake.js';

describe('turn documents', () => {
  it('round-trip through markdown, even when the text contains our section headings', () => {
    const t = turn({
      query: 'How do I write\n## Response\nin markdown?',
      response: 'Like this:\n## Query\n\\## Context\ndone',
      context: '## Plan\n1. answer',
      signals: { validation: 'APPROVE', quality: 0.9 },
      attributes: { dia_ids: 'D1:1 D1:2' },
      sources: [
        { domain: 'reef.example.com', outcome: 'success', extractionQuality: 0.75 },
        { domain: 'blocked.example', outcome: 'blocked' },
      ],
    });
    const back = TurnSavedSchema.parse(parseTurnDocument(renderTurnDocument(t)));
    expect(back).toEqual(t);
  });

  it('hash differs when content differs and not otherwise', () => {
    const t = turn();
    expect(turnContentHash({ ...t })).toBe(turnContentHash(t));
    expect(turnContentHash({ ...t, response: 'other' })).not.toBe(turnContentHash(t));
    expect(turnContentHash({ ...t, sources: [{ domain: 'a.example', outcome: 'failed' }] })).not.toBe(
      turnContentHash(t),
    );
    // A turn without the parts added later keeps the hash it had before they existed.
    expect(
      turnContentHash({
        type: 'turn.saved',
        version: 1,
        userId: 'u-1',
        sessionId: 's-1',
        turnId: 1,
        timestamp: '2026-02-06T14:00:00Z',
        query: 'q',
        response: 'r',
      }),
    ).toBe('4b94321d2a02c490');
  });
});

describe('batch assembly (req R-ASM)', () => {
  it('keeps everything within budget and drops the oldest turns first when over', () => {
    const turns = [1, 2, 3, 4].map((turnId) => turn({ turnId, query: 'x'.repeat(400), response: 'y'.repeat(400) }));
    const all = assembleBatch(turns, 4000);
    expect(all.included).toEqual([1, 2, 3, 4]);
    const tight = assembleBatch([...turns].reverse(), 450);
    expect(tight.included).toEqual([3, 4]);
    expect(tight.omitted).toEqual([1, 2]);
    expect(tight.tokens).toBeLessThanOrEqual(450);
    const one = assembleBatch([turns[0]!], 50);
    expect(one.included).toEqual([1]);
    expect(one.tokens).toBeLessThanOrEqual(60);
  });

  it('writes the day once per session, and each turn with its number (no session id, no hour)', () => {
    const turns = [
      turn({ turnId: 1, sessionId: 's-1', timestamp: '2026-02-06T14:00:00Z', query: 'q1', response: 'r1' }),
      turn({
        turnId: 2,
        sessionId: 's-1',
        timestamp: '2026-02-06T14:05:00Z',
        query: 'q2',
        response: 'r2',
        context: 'c2',
      }),
      turn({ turnId: 3, sessionId: 's-2', timestamp: '2026-02-09T09:30:00Z', query: 'q3', response: 'r3' }),
    ];
    expect(assembleBatch(turns).document).toBe(
      [
        '### 2026-02-06',
        '[Turn 1] User: q1',
        'Agent: r1',
        '[Turn 2] User: q2',
        'Context: c2',
        'Agent: r2',
        '',
        '### 2026-02-09',
        '[Turn 3] User: q3',
        'Agent: r3',
      ].join('\n'),
    );
  });
});

describe('known documents in the prompt (req R-ASM-4)', () => {
  it('lists a document by its path alone when its name already says its summary, and the offline model reads both forms', () => {
    const batch = assembleBatch([turn({ turnId: 1, query: 'q', response: 'r' })]);
    const prompt = buildReflectorPrompt(batch, [
      {
        path: 'Reflections/pattern/the_user_keeps_coming_back_to_jazz.md',
        summary: 'The user keeps coming back to jazz.',
      },
      { path: 'Facts/dog_rex.md', summary: 'The user has a beagle named Rex.' },
    ]);
    expect(prompt).toContain(
      '## Existing knowledge\n- Reflections/pattern/the_user_keeps_coming_back_to_jazz.md\n- Facts/dog_rex.md: The user has a beagle named Rex.\n',
    );
    expect(parseReflectorPrompt(prompt).existing).toEqual([
      {
        path: 'Reflections/pattern/the_user_keeps_coming_back_to_jazz.md',
        summary: 'the user keeps coming back to jazz',
      },
      { path: 'Facts/dog_rex.md', summary: 'The user has a beagle named Rex.' },
    ]);
    expect(parseReflectorPrompt(prompt).turns).toEqual([{ turnId: 1, user: 'q', agent: 'r' }]);
  });
});

describe('staging (req R-STG)', () => {
  it("writes front matter with the seed fields, confidence from source turns, and the turns' attributes", () => {
    const turns = new Map([
      [1, turn({ turnId: 1, attributes: { dia_ids: 'D1:1' } })],
      [2, turn({ turnId: 2, signals: { validation: 'APPROVE', quality: 0.9 } })],
      [3, turn({ turnId: 3 })],
    ]);
    const docs = stagedDocuments(
      {
        new_facts: [
          { title: 'Reef Tank!', content: 'c', source_turns: [1], related_existing: [], category: 'Facts' },
          { title: 'b', content: 'c', source_turns: [1, 2, 3], related_existing: [], category: 'Patterns' },
        ],
        corrections: [],
        connections: [],
        open_questions: [{ question: 'why?', source_turns: [1, 2], why_unresolved: 'unclear' }],
      },
      { batchId: 'batch-1-3', stagedAt: '2026-02-06T14:30:00.000Z', turns },
    );
    expect(docs.map((d) => [d.path, d.confidence])).toEqual([
      ['Facts/reef_tank--batch-1-3.md', 0.6],
      ['Patterns/b--batch-1-3.md', 0.85],
      ['Questions/why--batch-1-3.md', 0.75],
    ]);
    const { meta } = parseFrontMatter(docs[0]!.markdown);
    expect(meta).toMatchObject({
      staged_at: '2026-02-06T14:30:00.000Z',
      batch_id: 'batch-1-3',
      promotion_count: 0,
      source_turns: [1],
      confidence: 0.6,
      category: 'Facts',
      source_attributes: { '1': { dia_ids: 'D1:1' } },
    });
  });

  // Found by the fault-equivalence run on LoCoMo conv-30: two connections of one pair (turns
  // 183 and 184) were written to one key at once, and either could land.
  it('keeps the first of two items with one title, so a batch stages one document per key', () => {
    const turns = new Map([183, 184].map((turnId) => [turnId, turn({ turnId })]));
    const connection = (turnId: number) => ({
      file_a: 'Knowledge/Facts/gina.md',
      file_b: 'Knowledge/Patterns/dance.md',
      relationship: `Both came up together in turn ${turnId}.`,
      source_turns: [turnId],
    });
    const docs = stagedDocuments(
      { new_facts: [], corrections: [], connections: [connection(183), connection(184)], open_questions: [] },
      { batchId: 'batch-183-190', stagedAt: '2026-02-06T14:30:00.000Z', turns },
    );
    expect(docs.map((d) => [d.path, d.sourceTurns])).toEqual([['Connections/gina_and_dance--batch-183-190.md', [183]]]);
  });
});
