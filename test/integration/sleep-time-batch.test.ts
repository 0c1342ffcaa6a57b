/**
 * Sleep-time at batch prices on the local stack: the sweep function, built by its handler
 * factory with the synthesized stage's BATCH_INFERENCE (IAM enforced from the template, so its
 * CreateModelInvocationJob and iam:PassRole grants are checked), starts one Bedrock batch
 * inference job for a night's runs; the batch inference stand-in runs it and its end reaches the
 * sweep function as the stage's rule would deliver it; the runs then finish from its answers,
 * with no on-demand model call. A job that fails leaves the runs to finish on demand.
 * The job's minimum is lowered to 3 records (three users' nights): the AWS quota's 100 would
 * need a hundred users here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageConfig } from '../../infra/config/stages.js';
import { answerNameOf } from '../../infra/local/converse-protocol.js';
import { offlineResponder } from '../../infra/local/converse-server.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { sampleDays } from '../helpers/turn-lines.js';
import { NIGHTLY_TOOL } from '../../lib/sleep-time/nightly.js';

const USERS = ['batch-a', 'batch-b', 'batch-c'];

let stack: LocalHarness;
/** Nightly model calls made on demand (the Converse endpoint); batch records are answered by the stand-in. */
let onDemandNightly = 0;

/** The sample conversation, once per user, one day at a time: `days` picks the days (their dates). */
const conversation = (days: readonly string[]): string[] => sampleDays(days, USERS);

/** A user's latest sleep-time run, read through the memory API with the user's own token. */
// biome-ignore lint/suspicious/noExplicitAny: the run is inspected loosely
async function latestRun(userId: string): Promise<any> {
  const token = await stack.mintUserToken([userId]);
  const res = await fetch(`${stack.info.apiUrl}/v1/users/${userId}/sleep-time/runs/latest`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { run: unknown }).run;
}

beforeAll(async () => {
  stack = await startHarness({
    stage: 'batchinf',
    config: { ...stageConfig('dev'), sleepTimeInference: { batch: true, minRecords: 3, maxRecords: 50_000 } },
  });
  stack.emulators.converse.setResponder((req) => {
    if (answerNameOf(req) === NIGHTLY_TOOL.name) onDemandNightly++;
    return offlineResponder(req);
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('sleep-time at batch prices (local stack)', () => {
  it('a night with enough records runs as one batch inference job; its answers finish the runs, no call on demand', async () => {
    await stack.replayLines(conversation(['2023-05-08']), { clock: true });
    await stack.waitUntilDrained();
    await stack.advanceTo(new Date('2023-05-09T12:00:00Z'));
    const [job, ...more] = stack.batchInference.jobs;
    expect(more).toEqual([]);
    expect(job).toMatchObject({ status: 'Completed', jobName: 'memory-batchinf-nightly-202305090300' });
    expect(job?.records).toBeGreaterThanOrEqual(USERS.length);
    expect(onDemandNightly).toBe(0);
    const report = await stack.report();
    expect(report.nightly).toBe(USERS.length);
    // Each run reflected on its day with the job's answer: its tokens are the batch output's usage.
    for (const userId of USERS) {
      const run = await latestRun(userId);
      expect(run, userId).toMatchObject({ kind: 'nightly', status: 'completed', runId: 'nightly-202305090300' });
      expect(run.chunks, userId).toBeGreaterThan(0);
      expect(run.tokens.input, userId).toBeGreaterThan(0);
    }
    expect(report.iamDenied).toBe(0);
    expect(report.errors).toBe(0);
  }, 300_000);

  it('a batch job that fails leaves the runs retryable: they finish on demand', async () => {
    stack.batchInference.setOutcome('Failed');
    await stack.replayLines(conversation(['2023-05-25']), { clock: true });
    await stack.waitUntilDrained();
    await stack.advanceTo(new Date('2023-05-26T12:00:00Z'));
    const failed = stack.batchInference.jobs.at(-1);
    expect(failed).toMatchObject({ status: 'Failed', jobName: 'memory-batchinf-nightly-202305260300' });
    expect(onDemandNightly).toBe(failed?.records);
    const report = await stack.report();
    expect(report.nightly).toBe(2 * USERS.length);
    expect(report.iamDenied).toBe(0);
    expect(report.errors).toBe(0);
  }, 300_000);

  it('a job whose end event is lost: the next scheduled sweep asks Bedrock and finishes its runs, no call on demand', async () => {
    stack.batchInference.setOutcome('Completed');
    stack.batchInference.loseEvents(true);
    const before = onDemandNightly;
    await stack.replayLines(conversation(['2023-06-09']), { clock: true });
    await stack.waitUntilDrained();
    await stack.advanceTo(new Date('2023-06-10T12:00:00Z'));
    expect(stack.batchInference.jobs.at(-1)).toMatchObject({
      status: 'Completed',
      jobName: 'memory-batchinf-nightly-202306100300',
    });
    // The job ended, its event never came: its runs wait.
    expect((await stack.report()).nightly).toBe(2 * USERS.length);
    // The next day's first sweep (expiry, 02:30) reconciles it.
    await stack.advanceTo(new Date('2023-06-11T03:00:00Z'));
    await stack.waitUntilDrained();
    const report = await stack.report();
    expect(report.nightly).toBe(3 * USERS.length);
    expect(onDemandNightly).toBe(before);
    expect(report.iamDenied).toBe(0);
    expect(report.errors).toBe(0);
    stack.batchInference.loseEvents(false);
  }, 300_000);
});
