import { describe, expect, it } from 'vitest';
import type { Job } from '../../events/job.js';
import { BatchNotRecordedError } from '../../lib/batches/batch-log.port.js';
import {
  ModelAccessDeniedError,
  ModelUnavailableError,
  UnusableModelOutputError,
} from '../../lib/model/language-model.port.js';
import { initialSignalState, parseSignalState } from '../../lib/signals/signal-state.js';
import { checkIdle } from '../../lib/signals/check-idle.js';
import { ingestTurns } from '../../lib/turns/ingest-turns.js';
import { runReflection } from '../../lib/batches/run-reflection.js';
import { fixedClock } from '../../lib/kernel/runtime.fake.js';
import { ingestDeps, reflectionDeps } from '../helpers/use-case-deps.js';
import { turn } from '../../lib/turns/turn.fake.js';
import { ScriptedModel, stopped } from '../../lib/model/language-model.fake.js';

const records = (turns: object[]) => turns.map((t, i) => ({ messageId: `m${i}`, body: JSON.stringify(t) }));
/** Records of a later delivery (other message ids: the state remembers the last write's). */
const nextRecords = (turns: object[]) => turns.map((t, i) => ({ messageId: `n${i}`, body: JSON.stringify(t) }));

describe('ingest turns', () => {
  it('keeps a malformed record with the failing field and lets the valid ones through', async () => {
    const deps = ingestDeps();
    const r = await ingestTurns(
      [
        ...records([turn({ turnId: 1 })]),
        { messageId: 'bad1', body: '{"type":"turn.saved","version":1,"userId":"u 1"}' },
        { messageId: 'bad2', body: 'not json' },
      ],
      deps,
    );
    expect(r).toMatchObject({ accepted: 1, rejected: 2, failedMessageIds: [] });
    expect(deps.rejected.kept.map((k) => k.messageId)).toEqual(['bad1', 'bad2']);
    expect(deps.rejected.kept[0]?.errors.map((e) => e.path)).toEqual(
      expect.arrayContaining(['userId', 'sessionId', 'turnId']),
    );
    expect(deps.rejected.kept[1]?.errors[0]?.path).toBe('(body)');
    expect(deps.rejected.kept[0]?.body).toContain('u 1');
  });

  it("writes each user's state once per batch and enqueues one job at the 10th turn", async () => {
    const deps = ingestDeps();
    const a = Array.from({ length: 10 }, (_, i) => turn({ userId: 'alice', turnId: i + 1, query: `entry${i}` }));
    const b = [turn({ userId: 'bob', turnId: 1 })];
    const r = await ingestTurns(records([...a, ...b]), deps);
    expect(r.accepted).toBe(11);
    expect(deps.signalState.saves).toBe(2);
    expect(deps.turns.saveCalls).toBe(1);
    expect(deps.jobs.jobs).toEqual([
      expect.objectContaining({ userId: 'alice', jobId: 'batch-1-10', kind: 'batch', trigger: 'turn_count' }),
    ]);
    expect(deps.jobs.jobs[0]?.turnIds).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('marks every turn until the TURNLOG is recorded, then only those at or below lastTurnId (late, redelivered, duplicate)', async () => {
    const deps = ingestDeps();
    await ingestTurns(records([turn({ userId: 'alice', turnId: 1 }), turn({ userId: 'alice', turnId: 2 })]), deps);
    expect(deps.turns.marked.map((m) => m.turnId)).toEqual([1, 2]);
    expect(deps.turns.turnLogs.get('alice')).toBe(1);
    expect(deps.signalState.state('alice').turnLog).toBe(true);
    await ingestTurns(nextRecords([turn({ userId: 'alice', turnId: 5 })]), deps);
    expect(deps.turns.marked.map((m) => m.turnId)).toEqual([1, 2]);
    // 4 comes late (stored, marked), 2 again (a duplicate: not stored, marked), 6 above lastTurnId (stored, not marked).
    await ingestTurns(
      records([
        turn({ userId: 'alice', turnId: 4 }),
        turn({ userId: 'alice', turnId: 2 }),
        turn({ userId: 'alice', turnId: 6 }),
      ]).map((r) => ({ ...r, messageId: `late-${r.messageId}` })),
      deps,
    );
    expect(deps.turns.marked.map((m) => m.turnId)).toEqual([1, 2, 4, 2]);
    expect([...deps.turns.turns.keys()].sort()).toEqual(['alice#1', 'alice#2', 'alice#4', 'alice#5', 'alice#6']);
    expect(deps.turns.turnLogs.get('alice')).toBe(1);
  });

  it('counts republished turns (new messages) as duplicates and enqueues nothing new', async () => {
    const deps = ingestDeps();
    const batch = records(
      Array.from({ length: 10 }, (_, i) => turn({ userId: 'alice', turnId: i + 1, query: `entry${i}` })),
    );
    await ingestTurns(batch, deps);
    const again = await ingestTurns(
      batch.map((r) => ({ ...r, messageId: `again-${r.messageId}` })),
      deps,
    );
    expect(again).toMatchObject({ accepted: 0, duplicates: 10 });
    expect(deps.jobs.jobs).toHaveLength(1);
    expect(deps.signalState.state('alice').counters).toMatchObject({ turns: 10, duplicates: 10, batchesTriggered: 1 });
  });

  it('folds nothing twice when SQS redelivers messages the state already holds (a lost response, a crash after the write)', async () => {
    const deps = ingestDeps();
    const batch = records(
      Array.from({ length: 10 }, (_, i) => turn({ userId: 'alice', turnId: i + 1, query: `entry${i}` })),
    );
    await ingestTurns(batch, deps);
    const before = structuredClone(deps.signalState.state('alice'));
    const again = await ingestTurns(batch, deps);
    expect(again).toMatchObject({
      accepted: 0,
      duplicates: 0,
      controlEvents: 0,
      alreadyApplied: 10,
      failedMessageIds: [],
    });
    expect(deps.jobs.jobs).toHaveLength(1);
    expect(deps.signalState.state('alice')).toEqual(before);
    // A later message of the same user is folded as usual.
    const next = await ingestTurns(
      records([turn({ userId: 'alice', turnId: 11, query: 'entry10' })]).map((r) => ({ ...r, messageId: 'm-next' })),
      deps,
    );
    expect(next.accepted).toBe(1);
  });

  it("hands back only the failing user's records when their storage fails", async () => {
    const deps = ingestDeps();
    deps.turns.failFor.add('bob');
    const r = await ingestTurns(
      records([
        turn({ userId: 'alice', turnId: 1 }),
        turn({ userId: 'bob', turnId: 1 }),
        turn({ userId: 'bob', turnId: 2 }),
      ]),
      deps,
    );
    expect(r.failedMessageIds.sort()).toEqual(['m1', 'm2']);
    expect(r.accepted).toBe(1);
    expect(deps.signalState.items.has('bob')).toBe(false);
  });

  it('puts a user in the activity index for a day before the state that counts it, once per day', async () => {
    const deps = ingestDeps();
    const marks: string[][] = [];
    const mark = deps.signalState.markActive.bind(deps.signalState);
    deps.signalState.markActive = async (m) => {
      marks.push(m.map((x) => `${x.userId} ${x.day}`));
      return mark(m);
    };
    // The function dies after the markers, before the state: the retry finds them there.
    const save = deps.signalState.save.bind(deps.signalState);
    let crashes = 1;
    deps.signalState.save = async (...a) => {
      if (crashes-- > 0) throw new Error('died before the state write');
      return save(...a);
    };
    const day = (d: number, n: number) =>
      Array.from({ length: n }, (_, i) =>
        turn({ userId: 'alice', turnId: d * 100 + i, timestamp: `2026-02-0${d}T10:0${i}:00Z` }),
      );
    const batch = records(day(6, 6));
    await expect(ingestTurns(batch, deps)).resolves.toMatchObject({ failedMessageIds: batch.map((r) => r.messageId) });
    expect(await deps.signalState.activeUsers(['2026-02-06'])).toEqual([{ userId: 'alice', activity: {} }]);
    await ingestTurns(batch, deps);
    await ingestTurns(
      records(day(7, 2)).map((r) => ({ ...r, messageId: `d7-${r.messageId}` })),
      deps,
    );
    expect(marks).toEqual([['alice 2026-02-06'], ['alice 2026-02-06'], ['alice 2026-02-07']]);
    expect(await deps.signalState.activeUsers(['2026-02-06', '2026-02-07'])).toEqual([
      { userId: 'alice', activity: { '2026-02-06': 6, '2026-02-07': 2 } },
    ]);
  });

  it("marks every user's new day of a batch in one request", async () => {
    const deps = ingestDeps();
    const calls: number[] = [];
    const mark = deps.signalState.markActive.bind(deps.signalState);
    deps.signalState.markActive = async (m) => {
      calls.push(m.length);
      return mark(m);
    };
    await ingestTurns(records(Array.from({ length: 10 }, (_, i) => turn({ userId: `user-${i}`, turnId: 1 }))), deps);
    expect(calls).toEqual([10]);
    expect((await deps.signalState.activeUsers(['2026-02-06'])).map((u) => u.userId)).toHaveLength(10);
  });

  it('resets a corrupt state with a warning instead of failing', async () => {
    const deps = ingestDeps();
    deps.signalState.items.set('alice', { raw: { urgencyScore: 'high' }, version: 3 });
    const r = await ingestTurns(records([turn({ userId: 'alice', turnId: 1 })]), deps);
    expect(r.accepted).toBe(1);
    expect(deps.log.entries.some((e) => e.level === 'warn' && e.message.includes('corrupt'))).toBe(true);
    expect(deps.signalState.state('alice').counters.turns).toBe(1);
  });
});

describe('ingest: control events, claim checks, idle checks', () => {
  it('routes session.closed and agent.event to their jobs, in order with the turns', async () => {
    const deps = ingestDeps();
    const msgs = [
      ...[1, 2, 3].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` })),
      {
        type: 'agent.event',
        version: 1,
        userId: 'alice',
        timestamp: '2026-02-06T14:05:00Z',
        trigger: 'milestone',
        detail: 'shipped',
      },
      { type: 'session.closed', version: 1, userId: 'alice', sessionId: 's-1', timestamp: '2026-02-06T14:06:00Z' },
    ];
    const r = await ingestTurns(records(msgs), deps);
    expect(r).toMatchObject({ accepted: 3, controlEvents: 2, rejected: 0 });
    expect(deps.jobs.jobs.map((j) => [j.kind, j.jobId, j.trigger])).toEqual([
      ['event', 'batch-1-3', 'event:milestone'],
      // The event's batch took turns 1–3: the session close has no turns left to reflect on, only its summary.
      ['session-close', 'summary-1-3', 'session_closed'],
    ]);
  });

  it('rejects an unknown type or trigger, naming the field', async () => {
    const deps = ingestDeps();
    await ingestTurns(
      records([
        { type: 'turn.deleted', version: 1, userId: 'alice' },
        { type: 'agent.event', version: 1, userId: 'alice', timestamp: '2026-02-06T14:05:00Z', trigger: 'party' },
      ]),
      deps,
    );
    expect(deps.rejected.kept.map((k) => k.errors[0]?.path)).toEqual(['type', 'trigger']);
  });

  it('resolves a claim check and rejects one that is missing or points at another turn', async () => {
    const deps = ingestDeps();
    const big = turn({ userId: 'alice', turnId: 1, response: 'x'.repeat(1000) });
    deps.claims.objects.set('claims/alice/1.json', JSON.stringify(big));
    deps.claims.objects.set('claims/alice/2.json', JSON.stringify({ ...big, turnId: 9 }));
    const claim = (turnId: number, key: string) => ({
      type: 'turn.saved',
      version: 1,
      userId: 'alice',
      sessionId: 's-1',
      turnId,
      timestamp: big.timestamp,
      payloadRef: { key, bytes: 1 },
    });
    const r = await ingestTurns(
      records([claim(1, 'claims/alice/1.json'), claim(2, 'claims/alice/2.json'), claim(3, 'claims/alice/none.json')]),
      deps,
    );
    expect(r).toMatchObject({ accepted: 1, rejected: 2 });
    expect(deps.turns.turns.get('alice#1')?.response).toHaveLength(1000);
    expect(deps.rejected.kept.map((k) => k.errors[0]?.path)).toEqual(['payloadRef.key', 'payloadRef.key']);
  });

  it("sends a user's whole group back when one of their claim checks cannot be fetched yet", async () => {
    const deps = ingestDeps();
    const big = turn({ userId: 'alice', turnId: 1 });
    deps.claims.objects.set('claims/alice/1.json', JSON.stringify(big));
    deps.claims.unavailable.add('claims/alice/1.json');
    const claim = {
      type: 'turn.saved',
      version: 1,
      userId: 'alice',
      sessionId: 's-1',
      turnId: 1,
      timestamp: big.timestamp,
      payloadRef: { key: 'claims/alice/1.json', bytes: 1 },
    };
    const r = await ingestTurns(
      records([claim, turn({ userId: 'alice', turnId: 2 }), turn({ userId: 'bob', turnId: 1 })]),
      deps,
    );
    expect(r.failedMessageIds.sort()).toEqual(['m0', 'm1']);
    expect(r).toMatchObject({ accepted: 1, rejected: 0 });
    expect(deps.signalState.items.has('alice')).toBe(false);
  });

  it('schedules one idle check per user while one is pending, due the idle delay after the first counted turn', async () => {
    const deps = ingestDeps();
    await ingestTurns(
      records([1, 2, 3].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` }))),
      deps,
    );
    const dueAt = new Date(deps.clock.now().getTime() + 300_000).toISOString();
    expect(deps.idle.checks).toEqual([
      {
        check: expect.objectContaining({ type: 'idle.check', userId: 'alice', lastTurnId: 3, dueAt }),
        delaySeconds: 300,
      },
    ]);
    await ingestTurns(
      nextRecords([4, 5].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` }))),
      deps,
    );
    await ingestTurns(nextRecords([turn({ userId: 'bob', turnId: 1 })]), deps);
    expect(deps.idle.checks.map((c) => c.check.userId)).toEqual(['alice', 'bob']);
  });

  it('the idle check reschedules itself while the user talks, then enqueues a summary once they have gone quiet after 5 messages', async () => {
    const deps = ingestDeps();
    await ingestTurns(
      records([1, 2, 3].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` }))),
      deps,
    );
    const [sent] = deps.idle.checks;
    if (!sent) throw new Error('no idle check');
    const at = (iso: string) => ({
      signalState: deps.signalState,
      jobs: deps.jobs,
      idle: deps.idle,
      settings: deps.settings,
      clock: fixedClock(iso),
      log: deps.log,
      config: deps.config,
    });
    // Two more turns two minutes later (the clock the signal function reads moves on).
    const later = new Date(deps.clock.now().getTime() + 120_000);
    await ingestTurns(nextRecords([4, 5].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` }))), {
      ...deps,
      clock: fixedClock(later.toISOString()),
    });
    const fired = await checkIdle(sent.check, at(sent.check.dueAt ?? ''));
    expect(fired).toEqual({ status: 'rescheduled', delaySeconds: 120 });
    const back = deps.idle.checks.at(-1);
    if (!back) throw new Error('no rescheduled check');
    // The same check (its dueAt is its identity), put back until 5 minutes after the last turn; the state is not written.
    expect(back).toMatchObject({ check: { userId: 'alice', dueAt: sent.check.dueAt }, delaySeconds: 120 });
    const quietAt = new Date(later.getTime() + 300_000).toISOString();
    const due = await checkIdle(back.check, at(quietAt));
    expect(due).toMatchObject({ status: 'enqueued', job: { kind: 'idle-summary', jobId: 'summary-1-5' } });
    // The same check delivered again finds the summary it committed: the same job again (one summary), nothing written.
    const saves = deps.signalState.saves;
    expect(await checkIdle(back.check, at(quietAt))).toMatchObject({
      status: 'resent',
      job: { jobId: 'summary-1-5', turnIds: [1, 2, 3, 4, 5] },
    });
    expect(deps.signalState.saves).toBe(saves);
    // A turn after the check's due time sends a fresh check; a later one, after that check's due time, another.
    await ingestTurns(records([6].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` }))), {
      ...deps,
      clock: fixedClock(quietAt),
    });
    const fresh = deps.idle.checks.at(-1);
    expect(fresh?.check.dueAt).toBe(new Date(Date.parse(quietAt) + 300_000).toISOString());
    const afterFresh = new Date(Date.parse(quietAt) + 400_000).toISOString();
    await ingestTurns(nextRecords([7].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` }))), {
      ...deps,
      clock: fixedClock(afterFresh),
    });
    // The fresh one, put back behind the newer, then stops as superseded.
    if (!fresh) throw new Error('no fresh check');
    expect(await checkIdle(fresh.check, at(afterFresh))).toEqual({ status: 'skipped', reason: 'superseded' });
    expect(deps.jobs.jobs.map((j) => j.jobId)).toEqual(['summary-1-5', 'summary-1-5']);
    // An older check (no dueAt) keeps the old rule: its turn must be the last.
    expect(
      await checkIdle(
        { type: 'idle.check', version: 1, userId: 'alice', lastTurnId: 4, enqueuedAt: '2026-02-06T14:00:00Z' },
        at('2026-02-06T15:00:00Z'),
      ),
    ).toEqual({ status: 'skipped', reason: 'newer_message' });
  });
});

describe('idle check: the state write commits the summary before its job is enqueued', () => {
  /** The store, but `concurrent` runs (once) just before its first save: another writer's write lands between a read and this write. */
  function raceFirstSave<S extends { save: (...args: never[]) => Promise<boolean> }>(
    store: S,
    concurrent: () => Promise<unknown>,
  ) {
    let ran = false;
    const racing = Object.assign(Object.create(store) as S, {
      save: async (...args: Parameters<S['save']>) => {
        if (!ran) {
          ran = true;
          await concurrent();
        }
        return store.save(...args);
      },
    });
    return { store: racing, ran: () => ran };
  }

  /** Alice's turns 1–5 counted at 14:30; her idle check, due at 14:35, firing on time. */
  async function quietAlice() {
    const deps = ingestDeps();
    await ingestTurns(
      records([1, 2, 3, 4, 5].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` }))),
      deps,
    );
    const sent = deps.idle.checks[0]?.check;
    if (!sent?.dueAt) throw new Error('no idle check');
    const dueAt = sent.dueAt;
    const idleDeps = (
      iso: string,
      over: Partial<{ signalState: typeof deps.signalState; jobs: typeof deps.jobs }> = {},
    ) => ({
      signalState: deps.signalState,
      jobs: deps.jobs,
      idle: deps.idle,
      settings: deps.settings,
      clock: fixedClock(iso),
      log: deps.log,
      config: deps.config,
      ...over,
    });
    /** Alice speaks again at `iso` (the signal function, its own clock). */
    const speak = (turnId: number, iso: string) =>
      ingestTurns(nextRecords([turn({ userId: 'alice', turnId, query: `entry${turnId}` })]), {
        ...deps,
        clock: fixedClock(iso),
      });
    return { deps, sent, dueAt, idleDeps, speak };
  }

  it('a write that loses to a new turn enqueues no summary; the check that turn sends summarises everything once', async () => {
    const { deps, sent, dueAt, idleDeps, speak } = await quietAlice();
    // Turn 6 is counted just as the check fires: its state write lands between the check's read and its write.
    const store = deps.signalState;
    const race = raceFirstSave(store, () => speak(6, dueAt));
    const outcome = await checkIdle(sent, idleDeps(dueAt, { signalState: race.store }));
    expect(race.ran()).toBe(true);
    // The rule asked again on the new state: the check is superseded by the one turn 6 sent; nothing enqueued.
    expect(outcome).toEqual({ status: 'skipped', reason: 'superseded' });
    expect(deps.jobs.jobs).toEqual([]);
    expect(store.state('alice')).toMatchObject({ summaryTurnIds: [1, 2, 3, 4, 5, 6], messagesSinceSummary: 6 });
    expect(store.state('alice').idleSummary).toBeUndefined();
    const next = deps.idle.checks.at(-1)?.check;
    if (!next?.dueAt || next.dueAt === dueAt) throw new Error('turn 6 sent no new check');
    expect(await checkIdle(next, idleDeps(next.dueAt))).toMatchObject({
      status: 'enqueued',
      job: { jobId: 'summary-1-6' },
    });
    expect(deps.jobs.jobs.map((j) => j.jobId)).toEqual(['summary-1-6']);
  });

  it('a check delivered again after its write landed and its enqueue failed sends the same job, even after a new turn', async () => {
    const { deps, sent, dueAt, idleDeps, speak } = await quietAlice();
    const failing = Object.assign(Object.create(deps.jobs) as typeof deps.jobs, {
      enqueue: async () => {
        throw new Error('SQS unavailable');
      },
    });
    const saves = deps.signalState.saves;
    // The record fails (the handler reports it), so the queue delivers the check again.
    await expect(checkIdle(sent, idleDeps(dueAt, { jobs: failing }))).rejects.toThrow('SQS unavailable');
    expect(deps.signalState.saves).toBe(saves + 1);
    expect(deps.signalState.state('alice')).toMatchObject({
      summaryTurnIds: [],
      messagesSinceSummary: 0,
      idleSummary: { dueAt, turnIds: [1, 2, 3, 4, 5] },
    });
    expect(deps.jobs.jobs).toEqual([]);
    // Alice speaks before the redelivery: a new check is pending, yet the old one still owns its summary.
    await speak(6, new Date(Date.parse(dueAt) + 10_000).toISOString());
    const redelivered = new Date(Date.parse(dueAt) + 30_000).toISOString();
    const again = await checkIdle(sent, idleDeps(redelivered));
    expect(again).toMatchObject({
      status: 'resent',
      job: { jobId: 'summary-1-5', kind: 'idle-summary', turnIds: [1, 2, 3, 4, 5], requestedAt: dueAt },
    });
    // And once more after that complete run: the same job id again, nothing new, nothing written.
    expect(await checkIdle(sent, idleDeps(redelivered))).toEqual(again);
    expect(deps.jobs.jobs.map((j) => j.jobId)).toEqual(['summary-1-5', 'summary-1-5']);
    expect(deps.signalState.saves).toBe(saves + 2);
    expect(deps.signalState.state('alice')).toMatchObject({ summaryTurnIds: [6], messagesSinceSummary: 1 });
  });

  it('a session close whose write loses to the idle summary enqueues no summary of the turns that one took', async () => {
    const { deps, sent, dueAt, idleDeps } = await quietAlice();
    // Turn 6 and the session's close are folded just as the check fires; the check's write lands first.
    const race = raceFirstSave(deps.signalState, () => checkIdle(sent, idleDeps(dueAt)));
    const racing = race.store;
    const close = {
      type: 'session.closed',
      version: 1,
      userId: 'alice',
      sessionId: 's-1',
      timestamp: '2026-02-06T14:35:00Z',
    };
    const r = await ingestTurns(nextRecords([turn({ userId: 'alice', turnId: 6, query: 'entry6' }), close]), {
      ...deps,
      signalState: racing,
      clock: fixedClock(dueAt),
    });
    expect(race.ran()).toBe(true);
    expect(r).toMatchObject({ accepted: 1, controlEvents: 1, failedMessageIds: [] });
    // Turns 1–5 once (the idle summary), turn 6 once (the close's, recomputed on the new state).
    expect(deps.jobs.jobs.filter((j) => j.kind !== 'batch').map((j) => [j.kind, j.jobId])).toEqual([
      ['idle-summary', 'summary-1-5'],
      ['session-close', 'summary-6-6'],
    ]);
  });

  it("a session close redelivered after its write landed and its summary's enqueue failed sends the same summary again", async () => {
    const deps = ingestDeps();
    const msgs = [
      ...[1, 2, 3].map((turnId) => turn({ userId: 'alice', turnId, query: `entry${turnId}` })),
      { type: 'session.closed', version: 1, userId: 'alice', sessionId: 's-1', timestamp: '2026-02-06T14:06:00Z' },
    ];
    let failures = 1;
    const flaky = Object.assign(Object.create(deps.jobs) as typeof deps.jobs, {
      enqueue: async (job: Job) => {
        if (job.kind === 'session-close' && failures-- > 0) throw new Error('SQS unavailable');
        return deps.jobs.enqueue(job);
      },
    });
    const first = await ingestTurns(records(msgs), { ...deps, jobs: flaky });
    // The user's records go back to the queue; the state holds them, and the summary it committed.
    expect(first.failedMessageIds).toEqual(['m0', 'm1', 'm2', 'm3']);
    expect(deps.signalState.state('alice')).toMatchObject({
      summaryTurnIds: [],
      closeSummaries: [{ turnIds: [1, 2, 3] }],
    });
    const again = await ingestTurns(records(msgs), { ...deps, clock: fixedClock('2026-02-06T14:31:00.000Z') });
    expect(again).toMatchObject({ alreadyApplied: 4, accepted: 0, failedMessageIds: [] });
    expect(await ingestTurns(records(msgs), deps)).toMatchObject({ alreadyApplied: 4 });
    const summaries = deps.jobs.jobs.filter((j) => j.kind === 'session-close');
    expect(summaries.map((j) => [j.jobId, j.requestedAt])).toEqual([
      ['summary-1-3', '2026-02-06T14:30:00.000Z'],
      ['summary-1-3', '2026-02-06T14:30:00.000Z'],
    ]);
    // The next write drops them: later messages never send them again.
    await ingestTurns(nextRecords([turn({ userId: 'alice', turnId: 4, query: 'entry4' })]), deps);
    expect(deps.signalState.state('alice').closeSummaries).toBeUndefined();
  });

  it('reads a state written before idleSummary existed', () => {
    const { idleSummary: _, ...old } = { ...initialSignalState(), summaryTurnIds: [1, 2], messagesSinceSummary: 2 };
    expect(parseSignalState(JSON.parse(JSON.stringify(old)))).toMatchObject({
      corrupt: false,
      state: { summaryTurnIds: [1, 2] },
    });
    expect(parseSignalState(old).state.idleSummary).toBeUndefined();
  });
});

describe('run reflection', () => {
  const job = (turnIds: number[]): Job => ({
    type: 'reflector.job',
    version: 1,
    jobId: `batch-${turnIds[0]}-${turnIds.at(-1)}`,
    userId: 'alice',
    kind: 'batch',
    trigger: 'turn_count',
    urgency: 0,
    turnIds,
    requestedAt: '2026-02-06T14:30:00Z',
  });

  async function setup(reply: (call: number) => unknown) {
    const ingest = ingestDeps();
    const turns = Array.from({ length: 10 }, (_, i) =>
      turn({
        userId: 'alice',
        turnId: i + 1,
        query: i === 2 ? 'I adopted a beagle named Rex' : `entry${i}`,
        response: 'ok',
      }),
    );
    await ingestTurns(records(turns), ingest);
    let calls = 0;
    const model = new ScriptedModel(() => reply(++calls));
    const deps = reflectionDeps(ingest, model);
    return { deps, model, job: ingest.jobs.jobs[0]! };
  }
  const beagle = {
    new_facts: [
      { title: 'dog_rex', content: 'The user adopted a beagle named Rex.', source_turns: [3], category: 'Facts' },
    ],
  };

  it('stages what passes the gates, logs the batch and resets the counters', async () => {
    const { deps, model, job: j } = await setup(() => beagle);
    const out = await runReflection(j, deps);
    expect(out.status).toBe('completed');
    expect(model.requests[0]).toMatchObject({ temperature: 0.6, maxTokens: 1500, toolName: 'record_reflection' });
    expect(model.requests[0]?.prompt).toContain('[Turn 3]');
    expect([...deps.knowledge.staged.keys()]).toEqual(['alice/Facts/dog_rex--batch-1-10.md']);
    const log = deps.batchLogs.logs.get('alice/batch-1-10');
    expect(log).toMatchObject({
      status: 'completed',
      turns_reviewed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      staged_files: ['Knowledge_staging/Facts/dog_rex--batch-1-10.md'],
    });
    expect(deps.signalState.state('alice')).toMatchObject({
      turnsSinceLastBatch: 0,
      lastBatchTurn: 10,
      pendingBatches: [],
    });
  });

  it('a batch whose every item fails the gates is still logged, empty, and still resets the counters (req R-GATE-8)', async () => {
    const rejected = {
      new_facts: [
        { title: 'cat_tom', content: 'The user adopted a cat named Tom.', source_turns: [42], category: 'Facts' },
        { title: 'violin', content: 'The user plays the violin.', source_turns: [3], category: 'Facts' },
      ],
    };
    const { deps, job: j } = await setup(() => rejected);
    expect((await runReflection(j, deps)).status).toBe('completed');
    expect(deps.knowledge.staged.size).toBe(0);
    const log = deps.batchLogs.logs.get('alice/batch-1-10');
    expect(log).toMatchObject({
      status: 'completed',
      staged_files: [],
      promoted_files: [],
      quality_gate_results: { items_proposed: 2, items_passed: 0 },
    });
    expect(log?.quality_gate_results.rejections.map((r) => r.gate)).toEqual(['turn_existence', 'keyword_match']);
    expect(deps.signalState.state('alice')).toMatchObject({
      turnsSinceLastBatch: 0,
      lastBatchTurn: 10,
      pendingBatches: [],
    });
  });

  it("keeps the model's assessment of the batch (req R-EVT-4) in the batch log", async () => {
    const { deps, job: j } = await setup(() => ({
      ...beagle,
      assessment: { confidence: 0.7, caution: 0.35, sentiment: 0.5 },
    }));
    await runReflection(j, deps);
    expect(deps.batchLogs.logs.get('alice/batch-1-10')).toMatchObject({
      status: 'completed',
      assessment: { confidence: 0.7, caution: 0.35, sentiment: 0.5 },
    });
  });

  it('a redelivered job calls the model once and completes the batch once', async () => {
    const { deps, model, job: j } = await setup(() => beagle);
    await runReflection(j, deps);
    const again = await runReflection(j, deps);
    expect(again.status).toBe('already_done');
    expect(model.requests).toHaveLength(1);
    expect(deps.signalState.state('alice').counters.batchesCompleted).toBe(1);
  });

  it('reuses the recorded model output when a delivery died after the model call', async () => {
    const { deps, model, job: j } = await setup(() => beagle);
    const failingLogs = deps.batchLogs;
    const write = failingLogs.write.bind(failingLogs);
    failingLogs.write = async () => {
      throw new Error('S3 down');
    };
    await expect(runReflection(j, deps)).rejects.toThrow('S3 down');
    failingLogs.write = write;
    expect((await runReflection(j, deps)).status).toBe('completed');
    expect(model.requests).toHaveLength(1);
  });

  it('aborts on unusable output, keeps the raw text in the log and still resets the counters', async () => {
    const { deps, job: j } = await setup(() => 'I think the user likes dogs');
    const out = await runReflection(j, deps);
    expect(out.status).toBe('aborted');
    const log = deps.batchLogs.logs.get('alice/batch-1-10');
    expect(log?.error?.raw).toBe('I think the user likes dogs');
    expect(deps.knowledge.staged.size).toBe(0);
    expect(deps.signalState.state('alice').pendingBatches).toEqual([]);
  });

  it('retries an unusable answer when the job will be delivered again, without keeping it', async () => {
    const { deps, model, job: j } = await setup((call) => (call === 1 ? 'Sure! {"new_facts": [' : beagle));
    await expect(runReflection(j, { ...deps, retryUnusableOutput: true })).rejects.toBeInstanceOf(
      UnusableModelOutputError,
    );
    expect(deps.batchLogs.logs.size).toBe(0);
    expect(deps.signalState.state('alice').pendingBatches).toHaveLength(1);
    // The next delivery asks again (the garbage was not recorded for reuse) and completes.
    expect((await runReflection(j, { ...deps, retryUnusableOutput: true })).status).toBe('completed');
    expect(model.requests).toHaveLength(2);
  });

  it('lets a model outage fail the job so the queue retries it', async () => {
    const { deps, job: j } = await setup(() => {
      throw new ModelUnavailableError('throttled');
    });
    await expect(runReflection(j, deps)).rejects.toBeInstanceOf(ModelUnavailableError);
    expect(deps.batchLogs.logs.size).toBe(0);
    expect(deps.signalState.state('alice').pendingBatches.map((p) => p.jobId)).toEqual(['batch-1-10']);
  });

  it('records why the model stopped in the batch log and the function log', async () => {
    const { deps, job: j } = await setup(() => beagle);
    await runReflection(j, deps);
    expect(deps.batchLogs.logs.get('alice/batch-1-10')?.model).toMatchObject({ stopReason: 'tool_use' });
    expect(deps.log.entries.find((e) => e.message === 'batch reflected')?.extra).toMatchObject({
      stopReason: 'tool_use',
    });
  });

  it('asks once more with twice the budget when the answer was cut, in the same delivery', async () => {
    const {
      deps,
      model,
      job: j,
    } = await setup((call) => (call === 1 ? stopped('max_tokens', '{"new_facts": [{"title": "dog') : beagle));
    const out = await runReflection(j, { ...deps, retryUnusableOutput: true });
    expect(out.status).toBe('completed');
    expect(model.requests.map((r) => r.maxTokens)).toEqual([1500, 3000]);
    expect(deps.batchLogs.logs.get('alice/batch-1-10')?.model).toMatchObject({
      stopReason: 'tool_use',
      budgetRetry: { maxTokens: 1500, retryMaxTokens: 3000, inputTokens: 10, outputTokens: 5 },
    });
    expect(deps.log.entries.some((e) => e.level === 'warn' && e.extra?.stopReason === 'max_tokens')).toBe(true);
  });

  it("caps the larger budget at the model's limit, and asks no more when the budget is the limit already", async () => {
    const capped = await setup((call) => (call === 1 ? stopped('max_tokens', 'cut') : beagle));
    capped.model.maxOutputTokens = 2000;
    await runReflection(capped.job, capped.deps);
    expect(capped.model.requests.map((r) => r.maxTokens)).toEqual([1500, 2000]);

    const atLimit = await setup(() => stopped('max_tokens', 'cut'));
    atLimit.model.maxOutputTokens = 1500;
    const out = await runReflection(atLimit.job, atLimit.deps);
    expect(atLimit.model.requests).toHaveLength(1);
    expect(out.status === 'aborted' && out.log.error?.message).toBe(
      "the model's answer was cut after 5 output tokens, at the model's limit (stopReason max_tokens)",
    );
  });

  it('an answer cut again is asked on the next delivery, and aborts the batch with the reason on the last', async () => {
    const { deps, model, job: j } = await setup(() => stopped('max_tokens', '{"new_facts": [{"title": "dog'));
    await expect(runReflection(j, { ...deps, retryUnusableOutput: true })).rejects.toThrow(
      /cut at its output budget of 1500 tokens, and again at 3000 \(stopReason max_tokens\)\); retrying on the next delivery/,
    );
    expect(deps.knowledge.outputs.size).toBe(0);
    const out = await runReflection(j, deps);
    expect(model.requests.map((r) => r.maxTokens)).toEqual([1500, 3000, 1500, 3000]);
    expect(out.status).toBe('aborted');
    const log = deps.batchLogs.logs.get('alice/batch-1-10');
    expect(log?.error).toEqual({
      message:
        "the model's answer was cut at its output budget of 1500 tokens, and again at 3000 (stopReason max_tokens)",
      raw: '{"new_facts": [{"title": "dog',
    });
    expect(log?.model).toMatchObject({ stopReason: 'max_tokens' });
    expect(deps.signalState.state('alice').pendingBatches).toEqual([]);
  });

  it('treats a malformed tool call as unusable output, whatever it holds', async () => {
    const {
      deps,
      model,
      job: j,
    } = await setup((call) => (call === 1 ? stopped('malformed_tool_use', beagle) : beagle));
    await expect(runReflection(j, { ...deps, retryUnusableOutput: true })).rejects.toThrow(
      /invalid tool call \(stopReason malformed_tool_use\)/,
    );
    expect((await runReflection(j, { ...deps, retryUnusableOutput: true })).status).toBe('completed');
    expect(model.requests).toHaveLength(2);
    const last = await setup(() => stopped('malformed_tool_use', beagle));
    const out = await runReflection(last.job, last.deps);
    expect(out.status === 'aborted' && out.log.error?.message).toBe(
      'the model produced an invalid tool call (stopReason malformed_tool_use)',
    );
  });

  it('lets a denied model access fail the job, writing nothing', async () => {
    const { deps, job: j } = await setup(() => {
      throw new ModelAccessDeniedError(
        'model access not granted for us.anthropic.claude-haiku-4-5-20251001-v1:0 in us-east-1',
      );
    });
    await expect(runReflection(j, deps)).rejects.toBeInstanceOf(ModelAccessDeniedError);
    expect(deps.batchLogs.logs.size).toBe(0);
    expect(deps.signalState.state('alice').pendingBatches.map((p) => p.jobId)).toEqual(['batch-1-10']);
  });

  it('skips a job whose turns a later batch already covered', async () => {
    const { deps, job: j } = await setup(() => beagle);
    await runReflection(j, deps);
    const out = await runReflection(job([1, 2]), deps);
    expect(out.status).toBe('superseded');
  });

  // Ingestion enqueues the job, then writes the state that records it. A job that ran before
  // that write landed found nothing to complete, and the batch then waited in the state forever.
  it('waits for the state write that records its batch, then completes it once', async () => {
    const { deps, model, job: j } = await setup(() => beagle);
    const written = deps.signalState.items.get('alice')!;
    deps.signalState.items.delete('alice');
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      if (waits.length === 2) deps.signalState.items.set('alice', written);
    };
    expect((await runReflection(j, { ...deps, sleep })).status).toBe('completed');
    expect(waits).toEqual([200, 400]);
    expect(model.requests).toHaveLength(1);
    expect(deps.signalState.state('alice')).toMatchObject({
      pendingBatches: [],
      lastBatchTurn: 10,
      counters: { batchesCompleted: 1 },
    });
  });

  it('fails a job whose batch the state never recorded, without reflecting, so the queue retries it', async () => {
    const { deps, model, job: j } = await setup(() => beagle);
    deps.signalState.items.delete('alice');
    const waits: number[] = [];
    await expect(runReflection(j, { ...deps, sleep: async (ms) => void waits.push(ms) })).rejects.toBeInstanceOf(
      BatchNotRecordedError,
    );
    expect(waits).toEqual([200, 400, 800]);
    expect(model.requests).toHaveLength(0);
    expect(deps.batchLogs.logs.size).toBe(0);
  });
});
