/**
 * Structured output instead of a forced tool: the answer schemas cut to the JSON
 * Schema subset Bedrock and Anthropic accept, the adapter's request for a model that serves it
 * and for one that does not, the stand-in's refusals, and the input tokens counted for it.
 */
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it } from 'vitest';
import type { ConverseRequest } from '../../infra/local/converse-protocol.js';
import { refusalOf } from '../../infra/local/converse-validation.js';
import {
  estimateInputTokens,
  STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS,
  TOOL_USE_SYSTEM_PROMPT_TOKENS,
} from '../../infra/local/token-estimate.js';
import { BedrockConverseModel } from '../../lib/model/bedrock-converse-model.adapter.js';
import { supportsStructuredOutput } from '../../lib/model/bedrock-models.js';
import { modelSchemaOf } from '../../lib/model/model-schema.js';
import { reflectionToolInputSchema } from '../../lib/batches/batch-answer.js';
import { recordingClient } from '../helpers/bedrock-client.js';
import { NightlyOutputSchema } from '../../lib/sleep-time/nightly.js';
import { WeeklyOutputSchema } from '../../lib/sleep-time/weekly.js';
import { structuredOutputSchemaRefusal, toStructuredOutputSchema } from '../../lib/model/structured-output.js';
import type { ModelRequest } from '../../lib/model/language-model.port.js';

const HAIKU = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const NOVA = 'amazon.nova-lite-v1:0';

const answerSchemas = {
  batch: reflectionToolInputSchema(false),
  event: reflectionToolInputSchema(true),
  nightly: modelSchemaOf(NightlyOutputSchema),
  weekly: modelSchemaOf(WeeklyOutputSchema),
};

const reflectRequest: ModelRequest = {
  system: 'You review turns.',
  prompt: '## Turns\nTurn 1: I adopted a beagle named Rex.',
  toolName: 'record_reflection',
  toolDescription: 'Record what is new.',
  toolInputSchema: answerSchemas.batch,
  temperature: 0.6,
  maxTokens: 1500,
};

describe('the answer schemas in the structured output subset', () => {
  it('every answer schema, cut to the subset, is accepted; uncut, its numeric ranges and open objects are refused', () => {
    for (const [kind, schema] of Object.entries(answerSchemas)) {
      expect(structuredOutputSchemaRefusal(toStructuredOutputSchema(schema)), kind).toBeNull();
      expect(structuredOutputSchemaRefusal(schema), kind).not.toBeNull();
    }
    expect(structuredOutputSchemaRefusal(answerSchemas.batch)).toMatch(
      /For 'integer' type, property 'minimum' is not supported|'additionalProperties' must be explicitly set to false/,
    );
  });

  it('drops numeric, string-length and list-size limits, keeps a minimum of one item, and closes every object', () => {
    const cut = toStructuredOutputSchema({
      type: 'object',
      properties: {
        n: { type: 'number', minimum: 0, maximum: 1, description: '0..1' },
        ids: { type: 'array', minItems: 3, maxItems: 9, items: { type: 'integer', minimum: 1 } },
        s: { type: 'string', maxLength: 5 },
      },
    });
    expect(cut).toEqual({
      type: 'object',
      properties: {
        n: { type: 'number', description: '0..1' },
        ids: { type: 'array', minItems: 1, items: { type: 'integer' } },
        s: { type: 'string' },
      },
      additionalProperties: false,
    });
  });

  it('refuses what Anthropic lists as unsupported, and more optional parameters than the limit', () => {
    const closed = (properties: Record<string, unknown>, required: string[] = Object.keys(properties)) => ({
      type: 'object',
      properties,
      required,
      additionalProperties: false,
    });
    expect(
      structuredOutputSchemaRefusal(closed({ a: { type: 'array', minItems: 2, items: { type: 'string' } } })),
    ).toMatch(/minItems values other than 0 or 1/);
    expect(structuredOutputSchemaRefusal(closed({ a: { type: 'string', maxLength: 3 } }))).toMatch(
      /property 'maxLength' is not supported/,
    );
    expect(structuredOutputSchemaRefusal(closed({ a: { $ref: 'http://example.com/s.json' } }))).toMatch(
      /external \$ref/,
    );
    expect(structuredOutputSchemaRefusal({ type: 'object', properties: { a: { type: 'string' } } })).toMatch(
      /additionalProperties' must be explicitly set to false/,
    );
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(structuredOutputSchemaRefusal(closed(many, []))).toMatch(/25 optional parameters, more than the 24 allowed/);
    // A property may be named like a keyword: only schemas are checked, not the names of properties.
    expect(structuredOutputSchemaRefusal(closed({ minimum: { type: 'string' } }))).toBeNull();
  });
});

describe('the adapter asks as the model serves it', () => {
  it('Claude Haiku 4.5: outputConfig with the schema as a JSON string, no toolConfig; the JSON text comes back parsed', async () => {
    expect(supportsStructuredOutput(HAIKU)).toBe(true);
    const answer = {
      new_facts: [
        { title: 'dog_rex', content: 'The user has a beagle named Rex.', source_turns: [1], category: 'Facts' },
      ],
    };
    const { client, sent } = recordingClient({ text: JSON.stringify(answer) });
    const r = await new BedrockConverseModel(client, HAIKU).reflect(reflectRequest);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.toolConfig).toBeUndefined();
    const format = sent[0]?.outputConfig?.textFormat;
    expect(format?.type).toBe('json_schema');
    const jsonSchema = format?.structure && 'jsonSchema' in format.structure ? format.structure.jsonSchema : undefined;
    // Named, without the description: the system prompt says what the answer is for.
    expect(jsonSchema?.name).toBe('record_reflection');
    expect(jsonSchema).not.toHaveProperty('description');
    expect(JSON.parse(jsonSchema?.schema ?? '')).toEqual(toStructuredOutputSchema(answerSchemas.batch));
    expect(r.output).toEqual(answer);
    expect(r.usage.stopReason).toBe('end_turn');
  });

  it('an answer that holds no JSON comes back as its text (the use cases find it unusable)', async () => {
    const { client } = recordingClient({ text: 'Sure! {"new_facts": [' });
    expect((await new BedrockConverseModel(client, HAIKU).reflect(reflectRequest)).output).toBe(
      'Sure! {"new_facts": [',
    );
  });

  it('Nova Lite (no structured output): the forced tool, no outputConfig', async () => {
    expect(supportsStructuredOutput(NOVA)).toBe(false);
    const { client, sent } = recordingClient({ toolUse: { name: 'record_reflection', input: { new_facts: [] } } });
    const r = await new BedrockConverseModel(client, NOVA).reflect(reflectRequest);
    expect(sent[0]?.outputConfig).toBeUndefined();
    expect(sent[0]?.toolConfig).toMatchObject({
      tools: [{ toolSpec: { name: 'record_reflection', inputSchema: { json: answerSchemas.batch } } }],
      toolChoice: { tool: { name: 'record_reflection' } },
    });
    expect(r.output).toEqual({ new_facts: [] });
  });
});

/** What the adapter sends to a model with structured output, as the stand-in reads it. */
async function sentFor(modelId: string, request: ModelRequest): Promise<ConverseRequest> {
  const { client, sent } = recordingClient({ text: '{}' });
  await new BedrockConverseModel(client, modelId).reflect(request);
  return JSON.parse(JSON.stringify(new ConverseCommand(sent[0] as ConverseCommand['input']).input)) as ConverseRequest;
}

describe('the Converse stand-in and structured output', () => {
  it("accepts the reflector's structured requests for every answer schema", async () => {
    for (const schema of Object.values(answerSchemas)) {
      expect(refusalOf(await sentFor(HAIKU, { ...reflectRequest, toolInputSchema: schema }), 'us-east-1')).toBeNull();
    }
  });

  it('refuses structured output for a model that does not serve it, a schema outside the subset, and a type other than json_schema', async () => {
    const ok = await sentFor(HAIKU, reflectRequest);
    expect(refusalOf({ ...ok, modelId: NOVA }, 'us-east-1')?.message).toBe(
      "This model doesn't support the textFormat field.",
    );
    const raw = {
      ...ok,
      outputConfig: {
        textFormat: {
          type: 'json_schema',
          structure: { jsonSchema: { name: 'record_reflection', schema: JSON.stringify(answerSchemas.nightly) } },
        },
      },
    };
    expect(refusalOf(raw, 'us-east-1')).toMatchObject({
      status: 400,
      errorType: 'ValidationException',
      message: expect.stringMatching(/^The model returned the following errors: output_config\.format\.schema/),
    });
    const text = {
      ...ok,
      outputConfig: { textFormat: { type: 'text', structure: ok.outputConfig?.textFormat?.structure } },
    };
    expect(refusalOf(text, 'us-east-1')?.message).toBe(
      "1 validation error detected: Value 'text' at 'outputConfig.textFormat.type' failed to satisfy constraint: Member must satisfy enum value set: [json_schema]",
    );
  });

  it('counts structured output as Bedrock bills it: the schema and its prompt, not the 588-token tool-use prompt', async () => {
    const structured = await sentFor(HAIKU, reflectRequest);
    const format = structured.outputConfig?.textFormat?.structure?.jsonSchema;
    const text = `${structured.system?.[0]?.text}\n${structured.messages?.[0]?.content[0]?.text}`;
    expect(format?.description).toBeUndefined();
    const chars = text.length - 1 + [format?.name, format?.schema].join('\n').length;
    expect(estimateInputTokens(structured)).toBe(Math.ceil(chars / 3.5) + STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS);
    const { client, sent } = recordingClient({ toolUse: { name: 'record_reflection', input: {} } });
    await new BedrockConverseModel(client, NOVA).reflect(reflectRequest);
    const tool = { ...(JSON.parse(JSON.stringify(sent[0])) as ConverseRequest), modelId: HAIKU };
    // The same answer schema asked through a forced tool costs the hidden tool-use prompt on top.
    expect(estimateInputTokens(tool) - estimateInputTokens(structured)).toBeGreaterThan(
      TOOL_USE_SYSTEM_PROMPT_TOKENS - STRUCTURED_OUTPUT_SYSTEM_PROMPT_TOKENS,
    );
  });
});
