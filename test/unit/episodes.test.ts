/**
 * Req R-EPI, episodic memory: episodes in the turn contract, capability confidence over
 * a run of successes and failures, and the episode document a reflection links to.
 */
import { describe, expect, it } from 'vitest';
import type { Episode } from '../../events/episode.js';
import { TurnSavedSchema } from '../../events/turn-saved.js';
import { parseFrontMatter } from '../../lib/kernel/front-matter.js';
import {
  capabilityConfidence,
  episodeDocument,
  type EpisodeSummary,
  summariseEpisode,
} from '../../lib/turns/episodes.js';
import { turnItem } from '../../lib/items/source-items.js';
import { turnIndexEntry } from '../../lib/turns/turn-document.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import * as api from '../../lib/memory-api/memory-api.js';
import { runReflection } from '../../lib/batches/run-reflection.js';
import { AgentEventSchema } from '../../events/agent-event.js';
import { JobSchema } from '../../events/job.js';
import { eventEpisodeId } from '../../lib/turns/episodes.js';
import { accumulate } from '../../lib/signals/signal-accumulator.js';
import { initialSignalState } from '../../lib/signals/signal-state.js';
import { defaultSignalConfig } from '../../lib/signals/signal-weights.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel } from '../../lib/model/language-model.fake.js';

const booking = (success: boolean, failureReason?: string): Episode => ({
  goal: 'Book a table for two on Friday',
  plan: ['find restaurants', 'check availability', 'book'],
  actions: [
    { capability: 'web.search', params: { q: 'italian near me' }, result: '3 places', confidence: 0.9 },
    { capability: 'booking.create', params: { party: 2 }, result: success ? 'booked 19:30' : 'no tables', success },
  ],
  outcome: { success, ...(failureReason ? { failureReason } : {}), durationMs: 5200 },
});

const run = (outcomes: boolean[]) =>
  outcomes.map((success, i) => ({
    turnId: i + 1,
    timestamp: `2026-02-${String(i + 1).padStart(2, '0')}T10:00:00Z`,
    episode: summariseEpisode(booking(success)) as EpisodeSummary,
  }));

describe('episodes (req R-EPI)', () => {
  it('are an optional part of turn.saved; a bad one is rejected naming its field, hostile params never crash', () => {
    expect(TurnSavedSchema.safeParse(turn({ episode: booking(true) })).success).toBe(true);
    const bad = TurnSavedSchema.safeParse(
      turn({ episode: { ...booking(true), actions: [{ capability: 'rm -rf /' }] } }),
    );
    expect(bad.error?.issues[0]?.path).toEqual(['episode', 'actions', 0, 'capability']);
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) deep = { d: deep };
    const hostile = TurnSavedSchema.safeParse(
      turn({ episode: { ...booking(true), actions: [{ capability: 'x', params: deep }] } }),
    );
    expect(hostile.success).toBe(false);
    expect(hostile.error?.issues[0]?.path).toEqual(['episode']);
  });

  it('gives each capability a confidence that follows its run of successes and failures', () => {
    // booking.create: 3 successes, then 2 failures. web.search has no success of its own: it follows the episode.
    const [booking_, search] = capabilityConfidence(run([true, true, true, false, false]));
    expect(booking_).toEqual(
      expect.objectContaining({
        capability: 'booking.create',
        uses: 5,
        successes: 3,
        confidence: 0.57,
        recent: { uses: 5, successRate: 0.6 },
        trend: 'new',
      }),
    );
    expect(search?.capability).toBe('web.search');
    // Ten failures after the successes: confidence falls and the trend says so.
    const after = capabilityConfidence(run([true, true, true, true, true, ...Array.from({ length: 10 }, () => false)]));
    expect(after[0]).toMatchObject({
      capability: 'booking.create',
      uses: 15,
      successes: 5,
      confidence: 0.35,
      recent: { uses: 10, successRate: 0 },
      trend: 'declining',
    });
    const recovered = capabilityConfidence(
      run([...Array.from({ length: 5 }, () => false), ...Array.from({ length: 10 }, () => true)]),
    );
    expect(recovered[0]).toMatchObject({ confidence: 0.65, trend: 'improving', lastUsedAt: '2026-02-15T10:00:00Z' });
  });

  it('make their turn findable as content type episode, with the goal as title', () => {
    const item = turnItem(turnIndexEntry(turn({ turnId: 4, episode: booking(false, 'no tables left') })));
    expect(item).toMatchObject({
      title: 'episode: Book a table for two on Friday',
      contentTypes: ['context', 'episode'],
    });
    expect(item.text).toContain('Action booking.create: no tables');
    expect(item.text).toContain('Outcome: failed (no tables left)');
    expect(turnItem(turnIndexEntry(turn({ turnId: 5 }))).contentTypes).toEqual(['context']);
  });

  it('get a document linked to the reflection that reviewed the turn and to what it learned', async () => {
    const ingest = ingestDeps();
    const turns = Array.from({ length: 10 }, (_, i) =>
      turn({
        userId: 'alice',
        turnId: i + 1,
        query: i === 2 ? 'I adopted a beagle named Rex' : `entry${i}`,
        response: 'ok',
        ...(i === 2 ? { episode: booking(false, 'no tables left') } : {}),
      }),
    );
    await ingestTurns(
      turns.map((t, i) => ({ messageId: `m${i}`, body: JSON.stringify(t) })),
      ingest,
    );
    const deps = reflectionDeps(
      ingest,
      new ScriptedModel(() => ({
        new_facts: [
          { title: 'dog_rex', content: 'The user adopted a beagle named Rex.', source_turns: [3], category: 'Facts' },
        ],
      })),
    );
    const { knowledge } = deps;
    const out = await runReflection(ingest.jobs.jobs[0]!, deps);
    expect(out.status).toBe('completed');
    expect(deps.batchLogs.logs.get('alice/batch-1-10')?.episodes).toEqual(['episodes/0000000003.md']);
    const doc = knowledge.episodes.get('users/alice/episodes/0000000003.md') ?? '';
    expect(parseFrontMatter(doc).meta).toMatchObject({
      kind: 'episode',
      turn_id: 3,
      goal: 'Book a table for two on Friday',
      success: false,
      failure_reason: 'no tables left',
      capabilities: ['web.search', 'booking.create'],
      reflections: ['batch-1-10'],
      learned: ['Knowledge_staging/Facts/dog_rex--batch-1-10.md'],
    });
    expect(doc).toContain('**booking.create** · params `{"party":2}` · failed');
    expect(episodeDocument({ turnId: 1, sessionId: 's', timestamp: 't', episode: booking(true) }, 'b', [])).toContain(
      '## Outcome\nSucceeded.',
    );
    // The API serves the user's capability confidence from the stored episodes.
    const served = await api.capabilities({ turns: ingest.turns } as unknown as api.MemoryApiDeps, 'alice');
    expect(served.capabilities.map((c) => [c.capability, c.uses, c.successes])).toEqual([
      ['booking.create', 1, 0],
      ['web.search', 1, 0],
    ]);
  });

  describe('on agent.event', () => {
    const event = (overrides: Record<string, unknown> = {}) => ({
      type: 'agent.event' as const,
      version: 1 as const,
      userId: 'alice',
      timestamp: '2026-02-06T15:00:00Z',
      trigger: 'milestone' as const,
      episode: booking(false, 'no tables left'),
      ...overrides,
    });

    it('is optional and additive; a bad one is rejected naming its field', () => {
      expect(AgentEventSchema.safeParse(event({ episode: undefined })).success).toBe(true);
      expect(AgentEventSchema.safeParse(event()).success).toBe(true);
      const bad = AgentEventSchema.safeParse(event({ episode: { ...booking(true), outcome: { success: 'yes' } } }));
      expect(bad.error?.issues[0]?.path).toEqual(['episode', 'outcome', 'success']);
      // Its id is the event's: a republish gives the same one, another event another.
      expect(eventEpisodeId(event())).toBe(eventEpisodeId(structuredClone(event())));
      expect(eventEpisodeId(event())).not.toBe(eventEpisodeId(event({ timestamp: '2026-02-06T15:00:01Z' })));
      expect(JobSchema.shape.episodeIds.safeParse([eventEpisodeId(event())]).success).toBe(true);
    });

    it("goes with the batch its event cuts, once, and with the batch's retries; with no turn waiting, with the event's own job", () => {
      const id = eventEpisodeId(event());
      const now = new Date('2026-02-06T15:00:00Z');
      const at = (ms: number) => new Date(now.getTime() + ms);
      const milestone = { kind: 'agent_event' as const, trigger: 'milestone' as const, eventId: 'm', episodeId: id };
      // No turn to reflect on: the event reflects on itself, and its job takes the episode; a republish in the same delivery adds nothing.
      const alone = accumulate(initialSignalState(), [milestone, milestone], defaultSignalConfig, now, () => false);
      expect(alone.triggers).toEqual([
        expect.objectContaining({ jobId: 'event-m-0', kind: 'event', turnIds: [], episodeIds: [id] }),
      ]);
      expect(alone.state.unassigned.episodeIds).toEqual([]);
      // With turns waiting, the batch the event cuts takes it along.
      const turns = Array.from({ length: 3 }, (_, i) => ({
        turnId: i + 1,
        timestamp: '2026-02-06T15:01:00Z',
        query: `entry ${i}`,
      }));
      let r = accumulate(initialSignalState(), [...turns, milestone], defaultSignalConfig, now, () => false);
      expect(r.triggers).toEqual([expect.objectContaining({ kind: 'event', turnIds: [1, 2, 3], episodeIds: [id] })]);
      expect(r.state.unassigned.episodeIds).toEqual([]);
      expect(r.state.pendingBatches[0]?.episodeIds).toEqual([id]);
      // Republished while the batch is pending: not queued again. A retry of the timed-out batch still carries it.
      r = accumulate(
        r.state,
        [{ kind: 'agent_event', trigger: 'error', eventId: 'e', episodeId: id }],
        defaultSignalConfig,
        now,
        () => false,
      );
      expect(r.state.unassigned.episodeIds).toEqual([]);
      expect(r.triggers).toEqual([expect.objectContaining({ jobId: 'event-e-3', turnIds: [], episodeIds: [] })]);
      r = accumulate(
        r.state,
        [{ turnId: 100, timestamp: '2026-02-06T16:00:00Z', query: 'later' }],
        defaultSignalConfig,
        at(defaultSignalConfig.pendingBatchTimeoutMs + 1),
        () => false,
      );
      expect(r.triggers).toEqual(
        expect.arrayContaining([expect.objectContaining({ trigger: 'pending_timeout', episodeIds: [id] })]),
      );
      // Episodes now wait only while MAX_PENDING_BATCHES batches wait: their bound is test/unit/signal-state-bounds.test.ts's.
    });

    it('is stored once, counted into capability confidence, and documented by the batch its event fired', async () => {
      const ingest = ingestDeps();
      const turns = Array.from({ length: 3 }, (_, i) =>
        turn({
          userId: 'alice',
          turnId: i + 1,
          query: i === 1 ? 'Book us a table at Luigi for Friday' : `entry${i}`,
          response: 'ok',
        }),
      );
      const e = event({ turnId: 2 });
      await ingestTurns(
        [...turns, e, e].map((m, i) => ({ messageId: `m${i}`, body: JSON.stringify(m) })),
        ingest,
      );
      const id = eventEpisodeId(e);
      expect((await ingest.turns.eventEpisodes('alice')).map((x) => x.episodeId)).toEqual([id]);
      const [job] = ingest.jobs.jobs;
      expect(job).toMatchObject({ kind: 'event', trigger: 'event:milestone', turnIds: [1, 2, 3], episodeIds: [id] });
      const deps = reflectionDeps(
        ingest,
        new ScriptedModel(() => ({
          new_facts: [
            { title: 'luigi', content: 'The user books tables at Luigi.', source_turns: [2], category: 'Facts' },
          ],
        })),
      );
      expect((await runReflection(job!, deps)).status).toBe('completed');
      expect(deps.batchLogs.logs.get(`alice/${job!.jobId}`)?.episodes).toEqual([`episodes/${id}.md`]);
      const { meta, body } = parseFrontMatter(deps.knowledge.episodes.get(`users/alice/episodes/${id}.md`) ?? '');
      expect(meta).toMatchObject({
        kind: 'episode',
        episode_id: id,
        trigger: 'milestone',
        turn_id: 2,
        success: false,
        reflections: [job!.jobId],
        learned: [expect.stringMatching(/^Knowledge_staging\/Facts\/luigi--/)],
      });
      expect(body).toContain('**booking.create**');
      const { capabilities } = await api.capabilities(
        { turns: ingest.turns } as unknown as Parameters<typeof api.capabilities>[0],
        'alice',
      );
      expect(capabilities.find((c) => c.capability === 'booking.create')).toMatchObject({
        uses: 1,
        successes: 0,
        confidence: 0.33,
      });
    });
  });
});
