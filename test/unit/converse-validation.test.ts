import { describe, expect, it } from 'vitest';
import type { ConverseRequest } from '../../infra/local/converse-protocol.js';
import { INVALID_MODEL_ID, refusalOf } from '../../infra/local/converse-validation.js';

const HAIKU = 'anthropic.claude-haiku-4-5-20251001-v1:0';
const NOVA = 'amazon.nova-lite-v1:0';

/** A request the reflector could send: one tool, forced, a system prompt and one user message. */
const request = (over: Partial<ConverseRequest> = {}): ConverseRequest => ({
  modelId: `us.${HAIKU}`,
  system: [{ text: 'You review turns.' }],
  messages: [{ role: 'user', content: [{ text: 'Turn 1: I adopted a beagle.' }] }],
  inferenceConfig: { temperature: 0.6, maxTokens: 1500 },
  toolConfig: {
    tools: [{ toolSpec: { name: 'record_reflection' } }],
    toolChoice: { tool: { name: 'record_reflection' } },
  },
  ...over,
});
const validation = (message: string) => ({ status: 400, errorType: 'ValidationException', message });

describe('the Converse stand-in refuses what Bedrock refuses', () => {
  it("answers a valid request of the Region's profile and of the offline model", () => {
    expect(refusalOf(request(), 'us-east-1')).toBeNull();
    expect(refusalOf(request({ modelId: 'offline.rule-reflector-v1' }), 'us-east-1')).toBeNull();
    expect(refusalOf(request({ modelId: `global.${HAIKU}` }), 'us-east-1')).toBeNull();
    expect(refusalOf(request({ modelId: NOVA }), 'us-east-1')).toBeNull();
  });

  it('an unknown model id', () => {
    expect(refusalOf(request({ modelId: 'anthropic.claude-v9' }), 'us-east-1')).toEqual(validation(INVALID_MODEL_ID));
    expect(refusalOf(request({ modelId: 'us.anthropic.claude-v9' }), 'us-east-1')).toEqual(
      validation(INVALID_MODEL_ID),
    );
  });

  it('a bare id of a model that needs an inference profile', () => {
    expect(refusalOf(request({ modelId: HAIKU }), 'us-east-1')).toEqual(
      validation(
        `Invocation of model ID ${HAIKU} with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model.`,
      ),
    );
    // Nova Lite is served on demand in us-east-1, not in eu-west-1.
    expect(refusalOf(request({ modelId: NOVA }), 'eu-west-1')?.message).toMatch(
      /^Invocation of model ID amazon\.nova-lite-v1:0 with on-demand throughput/,
    );
  });

  it('a profile prefix that does not match the Region, or that the model does not have', () => {
    expect(refusalOf(request({ modelId: `eu.${HAIKU}` }), 'us-east-1')).toEqual(validation(INVALID_MODEL_ID));
    expect(refusalOf(request({ modelId: `us.${HAIKU}` }), 'eu-west-1')).toEqual(validation(INVALID_MODEL_ID));
    expect(refusalOf(request({ modelId: `eu.${HAIKU}` }), 'eu-west-1')).toBeNull();
    expect(refusalOf(request({ modelId: `apac.${HAIKU}` }), 'ap-southeast-1')).toEqual(validation(INVALID_MODEL_ID));
  });

  it('temperature and topP together, for a model that takes one of them', () => {
    const both = { inferenceConfig: { temperature: 0.6, topP: 0.9, maxTokens: 100 } };
    expect(refusalOf(request(both), 'us-east-1')).toEqual(
      validation(
        'The model returned the following errors: `temperature` and `top_p` cannot both be specified for this model. Please use only one.',
      ),
    );
    expect(refusalOf(request({ ...both, modelId: NOVA }), 'us-east-1')).toBeNull();
    expect(refusalOf(request({ inferenceConfig: { topP: 0.9, maxTokens: 100 } }), 'us-east-1')).toBeNull();
  });

  it("maxTokens above the model's limit (the limit itself is allowed)", () => {
    expect(refusalOf(request({ inferenceConfig: { maxTokens: 64_001 } }), 'us-east-1')).toEqual(
      validation(
        'The maximum tokens you requested exceeds the model limit of 64000. Try again with a maximum tokens value that is lower than 64000.',
      ),
    );
    expect(refusalOf(request({ inferenceConfig: { maxTokens: 64_000 } }), 'us-east-1')).toBeNull();
    expect(
      refusalOf(request({ modelId: 'offline.rule-reflector-v1', inferenceConfig: { maxTokens: 8_193 } }), 'us-east-1')
        ?.message,
    ).toContain('model limit of 8192');
  });

  it('blank text in a message: empty or whitespace only', () => {
    for (const text of ['', '  \n\t ']) {
      const messages = [{ role: 'user', content: [{ text: 'fine' }, { text }] }];
      expect(refusalOf(request({ messages }), 'us-east-1')).toEqual(
        validation(
          'The text field in the ContentBlock object at messages.0.content.1 is blank. Add text to the text field, and try again.',
        ),
      );
    }
  });

  it('blank text in the system prompt', () => {
    expect(refusalOf(request({ system: [{ text: '' }] }), 'us-east-1')).toEqual(
      validation(
        "1 validation error detected: Value '' at 'system.1.member.text' failed to satisfy constraint: Member must have length greater than or equal to 1",
      ),
    );
    expect(refusalOf(request({ system: [{ text: ' \n ' }] }), 'us-east-1')).toEqual(
      validation(
        'The model returned the following errors: system: text content blocks must contain non-whitespace text',
      ),
    );
  });

  it('a tool name outside [a-zA-Z0-9_-]+ or longer than 64 characters', () => {
    const tools = (name: string) => ({
      toolConfig: {
        tools: [{ toolSpec: { name: 'ok' } }, { toolSpec: { name } }],
        toolChoice: { tool: { name: 'ok' } },
      },
    });
    expect(refusalOf(request(tools('record reflection')), 'us-east-1')).toEqual(
      validation(
        "1 validation error detected: Value 'record reflection' at 'toolConfig.tools.2.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
      ),
    );
    expect(refusalOf(request(tools('x'.repeat(65))), 'us-east-1')?.message).toMatch(
      /at 'toolConfig\.tools\.2\.member\.toolSpec\.name' failed to satisfy constraint: Member must have length less than or equal to 64$/,
    );
    expect(refusalOf(request(tools('x'.repeat(64))), 'us-east-1')).toBeNull();
    expect(refusalOf(request(tools('record.reflection')), 'us-east-1')?.errorType).toBe('ValidationException');
  });

  it('a toolChoice naming a tool that is not in tools', () => {
    const refusal = refusalOf(
      request({
        toolConfig: {
          tools: [{ toolSpec: { name: 'record_reflection' } }],
          toolChoice: { tool: { name: 'record_findings' } },
        },
      }),
      'us-east-1',
    );
    expect(refusal).toMatchObject({
      status: 400,
      errorType: 'ValidationException',
      message: expect.stringContaining("'record_findings'"),
    });
  });
});
