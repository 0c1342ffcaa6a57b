/**
 * Structured output refused (docs/design.md, "Structured answers"): with `answerShape: 'schema'`
 * and a model that lists structured output, Bedrock may still refuse `outputConfig`
 * ("output_config.format: Extra inputs are not permitted"). Through the real reflector handler
 * on the local harness, with the stand-in refusing it: the first batch call is refused, the job
 * still completes (asked again at once with a forced tool), later calls never send
 * `outputConfig`, and one WARN line says so.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stageConfig } from '../../infra/config/stages.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { refusingStructuredOutput } from '../../infra/local/structured-output-refusal.js';
import { smokeConversation } from '../../infra/smoke/conversation.js';

const WARNING = 'Bedrock refused structured output for this model';
let stack: LocalHarness;
const logged: string[] = [];

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (String(chunk).includes(WARNING)) logged.push(String(chunk));
      return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    });
  }
  stack = await startHarness({
    stage: 'sofallback',
    logLevel: 'WARN',
    speed: 300,
    config: { ...stageConfig('dev'), answerShape: 'schema' },
    responder: refusingStructuredOutput(),
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  vi.restoreAllMocks();
});

describe('structured output refused by Bedrock', () => {
  it('falls back to a forced tool for the rest of the container, logged once', async () => {
    const requests = stack.emulators.converse.requests;
    // Two users, each a batch of 10 turns, a session-close batch and a summary: several structured calls.
    for (const userId of ['so-user-a', 'so-user-b']) {
      const c = smokeConversation(userId, new Date());
      await stack.publisher.publish(c.turns);
      await stack.publisher.publish([c.close]);
      await stack.waitUntilDrained();
    }
    const summary = await stack.report();
    expect(summary.batches).toBeGreaterThanOrEqual(4);
    expect(summary.batchesAborted).toBe(0);
    expect(summary.handlerErrors).toBe(0);

    const structured = requests.filter((r) => r.outputConfig !== undefined);
    const tool = requests.filter((r) => r.toolConfig?.toolChoice?.tool !== undefined);
    // Only the very first call asked with outputConfig; every batch after it with a forced tool.
    expect(structured).toHaveLength(1);
    const asked = requests.filter((r) => r.outputConfig !== undefined || r.toolConfig !== undefined);
    expect(asked[0]?.outputConfig).toBeDefined();
    expect(tool.length).toBeGreaterThanOrEqual(summary.batches);
    expect(tool[0]?.modelId).toBe(structured[0]?.modelId);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('"level":"WARN"');
    expect(logged[0]).toContain(structured[0]?.modelId ?? '?');
  }, 120_000);
});
