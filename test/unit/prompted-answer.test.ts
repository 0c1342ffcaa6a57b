/**
 * A structured answer asked for in the prompt (`answerShape: 'prompt'`): the type the
 * system prompt gives, rendered from the same schemas; the adapter's request (no tool, no
 * output schema) and how it reads the answer's text; the stand-in's recognition and its token
 * count; an unusable answer still retried on the next delivery.
 */
import { describe, expect, it } from 'vitest';
import { recordingClient } from '../helpers/bedrock-client.js';
import { answerNameOf, type ConverseRequest } from '../../infra/local/converse-protocol.js';
import { offlineResponder } from '../../infra/local/converse-server.js';
import { refusalOf } from '../../infra/local/converse-validation.js';
import { estimateInputTokens } from '../../infra/local/token-estimate.js';
import { BedrockConverseModel } from '../../lib/model/bedrock-converse-model.adapter.js';
import { modelSchemaOf } from '../../lib/model/model-schema.js';
import {
  PROMPTED_ANSWER_LEAD,
  promptedAnswerInstruction,
  promptedAnswerNameOf,
  typeOf,
} from '../../lib/model/prompted-answer.js';
import { parseBatchAnswer, reflectionToolInputSchema } from '../../lib/batches/batch-answer.js';
import { NightlyOutputSchema } from '../../lib/sleep-time/nightly.js';
import { toStructuredOutputSchema } from '../../lib/model/structured-output.js';
import type { ModelRequest } from '../../lib/model/language-model.port.js';

const HAIKU = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const NOVA = 'amazon.nova-lite-v1:0';

const request: ModelRequest = {
  system: 'You review turns.',
  prompt: '## Turns to review\n### 2026-02-07\n[Turn 1] User: I adopted a beagle named Rex.\nAgent: Congratulations!',
  toolName: 'record_reflection',
  toolDescription: 'Record what is new.',
  toolInputSchema: reflectionToolInputSchema(false),
  temperature: 0.6,
  maxTokens: 1500,
};

describe('the answer type rendered from the schema', () => {
  it('objects with optional fields, lists, non-empty lists, enums and unions', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: 'array', items: { type: 'integer' }, minItems: 1 },
        c: { type: 'array', items: { type: 'string', enum: ['x', 'y'] } },
        d: { type: 'object', properties: { n: { type: 'number', minimum: 0, maximum: 1 } }, required: ['n'] },
        e: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
      required: ['a', 'b'],
    };
    expect(typeOf(schema)).toBe('{a:string,b:[int,...int[]],c?:("x"|"y")[],d?:{n:number},e?:string|null}');
  });

  it('the reflection type names every field of the schema, and says which are required', () => {
    const type = typeOf(reflectionToolInputSchema(true));
    for (const field of [
      'new_facts?:',
      'title:string',
      'source_turns:[int,...int[]]',
      'related_existing?:string[]',
      'category:"Facts"|"Concepts"|"Patterns"',
      'new_confidence_hint:"higher"|"lower"|"same"',
      'why_unresolved?:string',
      'assessment?:{confidence:number,caution:number,sentiment:number}',
      'reflection?:{insight:string',
    ]) {
      expect(type).toContain(field);
    }
  });

  it('is far shorter than the structured output schema it replaces', () => {
    const instruction = promptedAnswerInstruction('record_reflection', reflectionToolInputSchema(false));
    expect(instruction.startsWith(PROMPTED_ANSWER_LEAD)).toBe(true);
    expect(instruction.length).toBeLessThan(JSON.stringify(reflectionToolInputSchema(false)).length / 2);
    expect(promptedAnswerNameOf(instruction)).toBe('record_reflection');
    expect(promptedAnswerNameOf('type record_reflection = {}')).toBeUndefined();
  });
});

describe("the adapter with answerShape 'prompt'", () => {
  for (const modelId of [HAIKU, NOVA]) {
    it(`${modelId}: no tool and no output schema; the type is the system prompt's last block; the JSON comes back parsed from prose and fences`, async () => {
      const answer = {
        new_facts: [
          { title: 'dog_rex', content: 'The user has a beagle named Rex.', source_turns: [1], category: 'Facts' },
        ],
      };
      const { client, sent } = recordingClient({ text: `Here it is:\n\`\`\`json\n${JSON.stringify(answer)}\n\`\`\`` });
      const r = await new BedrockConverseModel(client, modelId, { answerShape: 'prompt' }).reflect(request);
      expect(sent[0]?.toolConfig).toBeUndefined();
      expect(sent[0]?.outputConfig).toBeUndefined();
      expect(sent[0]?.system).toEqual([
        { text: 'You review turns.' },
        { text: promptedAnswerInstruction('record_reflection', request.toolInputSchema) },
      ]);
      expect(r.output).toEqual(answer);
      expect(r.usage.stopReason).toBe('end_turn');
    });
  }

  it('an answer with no JSON, or broken JSON, comes back as its whole text: the parse rejects it and keeps it', async () => {
    for (const text of ['Sorry, I cannot do that.', 'Sure: {"new_facts": [{"title": "x",}]}']) {
      const { client } = recordingClient({ text });
      const r = await new BedrockConverseModel(client, HAIKU, { answerShape: 'prompt' }).reflect(request);
      expect(r.output).toBe(text);
      expect(() => parseBatchAnswer(r.output)).toThrow(expect.objectContaining({ raw: text }));
    }
    const { client } = recordingClient({
      text: '{"new_facts": [{"title": "x", "content": "y", "source_turns": [], "category": "Facts"}]}',
    });
    const r = await new BedrockConverseModel(client, HAIKU, { answerShape: 'prompt' }).reflect(request);
    expect(() => parseBatchAnswer(r.output)).toThrow(/new_facts\.0\.source_turns/);
  });
});

describe('the Converse stand-in and a prompted answer', () => {
  const prompted = (schema: Record<string, unknown>, name: string): ConverseRequest => ({
    modelId: HAIKU,
    system: [{ text: 'You review turns.' }, { text: promptedAnswerInstruction(name, schema) }],
    messages: [{ role: 'user', content: [{ text: request.prompt }] }],
    inferenceConfig: { temperature: 0.6, maxTokens: 1500 },
  });

  it('accepts it as Bedrock would, names the answer by its type, and answers it in text', async () => {
    const req = prompted(request.toolInputSchema, 'record_reflection');
    expect(refusalOf(req, 'us-east-1')).toBeNull();
    expect(answerNameOf(req)).toBe('record_reflection');
    expect(answerNameOf(prompted(modelSchemaOf(NightlyOutputSchema), 'record_nightly_findings'))).toBe(
      'record_nightly_findings',
    );
    const reply = await offlineResponder(req);
    const body =
      'body' in reply
        ? (reply.body as { stopReason: string; output: { message: { content: Array<{ text?: string }> } } })
        : null;
    expect(body?.stopReason).toBe('end_turn');
    expect(parseBatchAnswer(body?.output.message.content[0]?.text).output.new_facts.length).toBeGreaterThan(0);
  });

  it('a summary request (its context as the system text) is not taken for one', () => {
    expect(
      answerNameOf({
        modelId: HAIKU,
        system: [{ text: '### 2026-02-07\n[Turn 1] User: type x = {}' }],
        messages: [{ role: 'user', content: [{ text: 'Summarise.' }] }],
      }),
    ).toBeUndefined();
  });

  it('counts the type as system text, with no hidden prompt: about 400 tokens fewer than structured output for a batch', () => {
    const req = prompted(request.toolInputSchema, 'record_reflection');
    const structured: ConverseRequest = {
      ...req,
      system: [{ text: 'You review turns.' }],
      outputConfig: {
        textFormat: {
          type: 'json_schema',
          structure: {
            jsonSchema: {
              name: 'record_reflection',
              schema: JSON.stringify(toStructuredOutputSchema(request.toolInputSchema)),
            },
          },
        },
      },
    };
    expect(estimateInputTokens(structured) - estimateInputTokens(req)).toBeGreaterThan(400);
  });
});
