/**
 * Sleep-time at batch prices through the real nightly run (lib/sleep-time/run-sleep-time.ts),
 * the real Bedrock batch adapter on the local stand-in (infra/local/batch-inference-stand-in.ts)
 * and the two use cases (lib/batch-inference/sleep-time-batch.ts); stores in memory. The job's
 * minimum number of records is lowered to 3 so three users make a batch: the AWS default (100,
 * BATCH_RECORD_LIMITS) would need a hundred users per test.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import { createBatchInferenceStandIn } from '../../infra/local/batch-inference-stand-in.js';
import { type BatchJobStateChange, batchRecordId } from '../../lib/batch-inference/batch-inference.js';
import { BedrockBatchInference } from '../../lib/batch-inference/bedrock-batch-inference.adapter.js';
import { completeBatch, dispatchSleepTime, reconcileBatches } from '../../lib/batch-inference/sleep-time-batch.js';
import { MemoryCostLedger } from '../../lib/costs/cost-ledger.fake.js';
import { MemoryForgetLog } from '../../lib/forget/forget.fake.js';
import { MemoryGraphStore } from '../../lib/graph/graph.fake.js';
import { MemoryItems } from '../../lib/items/memory-item.fake.js';
import { MemoryJobQueue } from '../../lib/jobs/job-queue.fake.js';
import { fixedClock, RecordingLog } from '../../lib/kernel/runtime.fake.js';
import { MemoryExpiryLog, MemoryKnowledgeStore } from '../../lib/knowledge/knowledge.fake.js';
import { nightlySweep } from '../../lib/jobs/sweeps.js';
import { MemoryActivity } from '../../lib/signals/signal-state.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';
import { nightlyOffline } from '../../lib/offline-model/rule-sleep-time.js';
import { defaultSleepTimeConfig } from '../../lib/sleep-time/config.js';
import { estimateCostUsd } from '../../lib/sleep-time/model-prices.js';
import { runNightly } from '../../lib/sleep-time/run-sleep-time.js';
import { MemorySleepTimeLog } from '../../lib/sleep-time/sleep-time-log.fake.js';
import { MemorySummarySource } from '../../lib/summaries/summary.fake.js';
import { MemoryTurnStore, turn } from '../../lib/turns/turn.fake.js';
import { memoryS3 } from '../helpers/memory-s3.js';

const now = new Date('2026-02-07T03:00:00Z');
const USERS = ['alice', 'bob', 'carol'];
const MODEL_ID = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';

const job = (userId: string): Job => ({
  type: 'reflector.job',
  version: 1,
  jobId: 'nightly-202602070300',
  userId,
  kind: 'nightly',
  trigger: 'schedule',
  urgency: 0,
  turnIds: [1, 2, 3],
  requestedAt: now.toISOString(),
});

async function world() {
  const turns = new MemoryTurnStore();
  for (const userId of USERS)
    await turns.saveTurns(
      ['I love jazz records', 'My sister Anna lives in Lyon', 'I work as a nurse in Lisbon'].map((query, i) =>
        turn({ userId, turnId: i + 1, sessionId: 's1', query, timestamp: '2026-02-06T20:00:00Z' }),
      ),
    );
  const model = new ScriptedModel((req) => nightlyOffline(req.prompt));
  const sleep = {
    turns,
    knowledge: new MemoryKnowledgeStore(),
    runs: new MemorySleepTimeLog(),
    summaries: new MemorySummarySource(),
    graph: new MemoryGraphStore(),
    costs: new MemoryCostLedger(),
    items: new MemoryItems(),
    model,
    clock: fixedClock(),
    log: new RecordingLog(),
    config: defaultSleepTimeConfig,
  };
  const { s3, objects } = memoryS3();
  const events: BatchJobStateChange[] = [];
  const standIn = createBatchInferenceStandIn({ s3, onEvent: async (e) => void events.push(e) });
  const queue = new MemoryJobQueue();
  const batch = {
    batch: new BedrockBatchInference({ s3, bucketName: 'memory' }, standIn.client, 'arn:aws:iam::1:role/batch'),
    jobs: queue,
    answers: sleep.knowledge,
    forgets: new MemoryForgetLog(),
    modelId: MODEL_ID,
    jobPrefix: 'memory-test',
    mostRecordsPerJob: 5,
    log: new RecordingLog(),
  };
  /** The reflector: every queued job run on demand, as its SQS delivery would. */
  const drain = async () => {
    const out = [];
    for (const j of queue.jobs.splice(0)) out.push(await runNightly(j, sleep));
    return out;
  };
  const dispatch = (minRecords: number) =>
    dispatchSleepTime(USERS.map(job), (j, collect) => runNightly(j, { ...sleep, collect }), {
      ...batch,
      limits: { minRecords, maxRecords: 50_000 },
    });
  /** The nightly sweep over the three users' activity, its jobs dispatched (batch or on demand). */
  const sweep = (minRecords: number) => {
    const activity = new MemoryActivity();
    for (const userId of USERS) activity.users.push({ userId, activity: { '2026-02-06': 6 } });
    const limits = { minRecords, maxRecords: 50_000 };
    return nightlySweep(now, {
      ...sleep,
      activity,
      jobs: queue,
      expiryLog: new MemoryExpiryLog(),
      dispatch: (jobs) =>
        dispatchSleepTime(jobs, (j, collect) => runNightly(j, { ...sleep, collect }), { ...batch, limits }),
    });
  };
  return { sleep, model, standIn, events, queue, batch, drain, dispatch, sweep, objects };
}

describe('sleep-time at batch prices', () => {
  it('a sweep with enough records uses one batch inference job; its answers finish the runs with no model call', async () => {
    const w = await world();
    const sent = await w.dispatch(3);
    expect(sent).toMatchObject({ inference: 'batch', records: 3, enqueued: 0 });
    expect(w.standIn.jobs).toHaveLength(1);
    expect(w.queue.jobs).toEqual([]);
    expect(w.model.requests).toEqual([]);
    // Collect mode wrote nothing: no run logged, no finding stored.
    expect(w.sleep.runs.runs).toEqual([]);
    expect(w.sleep.knowledge.knowledgeFiles.size).toBe(0);

    await w.standIn.run();
    const done = await completeBatch(w.events[0], w.batch);
    expect(done).toEqual({ status: 'Completed', answered: 3, unanswered: 0, enqueued: 3 });
    const runs = await w.drain();
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(w.model.requests).toEqual([]);
    for (const r of runs) if (r.status === 'completed') expect(r.run.memoriesStored).toBeGreaterThan(0);
    // Priced at the batch price: half what the same tokens cost on demand.
    for (const r of runs)
      if (r.status === 'completed')
        expect(r.run.estimatedCostUsd).toBeCloseTo(
          (estimateCostUsd(MODEL_ID, r.run.tokens.input, r.run.tokens.output) ?? 0) / 2,
          6,
        );

    // The same event again: the same answers, the runs already logged.
    await completeBatch(w.events[0], w.batch);
    expect((await w.drain()).map((r) => r.status)).toEqual(['already_done', 'already_done', 'already_done']);
  });

  it('the nightly sweep hands its jobs to the dispatch: one batch job with enough users, on demand with fewer', async () => {
    const enough = await world();
    const batched = await enough.sweep(3);
    expect(batched).toMatchObject({ selected: 3, inference: { inference: 'batch', records: 3, enqueued: 0 } });
    expect(enough.standIn.jobs.map((j) => j.jobName)).toEqual(['memory-test-nightly-202602070300']);
    expect(enough.queue.jobs).toEqual([]);
    await enough.standIn.run();
    await completeBatch(enough.events[0], enough.batch);
    expect((await enough.drain()).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(enough.model.requests).toEqual([]);

    const few = await world();
    expect(await few.sweep(4)).toMatchObject({ inference: { inference: 'on-demand', records: 3, enqueued: 3 } });
    expect(few.standIn.jobs).toEqual([]);
    expect((await few.drain()).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(few.model.requests).toHaveLength(3);
  });

  it('too few jobs to reach the minimum at their most records: on demand with no collection pass', async () => {
    const w = await world();
    // Three jobs of at most five records each cannot make sixteen.
    expect(await w.dispatch(16)).toMatchObject({ inference: 'on-demand', records: 0, enqueued: 3 });
    expect(w.standIn.jobs).toEqual([]);
    expect((await w.drain()).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
  });

  it('a sweep low on time collects no further: the jobs left run on demand', async () => {
    const w = await world();
    const sent = await dispatchSleepTime(USERS.map(job), (j, collect) => runNightly(j, { ...w.sleep, collect }), {
      ...w.batch,
      limits: { minRecords: 1, maxRecords: 50_000 },
      remainingMs: () => 59_000,
    });
    expect(sent).toMatchObject({ inference: 'on-demand', records: 0, enqueued: 3 });
    expect(w.batch.log.entries.some((r) => r.message.includes('ran low on time'))).toBe(true);
  });

  it('fewer records than the minimum: no batch job, every run on demand', async () => {
    const w = await world();
    expect(await w.dispatch(4)).toMatchObject({ inference: 'on-demand', records: 3, enqueued: 3 });
    expect(w.standIn.jobs).toEqual([]);
    const runs = await w.drain();
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(w.model.requests).toHaveLength(3);
  });

  for (const outcome of ['Failed', 'Expired'] as const)
    it(`a batch job that ends ${outcome} leaves the runs retryable: they complete on demand`, async () => {
      const w = await world();
      w.standIn.setOutcome(outcome);
      await w.dispatch(3);
      await w.standIn.run();
      expect(await completeBatch(w.events[0], w.batch)).toEqual({
        status: outcome,
        answered: 0,
        unanswered: 3,
        enqueued: 3,
      });
      const runs = await w.drain();
      expect(runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
      expect(w.model.requests).toHaveLength(3);
    });

  it('an end event that never came: the next sweep asks Bedrock, completes the ended job once, and leaves a running one', async () => {
    const w = await world();
    await w.dispatch(3);
    // Still running: nothing to complete yet.
    expect(await reconcileBatches(w.batch)).toEqual([]);
    expect(w.queue.jobs).toEqual([]);
    await w.standIn.run(); // the job ends; its event is lost (never handed to completeBatch)
    expect(await reconcileBatches(w.batch)).toEqual([{ status: 'Completed', answered: 3, unanswered: 0, enqueued: 3 }]);
    expect((await w.drain()).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(w.model.requests).toEqual([]);
    // Processed: the next sweep asks no more, and the event arriving late after all changes nothing.
    expect(await reconcileBatches(w.batch)).toEqual([]);
    await completeBatch(w.events[0], w.batch);
    expect((await w.drain()).map((r) => r.status)).toEqual(['already_done', 'already_done', 'already_done']);
  });

  it('a job Bedrock cannot tell about now is asked again at the next sweep', async () => {
    const w = await world();
    await w.dispatch(3);
    await w.standIn.run();
    const status = w.batch.batch.status.bind(w.batch.batch);
    w.batch.batch.status = async () => {
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    };
    expect(await reconcileBatches(w.batch)).toEqual([]);
    expect(w.queue.jobs).toEqual([]);
    w.batch.batch.status = status;
    expect(await reconcileBatches(w.batch)).toMatchObject([{ status: 'Completed', enqueued: 3 }]);
  });

  it('a partly completed job: the answered runs reuse their answers, the others ask on demand', async () => {
    const w = await world();
    w.standIn.setOutcome('PartiallyCompleted');
    await w.dispatch(3);
    await w.standIn.run();
    expect(await completeBatch(w.events[0], w.batch)).toMatchObject({ answered: 2, unanswered: 1, enqueued: 3 });
    expect((await w.drain()).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(w.model.requests).toHaveLength(1);
  });

  it('a cut batch answer is not recorded: its run asks on demand', async () => {
    const w = await world();
    await w.dispatch(3);
    const cut = (line: string) => {
      const out = JSON.parse(line) as { recordId: string; modelOutput?: { stopReason?: string } };
      if (out.recordId === batchRecordId('bob', 'nightly-202602070300-chunk-0') && out.modelOutput)
        out.modelOutput.stopReason = 'max_tokens';
      return JSON.stringify(out);
    };
    await w.standIn.run();
    const key = [...w.objects.keys()].find((k) => k.endsWith('.jsonl.out')) ?? '';
    w.objects.set(key, (w.objects.get(key) ?? '').split('\n').map(cut).join('\n'));
    expect(await completeBatch(w.events[0], w.batch)).toMatchObject({ answered: 2, unanswered: 1 });
    expect((await w.drain()).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(w.model.requests).toHaveLength(1);
  });

  it('a batch job Bedrock refuses to start: every run on demand', async () => {
    const w = await world();
    w.batch.batch.start = async () => {
      throw Object.assign(new Error('too few records'), { name: 'ValidationException' });
    };
    expect(await w.dispatch(3)).toMatchObject({ inference: 'on-demand', records: 3, enqueued: 3 });
    expect((await w.drain()).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(w.model.requests).toHaveLength(3);
  });

  it('a state change before the end does nothing; an event of another job names no manifest', async () => {
    const w = await world();
    await w.dispatch(3);
    const arn = w.standIn.jobs[0]?.jobArn ?? '';
    const change = (batchJobName: string, status: string) => ({
      source: 'aws.bedrock',
      'detail-type': 'Batch Inference Job State Change',
      detail: { batchJobArn: arn, batchJobName, status },
    });
    expect(await completeBatch(change('memory-test-nightly-202602070300', 'InProgress'), w.batch)).toMatchObject({
      enqueued: 0,
    });
    expect(await completeBatch(change('someone-else', 'Completed'), w.batch)).toMatchObject({ enqueued: 0 });
    expect(w.queue.jobs).toEqual([]);
  });
});
