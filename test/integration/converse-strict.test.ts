/**
 * The real Bedrock adapter against the strict Converse stand-in on loopback: the reflector's
 * own requests (reflection, nightly and weekly answers as structured output or through a forced
 * tool, summaries) pass Bedrock's checks for the default cloud model of us-east-1, the offline
 * model and a model without structured output (Nova Lite), and Bedrock's other answers reach
 * the use cases as they would in the cloud.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import { stageConfig } from '../../infra/config/stages.js';
import {
  ACCESS_DENIED,
  answerNameOf,
  cutReply,
  MODEL_ERROR,
  malformedToolUseReply,
} from '../../infra/local/converse-protocol.js';
import { type ConverseServer, offlineResponder, startConverseServer } from '../../infra/local/converse-server.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../infra/local/emulators.js';
import { BedrockConverseModel } from '../../lib/model/bedrock-converse-model.adapter.js';
import { configureFaults, faultCounts, injectFaults, withDelivery } from '../../infra/local/fault-injection.js';
import { invocationFor, OFFLINE_MODEL_ID } from '../../lib/model/bedrock-models.js';
import { defaultSleepTimeConfig } from '../../lib/sleep-time/config.js';
import { defaultSummarySettings } from '../../lib/summaries/summary.js';
import { ModelAccessDeniedError, ModelUnavailableError } from '../../lib/model/language-model.port.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { runReflection } from '../../lib/batches/run-reflection.js';
import { runNightly, runWeekly } from '../../lib/sleep-time/run-sleep-time.js';
import { runSummary } from '../../lib/summaries/run-summary.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { MemorySettings } from '../../lib/settings/user-settings.fake.js';
import { MemoryItems } from '../../lib/items/memory-item.fake.js';
import { MemoryGraphStore } from '../../lib/graph/graph.fake.js';
import { MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';
import { MemorySleepTimeLog } from '../../lib/sleep-time/sleep-time-log.fake.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { fixedClock, RecordingLog } from '../../lib/kernel/runtime.fake.js';
import { MemorySummaryStore, MemorySummarySource } from '../../lib/summaries/summary.fake.js';

let server: ConverseServer;
let client: BedrockRuntimeClient;

beforeAll(async () => {
  server = await startConverseServer({ region: LOCAL_REGION });
  client = new BedrockRuntimeClient({
    endpoint: server.url,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
});
afterAll(async () => {
  client?.destroy();
  await server?.close();
});

const dev = stageConfig('dev');
const CLOUD_MODEL_ID = invocationFor(dev.modelId, LOCAL_REGION, dev.inferenceScope).modelId;
/** A model without structured output (lib/model/bedrock-models.ts): asked through a forced tool. */
const TOOL_MODEL_ID = 'amazon.nova-lite-v1:0';

const queries = [
  'I adopted a beagle named Rex',
  'I love jazz',
  'I love jazz records',
  'I love jazz clubs',
  'My sister Anna lives in Lyon',
];
const job = (kind: Job['kind'], jobId: string, turnIds: number[]): Job => ({
  type: 'reflector.job',
  version: 1,
  jobId,
  userId: 'alice',
  kind,
  trigger: 'test',
  urgency: 0,
  turnIds,
  requestedAt: '2026-02-07T03:00:00Z',
});

/** Every kind of request the reflector sends, through the use cases that send them. */
async function everyRequest(model: BedrockConverseModel) {
  const ingest = ingestDeps();
  const turns = Array.from({ length: 10 }, (_, i) =>
    turn({
      userId: 'alice',
      turnId: i + 1,
      query: queries[i % queries.length],
      response: 'Tell me more.',
      timestamp: '2026-02-06T20:00:00Z',
    }),
  );
  await ingestTurns(
    turns.map((t, i) => ({ messageId: `m${i}`, body: JSON.stringify(t) })),
    ingest,
  );
  const batch = await runReflection(ingest.jobs.jobs[0]!, {
    ...reflectionDeps(ingest, new ScriptedModel(() => ({}))),
    model,
  });
  const common = { turns: ingest.turns, model, clock: fixedClock(), log: new RecordingLog() };
  const sleep = {
    ...common,
    knowledge: new MemoryKnowledgeStore(),
    runs: new MemorySleepTimeLog(),
    summaries: new MemorySummarySource(),
    graph: new MemoryGraphStore(),
    costs: new MemoryCostLedger(),
    items: new MemoryItems(),
    config: defaultSleepTimeConfig,
  };
  sleep.summaries.texts.push({
    userId: 'alice',
    id: 'summary-1-5',
    createdAt: '2026-02-05T11:00:00Z',
    text: 'Turns 1–5: a beagle, jazz and family.',
  });
  // A second day of conversation, so the weekly run asks the model (a one-day week is skipped: weeklyMinDays).
  sleep.summaries.texts.push({
    userId: 'alice',
    id: 'summary-6-10',
    createdAt: '2026-02-06T21:00:00Z',
    text: 'Turns 6–10: the beagle again.',
  });
  const nightly = await runNightly(job('nightly', 'nightly-1', [1, 2, 3, 4, 5]), sleep);
  const weekly = await runWeekly(job('weekly', 'weekly-1', []), sleep);
  const summary = await runSummary(
    job(
      'idle-summary',
      'summary-1-10',
      turns.map((t) => t.turnId),
    ),
    {
      ...common,
      summaries: new MemorySummaryStore(),
      costs: new MemoryCostLedger(),
      settings: new MemorySettings(),
      defaults: defaultSummarySettings,
      temperature: 0.6,
      budgetTokens: 4000,
    },
  );
  return { batch, nightly, weekly, summary };
}

describe("the reflector's requests pass Bedrock's checks", () => {
  const cases = [
    [CLOUD_MODEL_ID, 'schema', 'structured output'],
    [OFFLINE_MODEL_ID, 'schema', 'structured output'],
    [TOOL_MODEL_ID, 'schema', 'a forced tool'],
    [CLOUD_MODEL_ID, 'prompt', 'the type in the prompt'],
    [TOOL_MODEL_ID, 'prompt', 'the type in the prompt'],
  ] as const;
  for (const [modelId, answerShape, how] of cases) {
    it(`for ${modelId} in ${LOCAL_REGION} (${how})`, async () => {
      const before = server.requests.length;
      const out = await everyRequest(new BedrockConverseModel(client, modelId, { answerShape }));
      expect(server.refusals).toEqual([]);
      const sent = server.requests.slice(before);
      expect(new Set(sent.map((r) => r.modelId))).toEqual(new Set([modelId]));
      expect(new Set(sent.map((r) => answerNameOf(r) ?? 'summary'))).toEqual(
        new Set(['record_reflection', 'record_nightly_findings', 'record_weekly_reflection', 'summary']),
      );
      // One way or another, never two: structured output carries no tools, a forced tool no outputConfig, a prompted answer neither.
      const asked = sent.filter((r) => answerNameOf(r));
      const shape = (r: (typeof sent)[number]) =>
        r.outputConfig
          ? r.toolConfig
            ? 'both'
            : 'structured output'
          : r.toolConfig
            ? 'a forced tool'
            : 'the type in the prompt';
      expect(new Set(asked.map(shape))).toEqual(new Set([how]));
      const stop = how === 'a forced tool' ? 'tool_use' : 'end_turn';
      expect(out.batch).toMatchObject({ status: 'completed', log: { model: { modelId, stopReason: stop } } });
      expect(out.nightly.status === 'completed' && Object.values(out.nightly.run.stopReasons ?? {})).toEqual(
        expect.arrayContaining([stop]),
      );
      expect(out.weekly.status === 'completed' && out.weekly.run.stopReasons).toEqual({ week: stop });
      expect(out.summary.status).toBe('written');
    });
  }

  it("the default cloud model is us-east-1's geographic profile of the stage's model", () => {
    expect(CLOUD_MODEL_ID).toBe('us.anthropic.claude-haiku-4-5-20251001-v1:0');
  });
});

describe("Bedrock's other answers, through the adapter", () => {
  const ask = (modelId = CLOUD_MODEL_ID) =>
    new BedrockConverseModel(client, modelId).reflect({
      system: 's',
      prompt: 'I adopted a beagle named Rex',
      toolName: 'record_reflection',
      toolDescription: 'd',
      toolInputSchema: { type: 'object' },
      temperature: 0.6,
      maxTokens: 100,
    });
  const scripted = async (reply: Parameters<ConverseServer['setResponder']>[0], work: () => Promise<unknown>) => {
    server.setResponder(reply);
    try {
      return await work();
    } finally {
      server.setResponder(offlineResponder);
    }
  };

  it('a cut answer comes back with stopReason max_tokens and the whole budget spent', async () => {
    const answer = (await scripted(
      async (req) => cutReply(req, await offlineResponder(req)),
      () => ask(),
    )) as Awaited<ReturnType<typeof ask>>;
    expect(answer.usage).toMatchObject({ stopReason: 'max_tokens', outputTokens: 100 });
    expect(typeof answer.output).toBe('string');
  });

  it('a malformed tool call comes back with stopReason malformed_tool_use', async () => {
    const answer = (await scripted(malformedToolUseReply, () => ask(TOOL_MODEL_ID))) as Awaited<ReturnType<typeof ask>>;
    expect(answer.usage.stopReason).toBe('malformed_tool_use');
  });

  it('ModelErrorException (424) is retryable like an outage', async () => {
    await expect(
      scripted(
        () => MODEL_ERROR,
        () => ask(),
      ),
    ).rejects.toBeInstanceOf(ModelUnavailableError);
  });

  it('AccessDeniedException (403) names model access in the Region as the cause, and what to do', async () => {
    const call = scripted(
      () => ACCESS_DENIED,
      () => ask(),
    );
    await expect(call).rejects.toBeInstanceOf(ModelAccessDeniedError);
    // The retired "Model access" page is not named: the Marketplace permissions of the first call, Anthropic's form, an Active model.
    await expect(call).rejects.toThrow(
      `no access to ${CLOUD_MODEL_ID} in us-east-1: call the model once as a principal allowed aws-marketplace:Subscribe, aws-marketplace:Unsubscribe and aws-marketplace:ViewSubscriptions (npm run smoke's pre-flight does), or open it from the Model catalog of the Bedrock console in us-east-1; for Anthropic, submit the use-case form once from the Model catalog; a Legacy model is closed to new customers: pick an Active one from the model cards (Bedrock: You don't have access to the model with the specified model ID.)`,
    );
  });

  it('AccessDeniedException from IAM or from AWS Marketplace says so', async () => {
    const iam = {
      ...ACCESS_DENIED,
      message: `User: arn:aws:sts::111122223333:assumed-role/r/f is not authorized to perform: bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1:111122223333:inference-profile/${CLOUD_MODEL_ID}`,
    };
    await expect(
      scripted(
        () => iam,
        () => ask(),
      ),
    ).rejects.toThrow(
      /^the function's role may not invoke us\.anthropic\.claude-haiku-4-5-20251001-v1:0 in us-east-1: check its bedrock:InvokeModel grant/,
    );
    const marketplace = {
      ...ACCESS_DENIED,
      message:
        'Model access is denied due to IAM user or service role is not authorized to perform the required AWS Marketplace actions (aws-marketplace:ViewSubscriptions, aws-marketplace:Subscribe) to enable access to this model.',
    };
    await expect(
      scripted(
        () => marketplace,
        () => ask(),
      ),
    ).rejects.toThrow(
      /^no access to us\.anthropic\.claude-haiku-4-5-20251001-v1:0 in us-east-1: the role's first call could not subscribe the account to it in AWS Marketplace: call the model once as a principal allowed aws-marketplace:Subscribe/,
    );
  });

  it("a refused request fails with Bedrock's ValidationException, not as an outage", async () => {
    const refusals = server.refusals.length;
    const call = ask('eu.anthropic.claude-haiku-4-5-20251001-v1:0');
    await expect(call).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'The provided model identifier is invalid.',
      $metadata: { httpStatusCode: 400 },
    });
    expect(server.refusals.length).toBe(refusals + 1);
  });
});

describe("Bedrock's answers under --faults (infra/local/fault-injection.ts)", () => {
  /** Every model fault kind that fits the model's calls, then a clean redelivery. */
  async function underFaults(
    modelId: string,
    kinds: readonly string[],
    expected: readonly string[],
    redelivered: string,
    absent: readonly string[] = [],
  ) {
    const faulted = injectFaults(
      new BedrockRuntimeClient({
        endpoint: server.url,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
        maxAttempts: 1,
      }),
      'BedrockRuntime',
    );
    const model = new BedrockConverseModel(faulted, modelId);
    const reflect = () =>
      model.reflect({
        system: 's',
        prompt: 'I adopted a beagle named Rex',
        toolName: 'record_reflection',
        toolDescription: 'd',
        toolInputSchema: { type: 'object' },
        temperature: 0.6,
        maxTokens: 100,
      });
    configureFaults({ rate: 1, seed: 7 });
    try {
      const outcomes = new Set<string>();
      for (let i = 0; i < 60; i++) {
        const r = await withDelivery(true, reflect);
        outcomes.add(r.ok ? `${r.result.usage.stopReason}:${typeof r.result.output}` : (r.error as Error).name);
      }
      const counts = faultCounts();
      for (const kind of kinds) expect(counts[kind as keyof typeof counts], kind).toBeGreaterThan(0);
      for (const kind of absent) expect(counts[kind as keyof typeof counts], kind).toBe(0);
      expect([...outcomes]).toEqual(expect.arrayContaining([...expected]));
      // A redelivery runs without faults: the model answers as asked.
      const again = await withDelivery(false, reflect);
      expect(again.ok && again.result.usage.stopReason).toBe(redelivered);
      expect(again.ok && typeof again.result.output).toBe('object');
    } finally {
      configureFaults(null);
      faulted.destroy();
    }
  }

  it('strikes first deliveries with every model fault kind, each answered as Bedrock answers it (a forced tool)', async () => {
    await underFaults(
      TOOL_MODEL_ID,
      [
        'model-throttling',
        'model-garbage',
        'model-max-tokens',
        'model-malformed-tool-use',
        'model-error',
        'model-access-denied',
      ],
      [
        'max_tokens:string',
        'malformed_tool_use:string',
        'tool_use:string',
        'ModelUnavailableError',
        'ModelAccessDeniedError',
      ],
      'tool_use',
    );
  });

  it('structured output: garbage comes back as text that is no JSON, and no tool call can be malformed', async () => {
    await underFaults(
      CLOUD_MODEL_ID,
      ['model-throttling', 'model-garbage', 'model-max-tokens', 'model-error', 'model-access-denied'],
      ['max_tokens:string', 'end_turn:string', 'ModelUnavailableError', 'ModelAccessDeniedError'],
      'end_turn',
      ['model-malformed-tool-use'],
    );
  });
});
