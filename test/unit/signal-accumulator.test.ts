import { describe, expect, it } from 'vitest';
import {
  accumulate,
  completeBatch,
  deferBatch,
  MAX_PENDING_BATCHES,
  MAX_UNBATCHED_TURNS,
} from '../../lib/signals/signal-accumulator.js';
import { detectSignals } from '../../lib/signals/turn-signals.js';
import { idleCheck, scheduleIdleCheck } from '../../lib/signals/idle-rule.js';
import { initialSignalState, parseSignalState } from '../../lib/signals/signal-state.js';
import { defaultSignalConfig, parseSignalConfig } from '../../lib/signals/signal-weights.js';

const now = new Date('2026-02-06T14:30:00Z');
const never = () => false;
const t = (turnId: number, query = `entry${turnId} subject${turnId}`, signals?: object) => ({
  turnId,
  timestamp: '2026-02-06T14:00:00Z',
  query,
  ...(signals ? { signals } : {}),
});
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => t(a + i));

describe('signal accumulator (req R-SIG)', () => {
  it('fires a batch at the 10th turn since the last batch, not before', () => {
    const nine = accumulate(initialSignalState(), range(1, 9), defaultSignalConfig, now, never);
    expect(nine.triggers).toEqual([]);
    const ten = accumulate(nine.state, [t(10)], defaultSignalConfig, now, never);
    expect(ten.triggers).toEqual([
      {
        jobId: 'batch-1-10',
        kind: 'batch',
        trigger: 'turn_count',
        urgency: 0,
        turnIds: range(1, 10).map((x) => x.turnId),
        episodeIds: [],
      },
    ]);
    expect(ten.state.pendingBatches.map((p) => p.jobId)).toEqual(['batch-1-10']);
  });

  it('fires on urgency strictly above 5.0', () => {
    const corrections = [t(1, 'actually it was blue'), t(2, 'no, I meant the green one'), t(3, 'actually the red one')];
    const result = accumulate(initialSignalState(), corrections, defaultSignalConfig, now, never);
    expect(result.triggers).toHaveLength(1);
    expect(result.triggers[0]).toMatchObject({ trigger: 'urgency', urgency: 6, turnIds: [1, 2, 3] });
    const two = accumulate(initialSignalState(), corrections.slice(0, 2), defaultSignalConfig, now, never);
    expect(two.triggers).toEqual([]);
    expect(two.state.urgencyScore).toBe(4);
  });

  it('detects each of the five signals with its weight', () => {
    const c = defaultSignalConfig;
    expect(detectSignals({ query: 'Actually, it was Tuesday' }, [], c)).toEqual(['user_correction']);
    expect(detectSignals({ query: 'I meant the other one' }, [], c)).toEqual(['user_correction']);
    expect(detectSignals({ query: 'tell me more', signals: { validation: 'APPROVE', quality: 0.85 } }, [], c)).toEqual([
      'high_confidence_research',
    ]);
    expect(detectSignals({ query: 'tell me more', signals: { validation: 'APPROVE', quality: 0.84 } }, [], c)).toEqual(
      [],
    );
    expect(detectSignals({ query: 'tell me more', signals: { validation: 'REVISE', quality: 0.99 } }, [], c)).toEqual(
      [],
    );
    expect(detectSignals({ query: 'tell me more', signals: { route: 'clarify' } }, [], c)).toEqual([
      'knowledge_boundary',
    ]);
    expect(detectSignals({ query: 'tell me more', signals: { route: 'answer' } }, [], c)).toEqual([]);
    expect(detectSignals({ query: 'tell me more', signals: { contradiction: true } }, [], c)).toEqual([
      'contradiction',
    ]);
    expect(detectSignals({ query: 'reef tanks lighting' }, ['reef tanks', 'coral reef'], c)).toEqual([
      'topic_repeated',
    ]);
    expect(detectSignals({ query: 'reef tanks lighting' }, ['reef tanks', 'troll farms'], c)).toEqual([]);
  });

  it('counts a redelivered turn once and a late turn not at all', () => {
    const first = accumulate(initialSignalState(), range(1, 3), defaultSignalConfig, now, never);
    const again = accumulate(first.state, [t(2), t(3)], defaultSignalConfig, now, (id) => id <= 3);
    expect(again.outcomes.map((o) => o.disposition)).toEqual(['duplicate', 'duplicate']);
    expect(again.state.counters).toMatchObject({ turns: 3, duplicates: 2 });
    expect(again.state.turnsSinceLastBatch).toBe(3);
    const late = accumulate(first.state, [t(5), t(4)], defaultSignalConfig, now, (id) => id <= 3);
    expect(late.outcomes.map((o) => o.disposition)).toEqual(['counted', 'late']);
    expect(late.state.counters).toMatchObject({ turns: 4, late: 1 });
  });

  it('counts a turn repeated inside one batch once', () => {
    const r = accumulate(initialSignalState(), [t(1), t(1)], defaultSignalConfig, now, never);
    expect(r.outcomes.map((o) => o.disposition)).toEqual(['counted', 'duplicate']);
  });

  it('cuts the next batch from the turns after the pending one, and resets counters only when a batch completes', () => {
    const fired = accumulate(initialSignalState(), range(1, 10), defaultSignalConfig, now, never);
    const more = accumulate(fired.state, range(11, 13), defaultSignalConfig, now, never);
    expect(more.triggers).toEqual([]);
    expect(more.state.turnsSinceLastBatch).toBe(13);
    const next = accumulate(more.state, range(14, 20), defaultSignalConfig, now, never);
    expect(next.triggers).toMatchObject([
      { jobId: 'batch-11-20', trigger: 'turn_count', turnIds: range(11, 20).map((x) => x.turnId) },
    ]);
    expect(next.state.turnsSinceLastBatch).toBe(20);
    const done = completeBatch(
      more.state,
      'batch-1-10',
      range(1, 10).map((x) => x.turnId),
      now,
    );
    expect(done).toMatchObject({
      turnsSinceLastBatch: 3,
      urgencyScore: 0,
      lastBatchTurn: 10,
      pendingBatches: [],
      unbatchedTurnIds: [11, 12, 13],
    });
    expect(completeBatch(done!, 'batch-1-10', [1], now)).toBeNull();
  });

  // Found by the fault-equivalence run on LoCoMo conv-30: completion reset the score to 0,
  // dropping the urgency of turns folded while the batch ran, so the score followed timing.
  it('keeps the urgency of turns that arrived while a batch ran, whichever comes first', () => {
    const fired = accumulate(initialSignalState(), range(1, 10), defaultSignalConfig, now, never);
    const urgent = [t(11, 'Actually, I meant the 40 gallon tank'), t(12, 'no, that is wrong')];
    const turnsFirst = completeBatch(
      accumulate(fired.state, urgent, defaultSignalConfig, now, never).state,
      'batch-1-10',
      range(1, 10).map((x) => x.turnId),
      now,
    );
    const completionFirst = accumulate(
      completeBatch(
        fired.state,
        'batch-1-10',
        range(1, 10).map((x) => x.turnId),
        now,
      )!,
      urgent,
      defaultSignalConfig,
      now,
      never,
    ).state;
    expect(turnsFirst?.urgencyScore).toBeGreaterThan(0);
    expect(turnsFirst?.urgencyScore).toBe(completionFirst.urgencyScore);
    expect(turnsFirst?.unassigned).toEqual(completionFirst.unassigned);
  });

  it("forms the same batches whatever the reflector's timing (completion does not move batch boundaries)", () => {
    const turns = Array.from({ length: 40 }, (_, i) =>
      t(i + 1, i % 7 === 0 ? `actually entry${i}` : `entry${i} subject${i}`),
    );
    const slow = accumulate(initialSignalState(), turns, defaultSignalConfig, now, never).triggers.map((x) => x.jobId);
    let state = initialSignalState();
    const fast: string[] = [];
    for (const turn of turns) {
      const r = accumulate(state, [turn], defaultSignalConfig, now, never);
      state = r.state;
      for (const trig of r.triggers) {
        fast.push(trig.jobId);
        state = completeBatch(state, trig.jobId, trig.turnIds, now) ?? state;
      }
    }
    expect(fast).toEqual(slow);
    expect(slow.length).toBeGreaterThan(3);
  });

  it('enqueues a pending batch again, same job, when it is older than the timeout (its job was lost)', () => {
    const fired = accumulate(initialSignalState(), range(1, 10), defaultSignalConfig, now, never);
    const later = new Date(now.getTime() + defaultSignalConfig.pendingBatchTimeoutMs + 1);
    const r = accumulate(fired.state, [t(11)], defaultSignalConfig, later, never);
    expect(r.triggers).toMatchObject([
      { jobId: 'batch-1-10', trigger: 'pending_timeout', turnIds: range(1, 10).map((x) => x.turnId) },
    ]);
    expect(accumulate(r.state, [t(12)], defaultSignalConfig, later, never).triggers).toEqual([]);
  });

  it('waits longer for a batch deferred to batch inference, then fires it again to run on demand', () => {
    const fired = accumulate(initialSignalState(), range(1, 10), defaultSignalConfig, now, never);
    const deferred = deferBatch(fired.state, 'batch-1-10');
    expect(deferred?.pendingBatches[0]?.deferred).toBe(true);
    expect(deferBatch(deferred!, 'batch-1-10')).toBeNull();
    const past = (ms: number) => new Date(now.getTime() + ms + 1);
    expect(
      accumulate(deferred!, [t(11)], defaultSignalConfig, past(defaultSignalConfig.pendingBatchTimeoutMs), never)
        .triggers,
    ).toEqual([]);
    const r = accumulate(
      deferred!,
      [t(11)],
      defaultSignalConfig,
      past(defaultSignalConfig.deferredBatchTimeoutMs),
      never,
    );
    expect(r.triggers).toMatchObject([{ jobId: 'batch-1-10', trigger: 'pending_timeout' }]);
    expect(r.state.pendingBatches[0]?.deferred).toBeUndefined();
  });

  it('keeps at most MAX_UNBATCHED_TURNS unbatched turn ids when batches never complete', () => {
    const big = { ...defaultSignalConfig, turnThreshold: 10_000, urgencyThreshold: 1e9 };
    const r = accumulate(initialSignalState(), range(1, MAX_UNBATCHED_TURNS + 20), big, now, never);
    expect(r.state.unbatchedTurnIds).toHaveLength(MAX_UNBATCHED_TURNS);
    expect(r.state.unbatchedTurnIds[0]).toBe(21);
  });

  it('resets a corrupt state and says why', () => {
    const parsed = parseSignalState({ turnsSinceLastBatch: 'seven' });
    expect(parsed.corrupt).toBe(true);
    expect(parsed.issues).toContain('turnsSinceLastBatch');
    expect(parsed.state).toEqual(initialSignalState());
    expect(parseSignalState(undefined).corrupt).toBe(false);
  });

  it('takes per-stage overrides of thresholds and weights', () => {
    const c = parseSignalConfig('{"turnThreshold": 3, "weights": {"contradiction": 9}}');
    expect(c.turnThreshold).toBe(3);
    expect(c.weights.contradiction).toBe(9);
    expect(c.weights.userCorrection).toBe(2);
    expect(accumulate(initialSignalState(), range(1, 3), c, now, never).triggers).toHaveLength(1);
    expect(() => parseSignalConfig('{"turnThreshold": 0}')).toThrow(/turnThreshold/);
  });
});

describe('control events, summaries and activity', () => {
  const counted = (n: number) => accumulate(initialSignalState(), range(1, n), defaultSignalConfig, now, never).state;

  it('session.closed reflects on the turns no batch has taken and fires one session-close summary over the turns since the last summary', () => {
    const r = accumulate(counted(4), [{ kind: 'session_closed', sessionId: 's1' }], defaultSignalConfig, now, never);
    expect(r.triggers).toEqual([
      {
        jobId: 'batch-1-4',
        kind: 'batch',
        trigger: 'session_closed',
        urgency: 0,
        turnIds: [1, 2, 3, 4],
        episodeIds: [],
      },
      {
        jobId: 'summary-1-4',
        kind: 'session-close',
        trigger: 'session_closed',
        urgency: 0,
        turnIds: [1, 2, 3, 4],
        episodeIds: [],
      },
    ]);
    expect(r.state).toMatchObject({ messagesSinceSummary: 0, summaryTurnIds: [], unassigned: { turnIds: [] } });
    expect(r.state.pendingBatches.map((p) => p.jobId)).toEqual(['batch-1-4']);
    const again = accumulate(r.state, [{ kind: 'session_closed', sessionId: 's1' }], defaultSignalConfig, now, never);
    expect(again.triggers).toEqual([]);
  });

  it('agent.event fires an event reflection over the turns no batch has taken yet', () => {
    const r = accumulate(
      counted(3),
      [{ kind: 'agent_event', trigger: 'milestone', eventId: 'm' }],
      defaultSignalConfig,
      now,
      never,
    );
    expect(r.triggers).toEqual([
      { jobId: 'batch-1-3', kind: 'event', trigger: 'event:milestone', urgency: 0, turnIds: [1, 2, 3], episodeIds: [] },
    ]);
    expect(r.state.pendingBatches.map((p) => p.jobId)).toEqual(['batch-1-3']);
    const next = accumulate(
      r.state,
      [t(4), { kind: 'agent_event', trigger: 'error', eventId: 'e' }],
      defaultSignalConfig,
      now,
      never,
    );
    expect(next.triggers).toMatchObject([{ jobId: 'batch-4-4', kind: 'event', trigger: 'event:error' }]);
    // No turn waiting: the event reflects on itself (its detail), not on nothing, and not silently.
    const none = accumulate(
      r.state,
      [{ kind: 'agent_event', trigger: 'error', eventId: 'e1', detail: 'the booking tool timed out' }],
      defaultSignalConfig,
      now,
      never,
    );
    expect(none.triggers).toEqual([
      {
        jobId: 'event-e1-3',
        kind: 'event',
        trigger: 'event:error',
        urgency: 0,
        turnIds: [],
        episodeIds: [],
        eventDetail: 'the booking tool timed out',
        noTurns: 'no turn was waiting for a batch',
      },
    ]);
    expect(none.state.pendingBatches.map((p) => p.jobId)).toEqual(['batch-1-3']);
    const nothing = accumulate(
      initialSignalState(),
      [
        { kind: 'agent_event', trigger: 'user_request', eventId: 'e2' },
        { kind: 'agent_event', trigger: 'user_request', eventId: 'e2' },
      ],
      defaultSignalConfig,
      now,
      never,
    );
    expect(nothing.triggers).toMatchObject([{ jobId: 'event-e2-0', turnIds: [] }]);
    expect(nothing.eventsNotReflected).toEqual([]);
  });

  it('an agent.event that can fire nothing (too many batches wait) says why', () => {
    let state = counted(0);
    for (let i = 1; i <= MAX_PENDING_BATCHES; i++)
      state = accumulate(
        state,
        [t(i), { kind: 'agent_event', trigger: 'milestone', eventId: `${i}` }],
        defaultSignalConfig,
        now,
        never,
      ).state;
    expect(state.pendingBatches).toHaveLength(MAX_PENDING_BATCHES);
    const full = accumulate(
      state,
      [t(MAX_PENDING_BATCHES + 1), { kind: 'agent_event', trigger: 'error', eventId: 'x', detail: 'lost' }],
      defaultSignalConfig,
      now,
      never,
    );
    expect(full.triggers).toEqual([]);
    expect(full.eventsNotReflected).toEqual([
      {
        trigger: 'error',
        reason: expect.stringMatching(/^20 batches wait for the reflector already .*the 1 waiting turns/),
      },
    ]);
  });

  it('idle rule (fake clock): 5 minutes since the last message and 5 messages since the last summary', () => {
    const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
    const idle = at(5);
    expect(idleCheck(counted(4), { lastTurnId: 4 }, defaultSignalConfig, idle)).toEqual({
      skipped: 'too_few_messages',
    });
    expect(idleCheck(counted(6), { lastTurnId: 5 }, defaultSignalConfig, idle)).toEqual({ skipped: 'newer_message' });
    expect(idleCheck(counted(5), { lastTurnId: 5 }, defaultSignalConfig, at(4.9))).toEqual({ skipped: 'not_idle_yet' });
    const due = idleCheck(counted(5), { lastTurnId: 5 }, defaultSignalConfig, idle);
    expect(due).toMatchObject({
      trigger: { jobId: 'summary-1-5', kind: 'idle-summary', trigger: 'idle', turnIds: [1, 2, 3, 4, 5] },
    });
    if (!('state' in due)) throw new Error('expected a job');
    expect(idleCheck(due.state, { lastTurnId: 5 }, defaultSignalConfig, at(60))).toEqual({
      skipped: 'too_few_messages',
    });
    const custom = parseSignalConfig('{"idleMinMessages": 2, "idleMinutes": 1}');
    expect(idleCheck(counted(2), { lastTurnId: 2 }, custom, at(1))).toHaveProperty('trigger');
    expect(idleCheck(counted(2), { lastTurnId: 2 }, custom, at(0.5))).toEqual({ skipped: 'not_idle_yet' });
  });

  it('one pending idle check per user: scheduled when none is due later, rescheduled while the user talks', () => {
    const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
    // counted(5)'s last message was counted at `now`.
    const first = scheduleIdleCheck(counted(5), defaultSignalConfig, now);
    expect(first?.plan).toEqual({ dueAt: at(5).toISOString(), delaySeconds: 300 });
    if (!first) throw new Error('expected a check');
    expect(scheduleIdleCheck(first.state, defaultSignalConfig, at(4.9))).toBeNull();
    // Its time has come (fired, firing or lost): the next counted turn sends a new one.
    expect(scheduleIdleCheck(first.state, defaultSignalConfig, at(5))?.plan.dueAt).toBe(at(10).toISOString());
    const check = { lastTurnId: 5, dueAt: at(5).toISOString() };
    expect(idleCheck(first.state, { ...check, dueAt: at(3).toISOString() }, defaultSignalConfig, at(5))).toEqual({
      skipped: 'superseded',
    });
    // The user spoke 2 minutes in: the check puts itself back (the same check), 5 minutes after that message, writing nothing.
    const spoke = { ...first.state, lastSeenAt: at(2).toISOString() };
    expect(idleCheck(spoke, check, defaultSignalConfig, at(5))).toEqual({ reschedule: { delaySeconds: 120 } });
    expect(idleCheck(spoke, check, defaultSignalConfig, at(7))).toHaveProperty('trigger.jobId', 'summary-1-5');
    // Quiet since, but too few messages: no summary, and the state keeps the spent due time.
    const few = scheduleIdleCheck(counted(4), defaultSignalConfig, now);
    if (!few) throw new Error('expected a check');
    expect(idleCheck(few.state, { lastTurnId: 4, dueAt: few.plan.dueAt }, defaultSignalConfig, at(5))).toEqual({
      skipped: 'too_few_messages',
    });
    // A last message more than a threshold ahead of the clock (clocks disagree) is not waited for.
    expect(idleCheck({ ...first.state, lastSeenAt: at(20).toISOString() }, check, defaultSignalConfig, at(5))).toEqual({
      skipped: 'not_idle_yet',
    });
    // A threshold beyond SQS's 15-minute delay waits in steps of 15 minutes.
    const long = { ...defaultSignalConfig, idleMinutes: 40 };
    const slow = scheduleIdleCheck(counted(5), long, now);
    expect(slow?.plan.delaySeconds).toBe(900);
    if (!slow) throw new Error('expected a check');
    expect(idleCheck(slow.state, { lastTurnId: 5, dueAt: slow.plan.dueAt }, long, at(15))).toEqual({
      reschedule: { delaySeconds: 900 },
    });
    expect(idleCheck(slow.state, { lastTurnId: 5, dueAt: slow.plan.dueAt }, long, at(30))).toEqual({
      reschedule: { delaySeconds: 600 },
    });
    // A local run's timeScale shortens SQS's longest delay with the threshold: as many hops as in AWS.
    expect(scheduleIdleCheck(counted(5), { ...long, timeScale: 60 }, now)?.plan.delaySeconds).toBe(15);
    expect(scheduleIdleCheck(counted(5), { ...long, timeScale: 900 }, now)?.plan.delaySeconds).toBe(1);
  });

  it('keeps per-day message counts for the activity index, recent days only', () => {
    const day = (d: number, turnId: number) => ({
      turnId,
      timestamp: `2026-01-${String(d).padStart(2, '0')}T10:00:00Z`,
      query: `q${turnId}`,
    });
    const config = { ...defaultSignalConfig, activityDays: 2 };
    const r = accumulate(initialSignalState(), [day(1, 1), day(2, 2), day(2, 3), day(3, 4)], config, now, never);
    expect(r.state.activity).toEqual({ '2026-01-02': 2, '2026-01-03': 1 });
    // Each day is announced once for its activity marker, the first time it counts a message.
    expect(r.newActiveDays).toEqual(['2026-01-02', '2026-01-03']);
    expect(accumulate(r.state, [day(3, 5)], config, now, never).newActiveDays).toEqual([]);
    expect(accumulate(r.state, [day(4, 5)], config, now, never)).toMatchObject({
      newActiveDays: ['2026-01-04'],
      state: { activity: { '2026-01-03': 1, '2026-01-04': 1 } },
    });
  });

  it('reads a state stored before these fields existed without calling it corrupt', () => {
    const old = { ...initialSignalState() } as Record<string, unknown>;
    delete old.messagesSinceSummary;
    delete old.summaryTurnIds;
    delete old.activity;
    expect(parseSignalState(old)).toMatchObject({ corrupt: false, state: { messagesSinceSummary: 0, activity: {} } });
  });
});
