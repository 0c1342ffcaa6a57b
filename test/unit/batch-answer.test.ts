import { describe, expect, it } from 'vitest';
import { parseBatchAnswer, BatchAnswerError, reflectionToolInputSchema } from '../../lib/batches/batch-answer.js';

const fact = (n: number) => ({ title: `fact_${n}`, content: `content ${n}`, source_turns: [n], category: 'Facts' });
const question = (n: number) => ({ question: `why ${n}?`, source_turns: [n], why_unresolved: 'no answer' });

describe('reflection output (req R-LLM)', () => {
  it('truncates each category to its hard cap 2/1/2/2 and reports how many it cut', () => {
    const raw = {
      new_facts: [fact(1), fact(2), fact(3), fact(4)],
      corrections: [1, 2].map((n) => ({
        existing_file: `Facts/f${n}.md`,
        what_changed: 'x',
        source_turns: [n],
        new_confidence_hint: 'lower',
      })),
      connections: [1, 2, 3].map((n) => ({ file_a: 'a.md', file_b: 'b.md', relationship: 'r', source_turns: [n] })),
      open_questions: [question(1), question(2), question(3)],
    };
    const { output, truncated } = parseBatchAnswer(raw);
    expect(output.new_facts.map((f) => f.title)).toEqual(['fact_1', 'fact_2']);
    expect(output.corrections).toHaveLength(1);
    expect(output.connections).toHaveLength(2);
    expect(output.open_questions).toHaveLength(2);
    expect(truncated).toEqual({ new_facts: 2, corrections: 1, connections: 1, open_questions: 1 });
  });

  it('reads JSON wrapped in prose or code fences, and fills omitted categories', () => {
    const { output } = parseBatchAnswer(
      `Here you go:\n\`\`\`json\n${JSON.stringify({ new_facts: [fact(1)] })}\n\`\`\``,
    );
    expect(output).toEqual({
      new_facts: [{ ...fact(1), related_existing: [] }],
      corrections: [],
      connections: [],
      open_questions: [],
    });
  });

  it('rejects malformed output, naming the field and keeping the raw text', () => {
    expect(() => parseBatchAnswer('no json here')).toThrow(BatchAnswerError);
    expect(() => parseBatchAnswer('{"new_facts": [')).toThrow(/no JSON object|not valid JSON/);
    try {
      parseBatchAnswer({ new_facts: [{ ...fact(1), category: 'Gossip' }] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BatchAnswerError);
      expect((error as Error).message).toContain('new_facts.0.category');
      expect((error as BatchAnswerError).raw).toContain('Gossip');
    }
  });

  it('gives the model a tool schema with the four categories (and the optional assessment of req R-EVT-4)', () => {
    const schema = reflectionToolInputSchema() as { properties: Record<string, unknown>; $schema?: string };
    expect(Object.keys(schema.properties)).toEqual([
      'new_facts',
      'corrections',
      'connections',
      'open_questions',
      'assessment',
    ]);
    expect(schema.$schema).toBeUndefined();
  });

  it('shows the model the shape, not the storage limits, which the parse still enforces', () => {
    const text = JSON.stringify(reflectionToolInputSchema());
    for (const limit of ['maxLength', 'minLength', 'maxItems', '"default"', String(Number.MAX_SAFE_INTEGER)])
      expect(text).not.toContain(limit);
    expect(text).toContain('"enum":["Facts","Concepts","Patterns"]');
    expect(text).toContain('"required":["title","content","source_turns","category"]');
    const tooLong = { new_facts: [{ title: 'x'.repeat(121), content: 'c', source_turns: [1], category: 'Facts' }] };
    expect(() => parseBatchAnswer(tooLong)).toThrow(/new_facts\.0\.title/);
  });
});
