/**
 * The signal-state item is bounded: every list and map in it has a cap, and 10,000 turns
 * leave it a few KB (DynamoDB bills a write per started KB and refuses items over 400 KB),
 * while the decisions the accumulator makes come out as they would without the caps.
 */
import { describe, expect, it } from 'vitest';
import { itemSize } from '../../lib/kernel/dynamo-item-size.adapter.js';
import { signalStateItem } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import {
  accumulate,
  completeBatch,
  MAX_PENDING_BATCHES,
  MAX_UNASSIGNED_TURNS,
  MAX_UNBATCHED_TURNS,
  MAX_WAITING_EPISODES,
  type SignalItem,
} from '../../lib/signals/signal-accumulator.js';
import { idleCheck } from '../../lib/signals/idle-rule.js';
import {
  initialSignalState,
  MAX_APPLIED_MESSAGES,
  type SignalState,
  withAppliedMessages,
} from '../../lib/signals/signal-state.js';
import type { JobTrigger } from '../../lib/signals/job-triggers.js';
import { MAX_TOPIC_WORD_CHARS } from '../../lib/signals/turn-signals.js';
import { defaultSignalConfig, parseSignalConfig } from '../../lib/signals/signal-weights.js';
import { topKeywords } from '../../lib/kernel/text.js';

const TURNS = 10_000;
const START = Date.parse('2026-01-01T00:00:00Z');
/** 10,000 turns over 40 days: 250 a day. */
const at = (turnId: number) => new Date(START + turnId * 345_600);
const never = () => false;

interface Drive {
  state: SignalState;
  triggers: JobTrigger[];
  /** Largest length each capped list reached, and the largest item. */
  max: Record<
    | 'recentTopics'
    | 'unbatched'
    | 'unassigned'
    | 'pending'
    | 'episodes'
    | 'summary'
    | 'activity'
    | 'applied'
    | 'itemBytes',
    number
  >;
}

/**
 * Feed `TURNS` turns as the signal function gets them (Lambda batches of 10 from the FIFO
 * queue, each fold one state write), with `extra` control items after some turns; with
 * `reflector: 'up'` every batch completes before the next fold.
 */
function drive(
  query: (turnId: number) => string,
  options: { reflector: 'up' | 'down'; extra?: (turnId: number) => SignalItem[] },
): Drive {
  let state = initialSignalState();
  const triggers: JobTrigger[] = [];
  const max: Drive['max'] = {
    recentTopics: 0,
    unbatched: 0,
    unassigned: 0,
    pending: 0,
    episodes: 0,
    summary: 0,
    activity: 0,
    applied: 0,
    itemBytes: 0,
  };
  for (let first = 1; first <= TURNS; first += 10) {
    const items: SignalItem[] = [];
    for (let turnId = first; turnId < first + 10; turnId++) {
      items.push(
        { kind: 'turn', turn: { turnId, timestamp: at(turnId).toISOString(), query: query(turnId) } },
        ...(options.extra?.(turnId) ?? []),
      );
    }
    const now = at(first + 9);
    const r = accumulate(state, items, defaultSignalConfig, now, never);
    state = withAppliedMessages(
      r.state,
      items.map((_, i) => `msg-${first}-${i}`),
    );
    triggers.push(...r.triggers);
    const lengths = {
      recentTopics: state.recentTopics.length,
      unbatched: state.unbatchedTurnIds.length,
      unassigned: state.unassigned.turnIds.length,
      pending: state.pendingBatches.length,
      episodes: state.unassigned.episodeIds.length,
      summary: state.summaryTurnIds.length,
      activity: Object.keys(state.activity).length,
      applied: state.appliedMessages.length,
      itemBytes: itemSize(signalStateItem('user-42', state, first, now.toISOString())),
    };
    for (const k of Object.keys(max) as Array<keyof Drive['max']>) max[k] = Math.max(max[k], lengths[k]);
    if (options.reflector === 'up') {
      for (const t of r.triggers)
        if (t.kind !== 'idle-summary' && t.kind !== 'session-close')
          state = completeBatch(state, t.jobId, t.turnIds, now) ?? state;
    }
  }
  return { state, triggers, max };
}

/** A query with no signal: its own two words, so no topic repeats and nothing is urgent. */
const plain = (turnId: number) => `entry${turnId} subject${turnId}`;

describe('signal state bounds: a healthy stream of 10,000 turns', () => {
  /** A session closes after every 200th turn, the last after turn 9,837. */
  const everyDay = (turnId: number): SignalItem[] =>
    turnId % 200 === 37 ? [{ kind: 'session_closed', sessionId: `s${turnId}` }] : [];
  const run = drive(plain, { reflector: 'up', extra: everyDay });

  it('keeps every list within its cap and the item under 2 KB (2 write units)', () => {
    const c = defaultSignalConfig;
    expect(run.max).toMatchObject({
      recentTopics: c.topicWindow,
      activity: c.activityDays,
      applied: MAX_APPLIED_MESSAGES,
      pending: 1,
      episodes: 0,
    });
    expect(run.max.summary).toBeLessThanOrEqual(c.summaryMaxTurns);
    expect(run.max.unassigned).toBeLessThan(c.turnThreshold);
    // A session close cuts a batch early: a fold can hold what is left of one count and the next.
    expect(run.max.unbatched).toBeLessThan(2 * c.turnThreshold);
    expect(run.max.itemBytes).toBeLessThan(2048);
  });

  it('cuts the same batches as without caps: every turn once, in order, by count or at a session close', () => {
    const batches = run.triggers.filter((t) => t.kind === 'batch');
    const covered = batches.flatMap((t) => t.turnIds);
    expect(covered).toEqual(Array.from({ length: TURNS - run.state.unassigned.turnIds.length }, (_, i) => i + 1));
    expect(
      batches.every(
        (t) =>
          t.turnIds.length <= defaultSignalConfig.turnThreshold &&
          (t.trigger === 'turn_count' || t.trigger === 'session_closed'),
      ),
    ).toBe(true);
    // The first close (after turn 37) cuts turns 31–37; later closes fall where a count batch just ended.
    expect(batches.filter((t) => t.trigger === 'session_closed').map((t) => t.jobId)).toEqual(['batch-31-37']);
    expect(run.state.counters).toMatchObject({
      turns: TURNS,
      batchesTriggered: batches.length,
      batchesCompleted: batches.length,
      unassignedDropped: 0,
    });
  });

  it('still tells duplicates from late turns, and counts the days the nightly look-back reads exactly', () => {
    const again = accumulate(
      run.state,
      [
        { turnId: 5, timestamp: at(5).toISOString(), query: 'x' },
        { turnId: 7, timestamp: at(7).toISOString(), query: 'y' },
      ],
      defaultSignalConfig,
      at(TURNS),
      (id) => id === 5,
    );
    expect(again.outcomes.map((o) => o.disposition)).toEqual(['duplicate', 'late']);
    const truth = new Map<string, number>();
    for (let turnId = 1; turnId <= TURNS; turnId++)
      truth.set(at(turnId).toISOString().slice(0, 10), (truth.get(at(turnId).toISOString().slice(0, 10)) ?? 0) + 1);
    const lastDays = [...truth.keys()].sort().slice(-defaultSignalConfig.activityDays);
    expect(run.state.activity).toEqual(Object.fromEntries(lastDays.map((d) => [d, truth.get(d)])));
  });

  it('applies the idle rule to the turns since the last summary, the newest summaryMaxTurns of them', () => {
    const idle = idleCheck(
      run.state,
      { lastTurnId: TURNS },
      defaultSignalConfig,
      new Date(at(TURNS).getTime() + 10 * 60_000),
    );
    if (!('trigger' in idle)) throw new Error(`no idle summary: ${JSON.stringify(idle)}`);
    expect(run.state.messagesSinceSummary).toBe(TURNS - 9_837);
    expect(idle.trigger.turnIds).toEqual(
      Array.from(
        { length: defaultSignalConfig.summaryMaxTurns },
        (_, i) => TURNS - defaultSignalConfig.summaryMaxTurns + 1 + i,
      ),
    );
    expect(run.triggers.filter((t) => t.kind === 'session-close')).toHaveLength(50);
  });
});

describe('signal state bounds: the reflector down for 10,000 turns', () => {
  const episodes = (turnId: number): SignalItem[] =>
    turnId % 7 === 0
      ? [{ kind: 'agent_event', trigger: 'error', eventId: `${turnId}`, episodeId: `ev-${turnId}` }]
      : [];
  const run = drive(plain, { reflector: 'down', extra: episodes });

  it('stops at MAX_PENDING_BATCHES batches, MAX_UNASSIGNED_TURNS waiting turns and MAX_WAITING_EPISODES episodes: under 8 KB', () => {
    expect(run.max).toMatchObject({
      pending: MAX_PENDING_BATCHES,
      unassigned: MAX_UNASSIGNED_TURNS,
      unbatched: MAX_UNBATCHED_TURNS,
      episodes: MAX_WAITING_EPISODES,
    });
    expect(run.max.itemBytes).toBeLessThan(8 * 1024);
    // The first 20 batches took the turns before them; of the rest, the newest 500 wait.
    const taken = run.state.pendingBatches.reduce((n, p) => n + p.turnIds.length, 0);
    expect(taken).toBeGreaterThan(MAX_PENDING_BATCHES);
    expect(run.state.counters.unassignedDropped).toBe(TURNS - taken - MAX_UNASSIGNED_TURNS);
    expect(run.state.unassigned.turnIds[0]).toBe(TURNS - MAX_UNASSIGNED_TURNS + 1);
  });

  it('enqueues the waiting batches again while down, and cuts new ones from the newest waiting turns once it is back', () => {
    expect(run.triggers.filter((t) => t.trigger === 'pending_timeout').length).toBeGreaterThan(0);
    let state = run.state;
    for (const p of [...state.pendingBatches]) state = completeBatch(state, p.jobId, p.turnIds, at(TURNS)) ?? state;
    // The next turn makes 501 waiting: the oldest goes, and a batch is cut from the next ten.
    const next = accumulate(
      state,
      [{ turnId: TURNS + 1, timestamp: at(TURNS + 1).toISOString(), query: plain(TURNS + 1) }],
      defaultSignalConfig,
      at(TURNS + 1),
      never,
    );
    const oldest = TURNS - MAX_UNASSIGNED_TURNS + 2;
    expect(next.triggers[0]).toMatchObject({
      jobId: `batch-${oldest}-${oldest + 9}`,
      trigger: 'turn_count',
      episodeIds: run.state.unassigned.episodeIds,
    });
  });
});

describe('signal state bounds: queries carrying huge tokens', () => {
  /** Every third turn repeats one of a few 50,000-character tokens; the others are plain. */
  const blobs = ['a', 'b', 'c'].map((ch, i) => `${ch.repeat(49_990)}tail${i}zz`);
  const query = (turnId: number) =>
    turnId % 3 === 0
      ? `${blobs[turnId % 9 === 0 ? 0 : 1]} ${plain(turnId)}`
      : turnId % 5 === 0
        ? `${blobs[2]} about it`
        : plain(turnId);
  const run = drive(query, { reflector: 'up' });

  it('keeps a topic word at most MAX_TOPIC_WORD_CHARS long, so the item stays under 2 KB', () => {
    expect(run.state.recentTopics.every((t) => t.split(' ').every((w) => w.length <= MAX_TOPIC_WORD_CHARS))).toBe(true);
    expect(run.max.itemBytes).toBeLessThan(2048);
  });

  it('fires topic_repeated exactly where whole words would', () => {
    // The rule of req R-SIG over whole words, as a reference: a turn's topic is repeated
    // when, with the window's earlier topics sharing a word, it makes topicRepeatCount.
    const { topicWindow, topicRepeatCount } = defaultSignalConfig;
    const window: string[][] = [];
    const expected: number[] = [];
    for (let turnId = 1; turnId <= 600; turnId++) {
      const words = topKeywords(query(turnId), 3);
      if (words.length > 0 && window.filter((w) => w.some((x) => words.includes(x))).length + 1 >= topicRepeatCount)
        expected.push(turnId);
      if (words.length > 0) window.push(words);
      if (window.length > topicWindow) window.shift();
    }
    const fired: number[] = [];
    let state = initialSignalState();
    for (let turnId = 1; turnId <= 600; turnId++) {
      const r = accumulate(
        state,
        [{ turnId, timestamp: at(turnId).toISOString(), query: query(turnId) }],
        defaultSignalConfig,
        at(turnId),
        never,
      );
      if (r.outcomes[0]?.signals.includes('topic_repeated')) fired.push(turnId);
      state = r.state;
    }
    expect(expected.length).toBeGreaterThan(50);
    expect(fired).toEqual(expected);
  });
});

describe('signal state bounds: the caps themselves', () => {
  it('remembers a whole Lambda batch of a FIFO queue (at most 10 messages), the newest 10 of a longer one', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);
    expect(withAppliedMessages(initialSignalState(), ids(MAX_APPLIED_MESSAGES)).appliedMessages).toHaveLength(
      MAX_APPLIED_MESSAGES,
    );
    const twelve = withAppliedMessages(initialSignalState(), ids(12)).appliedMessages;
    expect(twelve).toEqual(withAppliedMessages(initialSignalState(), ids(12).slice(2)).appliedMessages);
  });

  it('refuses a batch threshold the waiting turns could never reach', () => {
    expect(parseSignalConfig(JSON.stringify({ turnThreshold: MAX_UNASSIGNED_TURNS })).turnThreshold).toBe(
      MAX_UNASSIGNED_TURNS,
    );
    expect(() => parseSignalConfig(JSON.stringify({ turnThreshold: MAX_UNASSIGNED_TURNS + 1 }))).toThrow(
      /turnThreshold/,
    );
  });
});
