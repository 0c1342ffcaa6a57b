/**
 * The smoke test (`npm run smoke`) against the local harness, through the same code path as
 * against a deployed stage: only the target differs. It must pass on a healthy stack, and
 * fail — naming the queue, or the API's answer — when something is wrong.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { ACCESS_DENIED } from '../../infra/local/converse-protocol.js';
import { offlineResponder } from '../../infra/local/converse-server.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { localTarget } from '../../infra/smoke/local-target.js';
import { formatCheck, reportJson, runSmoke, type SmokeReport } from '../../infra/smoke/smoke.js';
import type { SmokeTarget } from '../../infra/smoke/target.js';

let stack: LocalHarness;
let target: SmokeTarget;

beforeAll(async () => {
  stack = await startHarness({ stage: 'smoketest', logLevel: 'SILENT', speed: 300 });
  target = localTarget(stack.info, (users) => stack.mintUserToken(users));
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const byId = (report: SmokeReport) => Object.fromEntries(report.checks.map((c) => [c.id, c]));

describe('npm run smoke, on the local harness', () => {
  let healthy: SmokeReport;

  it('passes every check on a healthy stack', async () => {
    healthy = await runSmoke(target, { pollMs: 200, timeoutMs: 60_000 });
    const failed = healthy.checks.filter((c) => !c.ok).map(formatCheck);
    expect(failed).toEqual([]);
    expect(healthy.ok).toBe(true);
    expect(Object.keys(byId(healthy))).toEqual([
      'modelBatches',
      'token',
      'published',
      'turnsIndexed',
      'batchReflected',
      'summaryWritten',
      'searchAnswers',
      'turnDlqEmpty',
      'jobDlqEmpty',
      'idleDlqEmpty',
    ]);
    expect(healthy.userId).toMatch(/^smoke-\d{14}-[0-9a-f]{6}$/);
    const c = byId(healthy);
    // The pre-flight: the stage's model answered one call and GetFoundationModel says it is Active.
    expect(c.modelBatches?.detail).toBe(
      'answered one call; anthropic.claude-haiku-4-5-20251001-v1:0 is ACTIVE in us-east-1',
    );
    expect(c.published?.detail).toContain('13 events');
    expect(c.turnsIndexed?.detail).toBe('12/12 turns retrievable with their text');
    // Locally the offline model answers for the stage's model; the batch listing names the model invoked.
    // The newest completed batch over the smoke turns: the turn-count batch, or the session-close one once it is done too.
    expect(c.batchReflected?.detail).toMatch(
      /^batch (batch-1-10 \(turn_count\)|batch-11-12 \(session_closed\)) completed by us\.anthropic\.claude-haiku-4-5-20251001-v1:0:/,
    );
    expect(c.summaryWritten?.detail).toMatch(/^summary-1-12 \(session-close\)/);
    expect(c.searchAnswers?.detail).toContain('"axolotl" in');
    // The last line is one JSON object with every check.
    const json = JSON.parse(reportJson(healthy));
    expect(json).toMatchObject({
      ok: true,
      failed: 0,
      passed: 10,
      userId: healthy.userId,
      checks: { batchReflected: { ok: true } },
    });
    console.log(`smoke run on the local harness: ${healthy.durationMs} ms`);
  }, 90_000);

  it('fails the model check when another model answered (--model)', async () => {
    const report = await runSmoke(target, {
      pollMs: 200,
      timeoutMs: 60_000,
      expectedModelId: 'eu.anthropic.claude-haiku-4-5-20251001-v1:0',
    });
    const batch = byId(report).batchReflected;
    expect(batch?.ok).toBe(false);
    expect(batch?.detail).toContain('expected model eu.anthropic.claude-haiku-4-5-20251001-v1:0');
    expect(report.ok).toBe(false);
  }, 90_000);

  it('fails, naming the queue, when a dead-letter queue holds a message', async () => {
    const q = target.queues.job;
    await target.sqs.send(
      new SendMessageCommand({
        QueueUrl: q.dlqUrl,
        MessageBody: '{"parked":true}',
        MessageGroupId: 'someone',
        MessageDeduplicationId: 'parked-1',
      }),
    );
    const report = await runSmoke(target, { pollMs: 200, timeoutMs: 60_000 });
    const c = byId(report);
    expect(report.ok).toBe(false);
    expect(c.jobDlqEmpty?.ok).toBe(false);
    const line = formatCheck(c.jobDlqEmpty ?? { id: '', title: '', ok: true, detail: '' });
    expect(line).toMatch(/^FAILED {2}reflective-memory-smoketest-ReflectionQueue-dlq\.fifo empty — 1 message\(s\)/);
    expect(line).toContain('look at: reflective-memory-smoketest-ReflectionQueue-dlq.fifo');
    // Only that check failed: the pipeline itself did its work.
    expect(report.checks.filter((x) => !x.ok).map((x) => x.id)).toEqual(['jobDlqEmpty']);
  }, 90_000);

  it("fails with the API's answer when the token may not act on the smoke user", async () => {
    const wrongUser: SmokeTarget = {
      ...target,
      auth: {
        token: async () => ({
          token: await stack.mintUserToken(['somebody-else']),
          detail: 'a token for somebody-else',
        }),
        cleanup: async () => null,
      },
    };
    const report = await runSmoke(wrongUser, { pollMs: 200, timeoutMs: 1_500 });
    const c = byId(report);
    expect(c.published?.ok).toBe(true);
    for (const id of ['turnsIndexed', 'batchReflected', 'summaryWritten', 'searchAnswers'])
      expect(c[id]?.ok, id).toBe(false);
    expect(c.batchReflected?.detail).toContain('HTTP 403');
    expect(c.turnsIndexed?.cause).toContain('not there 2 s after publishing');
  }, 90_000);

  describe("the pre-flight of the stage's models", () => {
    const converse = () => stack.emulators.converse;

    it('fails before publishing anything when the model answers AccessDenied, saying what to do (--local)', async () => {
      converse().setResponder(() => ACCESS_DENIED);
      try {
        const before = converse().requests.length;
        // The CLI, as `npm run smoke -- --local` runs it, against this stack's state.
        const state = join(mkdtempSync(join(tmpdir(), 'smoke-')), 'stack.json');
        writeFileSync(state, JSON.stringify(stack.info));
        const run = await promisify(execFile)('npx', ['tsx', 'infra/smoke/smoke-cli.ts', '--local', '--state', state], {
          cwd: process.cwd(),
        }).then(
          () => ({ code: 0, stdout: '' }),
          (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
        );
        expect(run.code).toBe(1);
        const lines = run.stdout.trim().split('\n');
        const model =
          lines.find((l) =>
            l.includes('us.anthropic.claude-haiku-4-5-20251001-v1:0 (batches) answers and is Active'),
          ) ?? '';
        expect(model).toMatch(/^FAILED/);
        expect(model).toContain(
          "AccessDeniedException: You don't have access to the model with the specified model ID.",
        );
        // What to do: the Marketplace permissions of the first call, the Anthropic use-case form, an Active model.
        for (const todo of [
          'aws-marketplace:Subscribe',
          'aws-marketplace:ViewSubscriptions',
          'Anthropic use-case form',
          'Model catalog',
          'pick a model that is Active',
        ])
          expect(model).toContain(todo);
        const json = JSON.parse(lines.at(-1) ?? '{}');
        expect(json.checks.published).toMatchObject({ ok: false, detail: 'not run' });
        expect(json.checks.token).toMatchObject({ ok: false, detail: 'not run' });
        // The pre-flight's own call reached the stand-in (and was refused).
        expect(
          converse()
            .requests.slice(before)
            .map((r) => r.messages?.[0]?.content[0]?.text),
        ).toContain('Answer with one word: ready?');
      } finally {
        converse().setResponder(offlineResponder);
      }
    }, 90_000);

    it('fails when GetFoundationModel says the model is Legacy', async () => {
      converse().catalogue.setLifecycle('anthropic.claude-haiku-4-5-20251001-v1:0', 'LEGACY');
      try {
        const report = await runSmoke(target, { pollMs: 200, timeoutMs: 5_000 });
        const c = byId(report).modelBatches;
        expect(report.ok).toBe(false);
        expect(c?.cause).toBe('GetFoundationModel says anthropic.claude-haiku-4-5-20251001-v1:0 is LEGACY');
        expect(c?.lookAt).toContain('closed to new customers');
        expect(c?.lookAt).toContain('pick an Active model from the model cards');
        expect(byId(report).published?.detail).toBe('not run');
      } finally {
        converse().catalogue.setLifecycle('anthropic.claude-haiku-4-5-20251001-v1:0', 'ACTIVE');
      }
    }, 90_000);
  });
});
