/**
 * Req R-EVT-1: an agent.event with no turn waiting reflects on its own words (detail, episodes)
 * — through the signal's use case (ingestTurns) and the reflector's dispatcher (runJob) — or,
 * with nothing to reflect on, says so in the log and the batch log. Before, it fired nothing.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../events/agent-event.js';
import { eventEpisodeId } from '../../lib/turns/episodes.js';
import { buildReflectorPrompt, assembleBatch } from '../../lib/batches/batch-assembly.js';
import {
  eventId,
  eventJobId,
  eventMaterial,
  MAX_EVENT_MATERIAL_CHARS,
  NO_TURN_WAITING,
  NOTHING_TO_REFLECT_ON,
} from '../../lib/batches/event-reflection.js';
import { JobSchema } from '../../events/job.js';
import { keys } from '../../lib/kernel/memory-paths.js';
import { reflectOffline } from '../../lib/offline-model/rule-reflector.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { type JobDeps, runJob } from '../../lib/jobs/run-job.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { MemoryErasureLog } from '../../lib/forget/forget.fake.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';

const event = (overrides: Partial<AgentEvent> = {}): AgentEvent => ({
  type: 'agent.event',
  version: 1,
  userId: 'alice',
  timestamp: '2026-02-06T14:10:00Z',
  trigger: 'error',
  ...overrides,
});

/** The signal's use case and the reflector's dispatcher over one set of in-memory stores, with the offline model answering. */
function pipeline() {
  const ingest = ingestDeps();
  const model = new ScriptedModel((req) => reflectOffline(req.prompt));
  const reflection = reflectionDeps(ingest, model);
  const deps = {
    reflection,
    forgets: { latest: async () => null },
    erasures: new MemoryErasureLog(),
    log: reflection.log,
  } as unknown as JobDeps;
  let n = 0;
  const publish = (...messages: object[]) =>
    ingestTurns(
      messages.map((m) => ({ messageId: `m${++n}`, body: JSON.stringify(m) })),
      ingest,
    );
  const run = async () => {
    const outcomes = [];
    for (const job of ingest.jobs.jobs.splice(0))
      outcomes.push({
        job,
        outcome: await runJob(job, deps, { retryUnusableOutput: false, remainingMs: () => 60_000 }),
      });
    return outcomes;
  };
  /** The one job the last messages enqueued, run. */
  const runOne = async () => {
    const ran = await run();
    expect(ran).toHaveLength(1);
    return ran[0]!;
  };
  return { ingest, model, reflection, publish, run, runOne };
}

describe('an agent.event with no turn waiting (req R-EVT-1)', () => {
  it('reflects on its own detail: a job over no turns, the detail in the prompt, a reflection entry, and a log that says so', async () => {
    const p = pipeline();
    await p.publish(
      ...[1, 2, 3].map((turnId) =>
        turn({ userId: 'alice', turnId, query: `I am planning the reef tank, step ${turnId}` }),
      ),
      event({ trigger: 'milestone' }),
    );
    expect((await p.run()).map((r) => r.outcome.status)).toEqual(['completed']);
    // Every turn is reflected on now; the next event has none to take.
    const e = event({ detail: 'The booking tool timed out twice while reserving Luigi for Friday.' });
    await p.publish(e);
    expect(p.ingest.jobs.jobs).toEqual([
      expect.objectContaining({
        jobId: eventJobId(eventId(e), 3),
        kind: 'event',
        trigger: 'event:error',
        turnIds: [],
        eventDetail: e.detail,
      }),
    ]);
    expect(p.ingest.log.entries).toContainEqual({
      level: 'info',
      message: 'agent.event reflects on its own detail',
      extra: expect.objectContaining({
        jobId: eventJobId(eventId(e), 3),
        reason: 'no turn was waiting for a batch',
        detail: true,
      }),
    });
    const { job, outcome } = await p.runOne();
    expect(outcome.status).toBe('completed');
    const prompt = p.model.requests.at(-1)?.prompt ?? '';
    expect(prompt).toContain(`## The event to reflect on\n`);
    expect(prompt).toContain(
      "The agent's note (error): The booking tool timed out twice while reserving Luigi for Friday.",
    );
    expect(prompt).not.toContain('## Turns to review');
    const log = p.reflection.batchLogs.logs.get(`alice/${job.jobId}`);
    expect(log).toMatchObject({
      status: 'completed',
      turns_reviewed: [],
      event_only: { reason: NO_TURN_WAITING, material: ['detail'] },
      diary: { written: true },
    });
    expect(log?.event_only?.not_reflected).toBeUndefined();
    const entry = [...p.reflection.diary.records.values()].find((r) => r.id === job.jobId);
    expect(entry?.reflection?.insight).toMatch(
      /^After error \(The booking tool.*\), the event was about .*(booking|luigi|tool)/i,
    );
    // The same event delivered again: the job is logged already, the model is not asked again.
    const asked = p.model.requests.length;
    await p.publish(e);
    expect((await p.run()).map((r) => r.outcome.status)).toEqual(['already_done']);
    expect(p.model.requests).toHaveLength(asked);
    // No batch of the signal state was touched.
    expect(JSON.parse(JSON.stringify((await p.ingest.signalState.load('alice')).raw)).pendingBatches).toEqual([]);
  });

  it('with an episode and no detail, reflects on the episode and writes its document', async () => {
    const p = pipeline();
    const e = event({
      trigger: 'milestone',
      turnId: 7,
      episode: {
        goal: 'Migrate the reef tank to the new sump',
        actions: [{ capability: 'plan.step', result: 'pump moved' }],
        outcome: { success: false, failureReason: 'the return pump was too weak' },
      },
    });
    await p.publish(e);
    const { job, outcome } = await p.runOne();
    expect(outcome.status).toBe('completed');
    expect(p.model.requests.at(-1)?.prompt).toContain(
      '(about turn 7)\nEpisode goal: Migrate the reef tank to the new sump',
    );
    const id = eventEpisodeId(e);
    expect(p.reflection.batchLogs.logs.get(`alice/${job.jobId}`)).toMatchObject({
      event_only: { material: ['episodes'] },
      episodes: [`episodes/${id}.md`],
    });
    expect(p.reflection.knowledge.episodes.has(`users/alice/episodes/${id}.md`)).toBe(true);
  });

  it('with nothing to reflect on, asks no model and says why in the log and the batch log', async () => {
    const p = pipeline();
    await p.publish(event({ trigger: 'session_boundary' }));
    const { job, outcome } = await p.runOne();
    expect(outcome.status).toBe('completed');
    expect(p.model.requests).toHaveLength(0);
    expect(p.reflection.batchLogs.logs.get(`alice/${job.jobId}`)).toMatchObject({
      model: null,
      event_only: { reason: NO_TURN_WAITING, material: [], not_reflected: NOTHING_TO_REFLECT_ON },
    });
    expect(p.reflection.log.entries).toContainEqual({
      level: 'info',
      message: 'agent.event not reflected on',
      extra: expect.objectContaining({ batchId: job.jobId, reason: NOTHING_TO_REFLECT_ON }),
    });
  });
});

describe('the material of an event reflected on by itself', () => {
  it('is the note, the named turn and the episodes in words, capped; the prompt says it once', () => {
    expect(eventMaterial({ trigger: 'error' }, [])).toBe('');
    const long = eventMaterial({ trigger: 'error', detail: 'x'.repeat(4000) }, [
      { trigger: 'error', episode: { goal: 'g'.repeat(1000), actions: [], outcome: { success: true } }, turnId: 3 },
      { trigger: 'error', episode: { goal: 'h'.repeat(1000), actions: [], outcome: { success: true } } },
    ]);
    expect(long.length).toBe(MAX_EVENT_MATERIAL_CHARS);
    expect(long.endsWith('[…truncated]')).toBe(true);
    const material = eventMaterial({ trigger: 'error', detail: 'the tool\n timed out' }, []);
    const prompt = buildReflectorPrompt(
      assembleBatch([]),
      [],
      { trigger: 'error', detail: 'the tool\n timed out' },
      [],
      material,
    );
    expect(prompt.match(/The agent's note/g)).toHaveLength(1);
    expect(eventId(event())).toMatch(/^\d{15}$/);
    expect(eventId(event())).not.toBe(eventId(event({ detail: 'other' })));
    // Its batch log and diary entry sort by the user's last turn when it came, among the others.
    const id = eventJobId(eventId(event()), 42);
    expect(JobSchema.shape.jobId.safeParse(id).success).toBe(true);
    expect(keys.batchSk(id)).toBe(`BATCH#${keys.batchSk('batch-40-42').slice(6, 16)}#${id}`);
    expect(keys.diarySk(id).startsWith(keys.diarySk('batch-40-42').slice(0, 16))).toBe(true);
  });
});
