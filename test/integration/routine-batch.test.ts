/**
 * Routine reflections at batch prices on the local stack: with the stage's `routineInference.batch`
 * on, the reflector (built from the synthesized stage, IAM enforced) keeps a turn-count batch's
 * request instead of asking the model; the nightly sweep sends the kept requests to one Bedrock
 * batch inference job (the stand-in runs it) and its end brings the reflections back, which
 * finish from its answers. An urgent batch is asked on demand, the user's kept earlier batch
 * first. A job that fails leaves the reflections retryable: they finish on demand. The job's minimum is lowered to 2 records:
 * the AWS quota's 100 would need a hundred batches here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageConfig } from '../../infra/config/stages.js';
import { type LocalHarness, startHarness } from '../../infra/local/harness.js';
import { sampleDays } from '../helpers/turn-lines.js';

const USERS = ['routine-a', 'routine-b'];

let stack: LocalHarness;

/** The sample conversation, once per user, one day at a time: `days` picks the days (their dates). */
const conversation = (days: readonly string[]): string[] => sampleDays(days, USERS);

interface Logged {
  batch_id: string;
  status: string;
  trigger: string;
  /** Answered by a batch inference job. */
  batchInference?: true;
}

/** A user's batch logs, through the memory API with the user's own token. */
async function batchLogs(userId: string): Promise<Logged[]> {
  const token = await stack.mintUserToken([userId]);
  const res = await fetch(`${stack.info.apiUrl}/v1/users/${userId}/batches`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { batches: Logged[] }).batches;
}

/** The same turns again as new ones a month later (turn ids after the sample's 30, June 20 and 21), in sessions of their own. */
const later = (lines: readonly string[]): string[] =>
  lines.map((l) => {
    const t = JSON.parse(l) as { turnId: number; timestamp: string; sessionId: string };
    const day = t.timestamp.startsWith('2023-05-08') ? '2023-06-20' : '2023-06-21';
    return JSON.stringify({
      ...t,
      turnId: t.turnId + 30,
      timestamp: day + t.timestamp.slice(10),
      sessionId: `${t.sessionId}-again`,
    });
  });

const routineJobs = () => stack.batchInference.jobs.filter((j) => j.jobName.includes('-routine-'));

beforeAll(async () => {
  stack = await startHarness({
    stage: 'routinebatch',
    config: {
      ...stageConfig('dev'),
      sleepTimeInference: { batch: false, minRecords: 100, maxRecords: 50_000 },
      routineInference: { batch: true, minRecords: 2, maxRecords: 50_000 },
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

describe('routine reflections at batch prices (local stack)', () => {
  it("a day's turn-count batches wait for the night's job; its answers finish them", async () => {
    await stack.replayLines(conversation(['2023-05-08', '2023-05-25']), { clock: true });
    await stack.waitUntilDrained();
    const waiting = await Promise.all(USERS.map(batchLogs));
    expect(waiting.flat().filter((b) => b.trigger === 'turn_count')).toEqual([]);
    await stack.advanceTo(new Date('2023-05-26T12:00:00Z'));
    await stack.waitUntilDrained();
    const [job, ...more] = routineJobs();
    expect(more).toEqual([]);
    expect(job).toMatchObject({ status: 'Completed', jobName: 'memory-routinebatch-routine-202305260300' });
    for (const userId of USERS) {
      const logs = await batchLogs(userId);
      const routine = logs.filter((b) => b.trigger === 'turn_count');
      expect(routine.length, userId).toBeGreaterThan(0);
      for (const b of routine) expect(b, userId).toMatchObject({ status: 'completed', batchInference: true });
      for (const b of logs.filter((l) => l.trigger !== 'turn_count')) expect(b.batchInference).toBeUndefined();
    }
    expect(job?.records).toBe(
      (await Promise.all(USERS.map(batchLogs))).flat().filter((b) => b.trigger === 'turn_count').length,
    );
    const report = await stack.report();
    expect(report.iamDenied).toBe(0);
    expect(report.errors).toBe(0);
  }, 300_000);

  it("an urgent batch reflects the user's kept earlier batch first: nothing is left for the night", async () => {
    const before = routineJobs().length;
    await stack.replayLines(conversation(['2023-06-09']), { clock: true });
    await stack.waitUntilDrained();
    for (const userId of USERS) {
      const day = (await batchLogs(userId)).filter((b) => !b.batchInference && b.trigger !== 'turn_count');
      expect(
        day.map((b) => b.trigger),
        userId,
      ).toContain('urgency');
    }
    const pulled = (await Promise.all(USERS.map(batchLogs)))
      .flat()
      .filter((b) => b.trigger === 'turn_count' && !b.batchInference);
    expect(pulled.length).toBe(USERS.length);
    await stack.advanceTo(new Date('2023-06-10T12:00:00Z'));
    await stack.waitUntilDrained();
    expect(routineJobs()).toHaveLength(before);
    const report = await stack.report();
    expect(report.iamDenied).toBe(0);
    expect(report.errors).toBe(0);
  }, 300_000);

  it('a job that fails leaves the reflections retryable: they finish on demand', async () => {
    stack.batchInference.setOutcome('Failed');
    const logs = async () => (await Promise.all(USERS.map(batchLogs))).flat();
    const onDemandBefore = (await logs()).filter((b) => b.trigger === 'turn_count' && !b.batchInference).length;
    const jobsBefore = routineJobs().length;
    await stack.replayLines(later(conversation(['2023-05-08', '2023-05-25'])), { clock: true });
    await stack.waitUntilDrained();
    await stack.advanceTo(new Date('2023-06-22T12:00:00Z'));
    await stack.waitUntilDrained();
    const failed = routineJobs().slice(jobsBefore);
    expect(failed.length).toBeGreaterThan(0);
    for (const job of failed) expect(job.status).toBe('Failed');
    const late = (await logs()).filter((b) => b.trigger === 'turn_count' && !b.batchInference);
    expect(late.length - onDemandBefore).toBe(failed.reduce((n, j) => n + j.records, 0));
    for (const b of late) expect(b.status).toBe('completed');
    const report = await stack.report();
    expect(report.iamDenied).toBe(0);
    expect(report.errors).toBe(0);
  }, 300_000);
});
