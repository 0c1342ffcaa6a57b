/**
 * Routine reflections at batch prices (lib/batch-inference/routine-batch.ts) through the real
 * dispatcher (lib/jobs/run-job.ts), the real kept-request adapter and Bedrock batch adapter over
 * a bucket in memory and the batch inference stand-in; the other stores in memory.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import type { ForgetCounts } from '../../lib/forget/forget.port.js';
import { createBatchInferenceStandIn } from '../../infra/local/batch-inference-stand-in.js';
import type { Responder } from '../../infra/local/converse-protocol.js';
import type { BatchJobStateChange } from '../../lib/batch-inference/batch-inference.js';
import { BedrockBatchInference } from '../../lib/batch-inference/bedrock-batch-inference.adapter.js';
import { S3DeferredReflections } from '../../lib/batch-inference/deferred-reflections.adapter.js';
import { defersToBatch, dispatchRoutine } from '../../lib/batch-inference/routine-batch.js';
import { completeBatch } from '../../lib/batch-inference/sleep-time-batch.js';
import { type JobDeps, runJob } from '../../lib/jobs/run-job.js';
import { MemoryErasureLog, MemoryForgetLog } from '../../lib/forget/forget.fake.js';
import { MemoryJobQueue } from '../../lib/jobs/job-queue.fake.js';
import { RecordingLog } from '../../lib/kernel/runtime.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { parseSignalState } from '../../lib/signals/signal-state.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { memoryS3 } from '../helpers/memory-s3.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';

const MODEL_ID = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const FACT = {
  new_facts: [
    { title: 'dog_rex', content: 'The user adopted a beagle named Rex.', source_turns: [3], category: 'Facts' },
  ],
};

/** Ten turns per user: each fires one turn-count batch job (signal function's default threshold). */
async function world(users: readonly string[], turnsPerUser = 10, responder?: Responder) {
  const ingest = ingestDeps();
  for (const userId of users)
    await ingestTurns(
      Array.from({ length: turnsPerUser }, (_, i) => ({
        messageId: `${userId}-${i}`,
        body: JSON.stringify(
          turn({ userId, turnId: i + 1, query: i === 2 ? 'I adopted a beagle named Rex' : `entry${i}` }),
        ),
      })),
      ingest,
    );
  const model = new ScriptedModel(() => FACT);
  const { s3, objects } = memoryS3();
  const deferred = new S3DeferredReflections({ s3, bucketName: 'memory' });
  const reflection = { ...reflectionDeps(ingest, model), deferred };
  const erasures = new MemoryErasureLog();
  const deps = {
    reflection,
    forgets: { latest: async () => null },
    erasures,
    log: new RecordingLog(),
  } as unknown as JobDeps;
  const run = (job: Job) => runJob(job, deps, { retryUnusableOutput: false, remainingMs: () => 60_000 });
  const events: BatchJobStateChange[] = [];
  const standIn = createBatchInferenceStandIn({
    s3,
    onEvent: async (e) => void events.push(e),
    ...(responder ? { responder } : {}),
  });
  const queue = new MemoryJobQueue();
  const batch = new BedrockBatchInference({ s3, bucketName: 'memory' }, standIn.client, 'arn:aws:iam::1:role/batch');
  const forgets = new MemoryForgetLog();
  const collect = (minRecords: number, sweepId = '202602070300') =>
    dispatchRoutine(sweepId, {
      batch,
      deferred,
      forgets,
      erasures,
      jobs: queue,
      limits: { minRecords, maxRecords: 50_000 },
      modelId: MODEL_ID,
      jobPrefix: 'memory-test',
      log: new RecordingLog(),
    });
  const complete = (event: BatchJobStateChange) =>
    completeBatch(event, { batch, jobs: queue, answers: reflection.knowledge, forgets, log: new RecordingLog() });
  return {
    ingest,
    model,
    reflection,
    deferred,
    forgets,
    erasures,
    run,
    standIn,
    events,
    queue,
    collect,
    complete,
    objects,
  };
}

describe('routine reflections at batch prices', () => {
  it('defers only a routine batch: not an urgent one, an event, a summary or one sent back to run on demand', () => {
    const job = (kind: Job['kind'], trigger: string, onDemand?: true): Job => ({
      type: 'reflector.job',
      version: 1,
      jobId: 'j',
      userId: 'u',
      kind,
      trigger,
      urgency: 0,
      turnIds: [1],
      requestedAt: '2026-02-06T12:00:00.000Z',
      ...(onDemand ? { onDemand } : {}),
    });
    expect(defersToBatch(job('batch', 'turn_count'))).toBe(true);
    expect(defersToBatch(job('batch', 'urgency'))).toBe(false);
    expect(defersToBatch(job('batch', 'pending_timeout'))).toBe(false);
    expect(defersToBatch(job('event', 'event:error'))).toBe(false);
    expect(defersToBatch(job('idle-summary', 'turn_count'))).toBe(false);
    expect(defersToBatch(job('batch', 'turn_count', true))).toBe(false);
  });

  it('keeps a routine batch’s request and marks it deferred; the night’s job answers it and the batch finishes with no model call', async () => {
    const w = await world(['bob', 'alice']);
    const jobs = w.ingest.jobs.jobs.splice(0);
    expect(jobs.map((j) => j.trigger)).toEqual(['turn_count', 'turn_count']);
    for (const job of jobs)
      expect(await w.run(job)).toMatchObject({ family: 'batch', status: 'deferred', done: false });
    expect(w.model.requests).toEqual([]);
    expect(w.reflection.batchLogs.logs.size).toBe(0);
    const state = parseSignalState((await w.ingest.signalState.load('bob')).raw).state;
    expect(state.pendingBatches).toMatchObject([{ jobId: 'batch-1-10', deferred: true }]);
    // A redelivery keeps the same request once.
    expect((await w.run(jobs[0]!)).status).toBe('deferred');
    expect(await w.deferred.list()).toHaveLength(2);

    expect(await w.collect(2)).toMatchObject({ inference: 'batch', records: 2, enqueued: 0 });
    expect(await w.deferred.list()).toEqual([]);
    expect(w.standIn.jobs).toMatchObject([{ jobName: 'memory-test-routine-202602070300' }]);
    // The same sweep delivered again starts no second job.
    expect(await w.collect(2)).toMatchObject({ inference: 'batch', records: 2, enqueued: 0 });
    expect(w.standIn.jobs).toHaveLength(1);

    await w.standIn.run();
    expect(await w.complete(w.events[0]!)).toMatchObject({ answered: 2, unanswered: 0, enqueued: 2 });
    const back = w.queue.jobs.splice(0);
    expect(back.map((j) => [j.userId, j.onDemand])).toEqual([
      ['alice', true],
      ['bob', true],
    ]);
    for (const job of back) expect(await w.run(job)).toMatchObject({ status: 'completed', done: true });
    expect(w.model.requests).toEqual([]);
    const log = w.reflection.batchLogs.logs.get('bob/batch-1-10');
    expect(log?.model).toMatchObject({ batchInference: true, reused: false });
    expect(log?.staged_files.length).toBeGreaterThan(0);
    expect(parseSignalState((await w.ingest.signalState.load('bob')).raw).state.pendingBatches).toEqual([]);
  });

  it('sends too few requests on demand, in each user’s turn order, and removes them', async () => {
    const w = await world(['carol'], 20);
    for (const job of w.ingest.jobs.jobs.splice(0)) await w.run(job);
    expect(await w.collect(3)).toEqual({ inference: 'on-demand', records: 2, enqueued: 2 });
    expect(w.standIn.jobs).toEqual([]);
    expect(await w.deferred.list()).toEqual([]);
    expect(w.queue.jobs.map((j) => [j.jobId, j.onDemand])).toEqual([
      ['batch-1-10', true],
      ['batch-11-20', true],
    ]);
    for (const job of w.queue.jobs.splice(0)) expect((await w.run(job)).status).toBe('completed');
    expect(w.model.requests).toHaveLength(2);
  });

  it('sends the requests on demand when Bedrock refuses the job', async () => {
    const w = await world(['dan', 'erin']);
    for (const job of w.ingest.jobs.jobs.splice(0)) await w.run(job);
    w.standIn.client.send = () => Promise.reject(new Error('ServiceQuotaExceededException'));
    expect(await w.collect(2)).toEqual({ inference: 'on-demand', records: 2, enqueued: 2 });
    expect(await w.deferred.list()).toEqual([]);
  });

  it('sends nothing of a user forgotten since their request was kept, and records no answer of theirs', async () => {
    const w = await world(['hal', 'ivy', 'jon']);
    for (const job of w.ingest.jobs.jobs.splice(0)) await w.run(job);
    const forget = (userId: string) =>
      w.forgets.request({
        userId,
        requestedAt: '2030-01-01T00:00:00.000Z',
        requestedBy: userId,
        status: 'done',
        counts: {} as ForgetCounts,
      });
    await forget('hal');
    expect(await w.collect(2)).toMatchObject({ inference: 'batch', records: 2 });
    expect(await w.deferred.list()).toEqual([]);
    await w.standIn.run();
    await forget('ivy');
    expect(await w.complete(w.events[0]!)).toMatchObject({ answered: 1, unanswered: 1, enqueued: 2 });
    expect(await w.reflection.knowledge.getModelOutput('ivy', 'batch-1-10')).toBeNull();
    expect(await w.reflection.knowledge.getModelOutput('jon', 'batch-1-10')).not.toBeNull();
  });

  it('sends no request citing a turn forgotten since it was kept: the reflector drops its job', async () => {
    const w = await world(['max', 'ned']);
    for (const job of w.ingest.jobs.jobs.splice(0)) await w.run(job);
    await w.erasures.forgetTurns('max', [3]);
    expect(await w.collect(1)).toMatchObject({ inference: 'batch', records: 1 });
    const [cited, ...more] = w.queue.jobs.splice(0);
    expect(more).toEqual([]);
    expect(cited).toMatchObject({ userId: 'max', onDemand: true });
    expect(await w.run(cited!)).toMatchObject({ status: 'dropped' });
    expect(w.model.requests).toEqual([]);
    expect(parseSignalState((await w.ingest.signalState.load('max')).raw).state.pendingBatches).toEqual([]);
  });

  it("reflects a user's kept earlier batch first when a later one is urgent, so a correction is staged last", async () => {
    const w = await world(['olga']);
    const [routine] = w.ingest.jobs.jobs.splice(0);
    expect((await w.run(routine!)).status).toBe('deferred');
    // Three corrections: urgency 6, past the threshold of 5.
    await ingestTurns(
      [11, 12, 13].map((turnId) => ({
        messageId: `olga-${turnId}`,
        body: JSON.stringify(turn({ userId: 'olga', turnId, query: 'Actually, I meant a terrier named Rex' })),
      })),
      w.ingest,
    );
    const [urgent] = w.ingest.jobs.jobs.splice(0);
    expect(urgent).toMatchObject({ trigger: 'urgency', turnIds: [11, 12, 13] });
    expect(await w.run(urgent!)).toMatchObject({ status: 'completed' });
    expect(w.model.requests).toHaveLength(2);
    expect(w.model.requests[0]?.prompt).toContain('entry0');
    expect(w.model.requests[1]?.prompt).toContain('terrier');
    expect(w.reflection.batchLogs.logs.get('olga/batch-1-10')?.status).toBe('completed');
    // Nothing is left for the night's job.
    expect(await w.deferred.list()).toEqual([]);
    expect(await w.collect(1)).toMatchObject({ inference: 'none' });
  });

  it('asks on demand for a reflection the job answered with no usable answer', async () => {
    const prose: Responder = () => ({
      body: {
        output: { message: { role: 'assistant', content: [{ text: 'I would rather not answer in JSON.' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 900, outputTokens: 12, totalTokens: 912 },
        metrics: { latencyMs: 5 },
      },
    });
    const w = await world(['kim', 'lou'], 10, prose);
    for (const job of w.ingest.jobs.jobs.splice(0)) await w.run(job);
    await w.collect(2);
    await w.standIn.run();
    expect(await w.complete(w.events[0]!)).toMatchObject({ answered: 2, enqueued: 2 });
    for (const job of w.queue.jobs.splice(0)) expect((await w.run(job)).status).toBe('completed');
    expect(w.model.requests).toHaveLength(2);
    expect(w.reflection.batchLogs.logs.get('kim/batch-1-10')?.model?.batchInference).toBeUndefined();
  });

  it('a job that fails sends its reflections back to ask on demand', async () => {
    const w = await world(['fay', 'gus']);
    for (const job of w.ingest.jobs.jobs.splice(0)) await w.run(job);
    await w.collect(2);
    w.standIn.setOutcome('Failed');
    await w.standIn.run();
    expect(await w.complete(w.events[0]!)).toMatchObject({ status: 'Failed', answered: 0, enqueued: 2 });
    for (const job of w.queue.jobs.splice(0)) expect((await w.run(job)).status).toBe('completed');
    expect(w.model.requests).toHaveLength(2);
  });
});
