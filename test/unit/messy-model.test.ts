/**
 * Every way the messy model writes an answer wrong (infra/local/messy-model.ts), read back
 * through the real parsers: the batch reflection's (parseBatchAnswer) and the sleep-time
 * runs' (answerValueOf + the zod schema). Recoverable messes give the clean answer; cut and
 * empty answers give no usable value.
 */
import { describe, expect, it } from 'vitest';
import type { ConverseReply, ConverseRequest } from '../../infra/local/converse-protocol.js';
import {
  EXTRA_FIELD,
  MESS_KINDS,
  type MessKind,
  messUp,
  messyModel,
  vocabularyOf,
} from '../../infra/local/messy-model.js';
import { answerJsonOf, answerValueOf, withoutTrailingCommas } from '../../lib/model/model-answer.js';
import { modelSchemaOf } from '../../lib/model/model-schema.js';
import { promptedAnswerInstruction } from '../../lib/model/prompted-answer.js';
import { parseBatchAnswer, BatchAnswerError, reflectionToolInputSchema } from '../../lib/batches/batch-answer.js';
import { NightlyOutputSchema } from '../../lib/sleep-time/nightly.js';
import { toStructuredOutputSchema } from '../../lib/model/structured-output.js';

const ANSWER = {
  new_facts: [
    {
      title: 'dog_rex',
      content: 'The user adopted a beagle named Rex.',
      source_turns: [1],
      related_existing: ['Facts/pets.md'],
      category: 'Facts',
    },
  ],
  corrections: [
    {
      existing_file: 'Facts/home.md',
      what_changed: 'Moved to Lisbon.',
      source_turns: [2],
      new_confidence_hint: 'lower',
    },
  ],
  connections: [],
  open_questions: [{ question: 'Why did the user move?', source_turns: [2], why_unresolved: 'not said' }],
};
const NAME = 'record_reflection';
const schema = reflectionToolInputSchema(false);
const base: ConverseRequest = {
  modelId: 'm',
  messages: [{ role: 'user', content: [{ text: 'turns' }] }],
  inferenceConfig: { maxTokens: 1500 },
};
const SHAPES: Record<'prompt' | 'tool' | 'schema', ConverseRequest> = {
  prompt: { ...base, system: [{ text: 'sys' }, { text: promptedAnswerInstruction(NAME, schema) }] },
  tool: {
    ...base,
    system: [{ text: 'sys' }],
    toolConfig: {
      tools: [{ toolSpec: { name: NAME, inputSchema: { json: schema } } }],
      toolChoice: { tool: { name: NAME } },
    },
  },
  schema: {
    ...base,
    system: [{ text: 'sys' }],
    outputConfig: {
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { name: NAME, schema: JSON.stringify(toStructuredOutputSchema(schema)) } },
      },
    },
  },
};
const cleanReply = (request: ConverseRequest, answer: unknown = ANSWER): ConverseReply => ({
  body: {
    output: {
      message: {
        role: 'assistant',
        content: request.toolConfig
          ? [{ toolUse: { toolUseId: 't', name: NAME, input: answer } }]
          : [{ text: JSON.stringify(answer) }],
      },
    },
    stopReason: request.toolConfig ? 'tool_use' : 'end_turn',
    usage: { inputTokens: 100, outputTokens: 50, totalTokens: 150 },
  },
});
/** What the model adapter hands the parser: the tool's input, else the answer's text. */
const outputOf = (reply: ConverseReply | null): unknown => {
  const content = (
    reply as { body: { output: { message: { content: Array<{ text?: string; toolUse?: { input: unknown } }> } } } }
  ).body.output.message.content;
  return content[0]?.toolUse?.input ?? content.map((c) => c.text ?? '').join('');
};
const stopOf = (reply: ConverseReply | null) => (reply as { body: { stopReason: string } }).body.stopReason;
const clean = parseBatchAnswer(ANSWER).output;

describe('the messy model, read back through the real parser', () => {
  for (const kind of ['fenced', 'prose-before', 'prose-after', 'trailing-comma', 'enum-case', 'extra-field'] as const) {
    it(`${kind}: the parser recovers the clean answer from a prompted answer`, () => {
      const messy = messUp(SHAPES.prompt, cleanReply(SHAPES.prompt), kind);
      const raw = outputOf(messy);
      // Really messed up: not JSON as it stands, or JSON other than the clean answer.
      if (kind === 'enum-case' || kind === 'extra-field') expect(raw).not.toBe(JSON.stringify(ANSWER));
      else expect(() => JSON.parse(raw as string)).toThrow();
      expect(parseBatchAnswer(raw).output).toEqual(clean);
    });
  }

  it('each kind changes the answer as it says', () => {
    const text = (kind: MessKind) => outputOf(messUp(SHAPES.prompt, cleanReply(SHAPES.prompt), kind)) as string;
    expect(text('fenced')).toMatch(/^```json\n\{[\s\S]*\}\n```$/);
    expect(text('prose-before')).toMatch(/^Here is[^{]*\n\{/);
    expect(text('prose-after')).toMatch(/\}\n\nI based/);
    expect(text('trailing-comma')).toMatch(/,\n\}$/);
    expect(text('enum-case')).toContain('"category":"facts"');
    expect(JSON.parse(text('extra-field')).new_facts[0][EXTRA_FIELD]).toBeTypeOf('string');
    expect(JSON.parse(text('missing-optional')).new_facts[0]).not.toHaveProperty('related_existing');
  });

  it('missing-optional: the parser gives the field its default', () => {
    for (const request of Object.values(SHAPES)) {
      const { output } = parseBatchAnswer(outputOf(messUp(request, cleanReply(request), 'missing-optional')));
      expect(output).toEqual({ ...clean, new_facts: [{ ...clean.new_facts[0], related_existing: [] }] });
    }
  });

  it('a tool call: the input stays JSON; enum case and extra fields are recovered', () => {
    for (const kind of ['enum-case', 'extra-field'] as const) {
      const raw = outputOf(messUp(SHAPES.tool, cleanReply(SHAPES.tool), kind));
      expect(typeof raw).toBe('object');
      expect(raw).not.toEqual(ANSWER);
      expect(parseBatchAnswer(raw).output).toEqual(clean);
    }
  });

  it('cut and empty answers abort: no usable content (a cut one says max_tokens, for the budget retry)', () => {
    for (const request of Object.values(SHAPES)) {
      const cut = messUp(request, cleanReply(request), 'cut');
      expect(stopOf(cut)).toBe('max_tokens');
      expect(() => parseBatchAnswer(outputOf(cut))).toThrow(BatchAnswerError);
      const empty = messUp(request, cleanReply(request), 'empty');
      expect(outputOf(empty)).toBe('');
      expect(() => parseBatchAnswer(outputOf(empty))).toThrow(/holds no JSON object/);
    }
  });

  it('the sleep-time parse recovers a nightly answer the same way (an upper-case enum miscased)', () => {
    const nightly = {
      findings: [
        { category: 'preference', confidence: 'HIGH', statement: 'Likes tea.', evidence_turns: [1], subject: 'user' },
      ],
    };
    const request: ConverseRequest = {
      ...base,
      system: [{ text: promptedAnswerInstruction('record_nightly_findings', modelSchemaOf(NightlyOutputSchema)) }],
    };
    for (const kind of [
      'fenced',
      'prose-before',
      'prose-after',
      'trailing-comma',
      'enum-case',
      'extra-field',
      'missing-optional',
    ] as const) {
      const raw = outputOf(messUp(request, cleanReply(request, nightly), kind));
      const parsed = NightlyOutputSchema.safeParse(answerValueOf(raw, NightlyOutputSchema));
      expect(parsed.success, `${kind}: ${String(raw)}`).toBe(true);
      expect(parsed.data?.findings[0]).toMatchObject({
        category: 'preference',
        confidence: 'HIGH',
        statement: 'Likes tea.',
      });
    }
  });

  it('a shape gets only what it can really get wrong', () => {
    const drawn = (shape: keyof typeof SHAPES) => {
      const model = messyModel(async (r) => cleanReply(r), { rate: 1, seed: 7 });
      return Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          model.responder({ ...SHAPES[shape], messages: [{ role: 'user', content: [{ text: `turns ${i}` }] }] }),
        ),
      ).then(() => model.counts());
    };
    return Promise.all([drawn('prompt'), drawn('tool'), drawn('schema')]).then(([prompt, tool, schemaShape]) => {
      expect(MESS_KINDS.filter((k) => prompt[k] > 0)).toEqual([...MESS_KINDS]);
      expect(MESS_KINDS.filter((k) => tool[k] > 0)).toEqual([
        'enum-case',
        'extra-field',
        'missing-optional',
        'cut',
        'empty',
      ]);
      expect(MESS_KINDS.filter((k) => schemaShape[k] > 0)).toEqual(['missing-optional', 'cut', 'empty']);
    });
  });

  it('draws at the rate, seeded: the same seed messes up the same answers, another seed others; summaries are left alone', async () => {
    const run = async (seed: number) => {
      const model = messyModel(async (r) => cleanReply(r), { rate: 0.3, seed });
      const replies = [];
      for (let i = 0; i < 200; i++)
        replies.push(
          JSON.stringify(
            await model.responder({
              ...SHAPES.prompt,
              messages: [{ role: 'user', content: [{ text: `turns ${i}` }] }],
            }),
          ),
        );
      return { replies, total: model.total() };
    };
    const [a, b, c] = await Promise.all([run(1), run(1), run(2)]);
    expect(a).toEqual(b);
    expect(a.replies).not.toEqual(c.replies);
    expect(a.total).toBeGreaterThan(40);
    expect(a.total).toBeLessThan(80);
    const summaries = messyModel(async (r) => cleanReply(r, 'a summary'), { rate: 1 });
    await summaries.responder({ ...base, system: [{ text: 'summarize' }] });
    expect(summaries.total()).toBe(0);
  });

  it('the same request asked again draws afresh (a redelivery is not doomed to the same mess)', async () => {
    const model = messyModel(async (r) => cleanReply(r), { rate: 0.5, seed: 3 });
    const replies = new Set<string>();
    for (let i = 0; i < 12; i++) replies.add(JSON.stringify(await model.responder(SHAPES.prompt)));
    expect(replies.size).toBeGreaterThan(1);
  });

  it('reads the vocabulary of each shape: enum values and optional fields', () => {
    for (const request of Object.values(SHAPES)) {
      const v = vocabularyOf(request);
      expect([...v.enums]).toEqual(
        expect.arrayContaining(['Facts', 'Concepts', 'Patterns', 'higher', 'lower', 'same']),
      );
      expect([...v.optional]).toEqual(expect.arrayContaining(['related_existing', 'why_unresolved', 'new_facts']));
      expect(v.optional.has('title')).toBe(false);
    }
  });
});

describe('model-answer: reading an answer as real models write it', () => {
  it('drops trailing commas outside strings only', () => {
    expect(withoutTrailingCommas('{"a": [1, 2, ], "b": "x, ]",\n}')).toBe('{"a": [1, 2 ], "b": "x, ]"\n}');
    expect(answerJsonOf('Sure:\n```json\n{"a": [1,],}\n```\nDone.')).toEqual({ a: [1] });
  });

  it('gives nothing for text with no object, or an object cut short', () => {
    expect(answerJsonOf('')).toBeUndefined();
    expect(answerJsonOf('I cannot help with that.')).toBeUndefined();
    expect(answerJsonOf('{"new_facts": [{"title": "dog')).toBeUndefined();
  });

  it('a required field missing or of the wrong type still fails, naming the field', () => {
    const { title: _dropped, ...untitled } = ANSWER.new_facts[0] as Record<string, unknown>;
    expect(() => parseBatchAnswer({ ...ANSWER, new_facts: [untitled] })).toThrow(/new_facts\.0\.title/);
    expect(() => parseBatchAnswer({ ...ANSWER, new_facts: [{ ...ANSWER.new_facts[0], category: 'Gossip' }] })).toThrow(
      /new_facts\.0\.category/,
    );
  });
});
