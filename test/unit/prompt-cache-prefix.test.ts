/**
 * Whether Bedrock prompt caching could pay for a job kind: a cache checkpoint is only made when
 * the prompt prefix before it reaches the model's minimum tokens per checkpoint; below it the
 * call succeeds and nothing is cached
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html). The stable prefix
 * of each job's call — what precedes the first per-user text — is measured here from what the
 * real Converse adapter sends, with the local token estimate (infra/local/token-estimate.ts).
 * docs/design.md ("Prompt caching") states these figures; if a prompt grows past a minimum,
 * this test fails and the claim there must be revisited (and caching considered).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it } from 'vitest';
import type { ConverseRequest } from '../../infra/local/converse-protocol.js';
import { estimateInputTokens } from '../../infra/local/token-estimate.js';
import { stageConfig } from '../../infra/config/stages.js';
import { REFLECTOR_SYSTEM_PROMPT } from '../../lib/batches/batch-assembly.js';
import { reflectionToolInputSchema } from '../../lib/batches/batch-answer.js';
import { REFLECTION_TOOL } from '../../lib/batches/run-reflection.js';
import { BedrockConverseModel } from '../../lib/model/bedrock-converse-model.adapter.js';
import type { ModelRequest } from '../../lib/model/language-model.port.js';
import { modelSchemaOf } from '../../lib/model/model-schema.js';
import { NIGHTLY_SYSTEM_PROMPT, NIGHTLY_TOOL, NightlyOutputSchema } from '../../lib/sleep-time/nightly.js';
import { WEEKLY_SYSTEM_PROMPT, WEEKLY_TOOL, WeeklyOutputSchema } from '../../lib/sleep-time/weekly.js';
import { SUMMARY_CARRIED_PREAMBLE, SUMMARY_CONTEXT_PREAMBLE } from '../../lib/summaries/summary.js';

/** Minimum tokens per cache checkpoint (docs/design.md, "Prompt caching", cites them). */
const MIN_CACHEABLE = { haiku45: 4096, nova: 1000 } as const;

/** The Converse input the real adapter sends for a call, through a client that only records it. */
async function sent(shape: 'prompt' | 'schema', call: (m: BedrockConverseModel) => Promise<unknown>) {
  const inputs: ConverseRequest[] = [];
  const client = {
    send: async (command: { input: ConverseRequest }) => {
      inputs.push(command.input);
      return {
        output: { message: { role: 'assistant', content: [{ text: '{}' }] } },
        usage: { inputTokens: 1, outputTokens: 1 },
        stopReason: 'end_turn',
      };
    },
  } as unknown as BedrockRuntimeClient;
  await call(new BedrockConverseModel(client, 'anthropic.claude-haiku-4-5-20251001-v1:0', { answerShape: shape }));
  expect(inputs).toHaveLength(1);
  return inputs[0]!;
}

/** The tokens of everything but the user message: tools, system blocks, output schema, hidden prompts. */
const stablePrefix = (input: ConverseRequest): number => estimateInputTokens({ ...input, messages: [] });

const PER_USER = 'PER-USER TEXT';
const reflectCall =
  (system: string, toolName: string, toolDescription: string, schema: Record<string, unknown>) =>
  (m: BedrockConverseModel) =>
    m.reflect({
      system,
      prompt: PER_USER,
      toolName,
      toolDescription,
      toolInputSchema: schema,
      temperature: 0,
      maxTokens: 100,
    } satisfies ModelRequest);

const JOBS = {
  batch: reflectCall(
    REFLECTOR_SYSTEM_PROMPT,
    REFLECTION_TOOL.name,
    REFLECTION_TOOL.description,
    reflectionToolInputSchema(true),
  ),
  nightly: reflectCall(
    NIGHTLY_SYSTEM_PROMPT,
    NIGHTLY_TOOL.name,
    NIGHTLY_TOOL.description,
    modelSchemaOf(NightlyOutputSchema),
  ),
  weekly: reflectCall(
    WEEKLY_SYSTEM_PROMPT,
    WEEKLY_TOOL.name,
    WEEKLY_TOOL.description,
    modelSchemaOf(WeeklyOutputSchema),
  ),
};

describe('the stable prefix of each job kind against the minimum tokens of a cache checkpoint', () => {
  it('keeps the per-user text out of the system blocks of batch, nightly and weekly calls', async () => {
    for (const [kind, call] of Object.entries(JOBS)) {
      const input = await sent('prompt', call);
      expect(JSON.stringify(input.system), kind).not.toContain(PER_USER);
      expect(JSON.stringify(input.messages), kind).toContain(PER_USER);
    }
  });

  it('is below Claude Haiku 4.5’s minimum for batch reflection, and below Nova’s for nightly and weekly runs', async () => {
    const figures: Record<string, Record<string, number>> = {};
    for (const shape of ['prompt', 'schema'] as const) {
      for (const [kind, call] of Object.entries(JOBS)) {
        figures[kind] = { ...figures[kind], [shape]: stablePrefix(await sent(shape, call)) };
      }
    }
    // Printed for docs/design.md, "Prompt caching".
    console.info('stable prefix tokens', JSON.stringify(figures));
    // The batch reflector runs on the stage model, Claude Haiku 4.5, in every stage.
    expect(stageConfig('prod').modelId).toContain('claude-haiku-4-5');
    expect(Math.max(...Object.values(figures.batch!))).toBeLessThan(MIN_CACHEABLE.haiku45);
    // Nightly and weekly runs use Nova Lite in prod (jobModels.sleepTime), Haiku 4.5 elsewhere: below both.
    expect(stageConfig('prod').jobModels?.sleepTime).toContain('amazon.nova');
    for (const kind of ['nightly', 'weekly'] as const) {
      expect(Math.max(...Object.values(figures[kind]!)), kind).toBeLessThan(MIN_CACHEABLE.nova);
    }
  });

  it('is a preamble of a few dozen tokens for a summary, whose system block then carries the user’s turns', async () => {
    for (const preamble of [SUMMARY_CONTEXT_PREAMBLE, SUMMARY_CARRIED_PREAMBLE]) {
      const input = await sent('prompt', (m) =>
        m.summarize({ system: `${preamble}\n\n${PER_USER}`, prompt: 'Summarise.', temperature: 0, maxTokens: 100 }),
      );
      const prefix = estimateInputTokens({ modelId: input.modelId, system: [{ text: preamble }] });
      console.info('summary preamble tokens', prefix);
      expect(prefix).toBeLessThan(MIN_CACHEABLE.nova);
    }
  });
});
