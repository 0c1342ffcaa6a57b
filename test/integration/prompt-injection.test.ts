/**
 * Prompt injection through the real handlers (bench/prompt-injection.ts): the attacker's
 * turns ask the model to write into the victim's folder, and a scripted Converse endpoint
 * obeys — paths out of the prefix, the victim's id in every field, tens of thousands of
 * items, multi-MB strings, odd unicode, for batches, summaries, nightly and weekly runs.
 * Then the memory API is fuzzed over HTTP with the attacker's token. Nothing of the victim
 * may change, every key touched stays under the attacker's prefix, no record is lost, the
 * caps hold. And the Bedrock adapter turns an answer its SDK cannot read into an outage.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type InjectionReport,
  injectionResponder,
  injectionStageConfig,
  runPromptInjection,
  seedInjectionVictim,
} from '../../bench/prompt-injection.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { BedrockConverseModel } from '../../lib/model/bedrock-converse-model.adapter.js';
import { ModelUnavailableError } from '../../lib/model/language-model.port.js';

let stack: LocalHarness;
const hostile = injectionResponder();
const handlerErrors: string[] = [];

beforeAll(async () => {
  stack = await startHarness({
    stage: 'injection',
    config: injectionStageConfig(),
    logLevel: 'SILENT',
    speed: 300,
    responder: hostile.responder,
    onHandlerError: (source, error) => handlerErrors.push(`${source}: ${String((error as Error)?.stack ?? error)}`),
  });
  await seedInjectionVictim(stack);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('prompt injection with an obedient model (local harness)', () => {
  let report: InjectionReport;

  it('reaches every handler: batches, summaries, nightly and weekly runs all got hostile answers', async () => {
    report = await runPromptInjection(stack, hostile, { apiCases: 80, seed: 20_261_122, handlerErrors });
    console.log(`prompt injection: ${JSON.stringify({ ...report, failures: report.failures.length })}`);
    const tools = Object.keys(report.hostileAnswers).map((k) => k.split(':')[0]);
    for (const tool of ['record_reflection', 'summary', 'record_nightly_findings', 'record_weekly_reflection'])
      expect(tools, tool).toContain(tool);
    expect(
      Object.keys(report.hostileAnswers).filter((k) => k.startsWith('record_reflection')).length,
    ).toBeGreaterThanOrEqual(5);
    expect(report.batches.completed + report.batches.aborted).toBeGreaterThan(1);
    // The runs whose stored findings the report checks against the cap (it read none before: it looked for .json logs).
    expect(report.nightlyRuns).toBeGreaterThan(0);
    expect(report.weeklyRuns).toBeGreaterThan(0);
    expect(report.api.requests).toBeGreaterThan(70);
    expect(Object.keys(report.api.byStatus)).toEqual(expect.arrayContaining(['200', '400', '403']));
    // A guard against a hang, not a speed goal: on a loaded 2-core machine the run took over 90 s.
  }, 600_000);

  it('changes nothing of the victim, writes only under the attacker’s prefix, loses no record, keeps the caps; the API holds', () => {
    expect(report.failures).toEqual([]);
    expect(report.deadLetters).toEqual({ turn: 0, job: 0, idle: 0 });
    expect(report.handlerErrors).toEqual([]);
    expect(report.newKeys).toBeGreaterThan(0);
  });
});

describe('the Bedrock adapter', () => {
  it('treats a 2xx answer its SDK cannot read (a tool input nested 20,000 deep) as the model being unavailable', async () => {
    const depth = 20_000;
    const server = http2.createServer();
    server.on('request', (req, res) => {
      req.on('data', () => {});
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t","name":"record_reflection","input":{"new_facts":${'['.repeat(depth)}1${']'.repeat(depth)}}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new BedrockRuntimeClient({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    try {
      const model = new BedrockConverseModel(client, 'deep-model');
      const call = model.reflect({
        system: 's',
        prompt: 'p',
        toolName: 'record_reflection',
        toolDescription: 'd',
        toolInputSchema: { type: 'object' },
        temperature: 0,
        maxTokens: 10,
      });
      await expect(call).rejects.toBeInstanceOf(ModelUnavailableError);
      await expect(call).rejects.toThrow(/could not be read/);
    } finally {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
