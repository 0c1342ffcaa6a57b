/**
 * A model per job: a stage that gives summaries and sleep-time runs their own model
 * (infra/config/stages.ts `jobModels`) has its reflector call that model for those jobs and
 * the stage's `modelId` for batches, with the synthesized role allowed to invoke each (IAM is
 * enforced from the template: a missing grant is a denial).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageConfig } from '../../infra/config/stages.js';
import { type ConverseRequest, offlineResponder } from '../../infra/local/converse-server.js';
import { answerNameOf } from '../../infra/local/converse-protocol.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { REFLECTION_TOOL } from '../../lib/batches/run-reflection.js';
import { NIGHTLY_TOOL } from '../../lib/sleep-time/nightly.js';
import { WEEKLY_TOOL } from '../../lib/sleep-time/weekly.js';

const SAMPLE = new URL('../../events/samples/conversation.jsonl', import.meta.url);
const NOVA_LITE = 'amazon.nova-lite-v1:0';

let stack: LocalHarness;
const calls: Array<{ modelId: string; job: string }> = [];

/** Which job a Converse request is: the name of its structured answer (a forced tool or a structured output schema), or a summary (free text). */
function jobOf(req: ConverseRequest): string {
  const answer = answerNameOf(req);
  const jobs: Record<string, string> = {
    [REFLECTION_TOOL.name]: 'batch',
    [NIGHTLY_TOOL.name]: 'nightly',
    [WEEKLY_TOOL.name]: 'weekly',
  };
  return answer === undefined ? 'summary' : (jobs[answer] ?? answer);
}

beforeAll(async () => {
  // The sample's weeks each hold one day of conversation, which a weekly run skips by default (weeklyMinDays 2): asked for every week here, so the weekly call is seen.
  const config = {
    ...stageConfig('dev'),
    jobModels: { summary: NOVA_LITE, sleepTime: NOVA_LITE },
    sleepTime: { ...stageConfig('dev').sleepTime, weeklyMinDays: 1 },
  };
  stack = await startHarness({
    stage: 'jobmodels',
    config,
    responder: (req) => {
      calls.push({ modelId: req.modelId, job: jobOf(req) });
      return offlineResponder(req);
    },
  });
  await stack.replayLines(readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean), { clock: true });
  await stack.waitUntilDrained();
  await stack.advanceTo(new Date(stack.now().getTime() + 24 * 3_600_000));
  await stack.waitUntilDrained();
}, 300_000);
afterAll(async () => {
  await stack?.stop();
});

describe('a model per job (stage jobModels)', () => {
  it('runs batches on the stage model, summaries and sleep-time runs on theirs, each allowed by the synthesized role', async () => {
    const modelsOf = (job: string) => [...new Set(calls.filter((c) => c.job === job).map((c) => c.modelId))];
    expect(modelsOf('batch')).toEqual(['us.anthropic.claude-haiku-4-5-20251001-v1:0']);
    for (const job of ['summary', 'nightly', 'weekly']) expect(modelsOf(job), job).toEqual([`us.${NOVA_LITE}`]);
    expect(stack.info.environments.reflector.SUMMARY_MODEL_ID).toBe(`us.${NOVA_LITE}`);
    const summary = await stack.report();
    expect(summary.errors).toBe(0);
    expect(summary.iamDenied).toBe(0);
  });
});
