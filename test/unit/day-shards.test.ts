/** The by-day index partitions are write-sharded by a stable hash of the user id. */
import { describe, expect, it } from 'vitest';
import { activityMarker, signalStateItem } from '../../lib/signals/dynamo-signal-state-store.adapter.js';
import { initialSignalState } from '../../lib/signals/signal-state.js';
import { DAY_SHARDS, type DayIndex, dayGsiPartitions, dayShard, keys } from '../../lib/kernel/memory-paths.js';

describe('day-keyed index partitions, write-sharded', () => {
  it('gives a user the same shard on every machine and in every version (stored keys depend on it)', () => {
    // Golden values: a change to the hash would strand every entry written before it.
    expect(['user-42', 'locomo-conv-26', 'alice', 'bob'].map(dayShard)).toEqual([3, 6, 7, 4]);
  });

  it('spreads users evenly over the shards', () => {
    const counts = new Array<number>(DAY_SHARDS).fill(0);
    for (let i = 0; i < 10_000; i++) counts[dayShard(`user-${i}`)] = (counts[dayShard(`user-${i}`)] ?? 0) + 1;
    for (const n of counts) expect(Math.abs(n - 10_000 / DAY_SHARDS)).toBeLessThan(10_000 / DAY_SHARDS / 10);
  });

  it("writes a user's entries of a day to one shard of the day, and a reader of the day queries every shard", () => {
    const day = '2026-02-06';
    const written: Array<[DayIndex, string]> = [
      ['ACTIVITY', keys.activityGsiPk(day, 'alice')],
      ['STAGEDDAY', keys.stagedDayGsiPk(day, 'alice')],
      ['RUNS', keys.runsDayGsiPk(day, 'alice')],
    ];
    for (const [index, pk] of written) {
      expect(pk).toBe(`${index}#${day}#${dayShard('alice')}`);
      const read = dayGsiPartitions(index, day);
      expect(read).toHaveLength(DAY_SHARDS);
      expect(read).toContain(pk);
    }
    const users = Array.from({ length: 1000 }, (_, i) => `u${i}`);
    expect(new Set(users.map((u) => keys.activityGsiPk(day, u)))).toEqual(new Set(dayGsiPartitions('ACTIVITY', day)));
  });

  it('needs no mask in the state dump: an activity marker is the same for the same user and day', () => {
    expect(activityMarker('alice', '2026-02-06')).toEqual(activityMarker('alice', '2026-02-06'));
    expect(activityMarker('alice', '2026-02-06')).toMatchObject({
      pk: 'USER#alice',
      sk: 'ACTIVITY#2026-02-06',
      gsi1pk: `ACTIVITY#2026-02-06#${dayShard('alice')}`,
    });
  });
});

describe('the signal-state item and the activity index', () => {
  it('carries no index key once its days are marked, so its per-turn write never writes gsi1', () => {
    const state = { ...initialSignalState(), lastTurnTimestamp: '2026-02-06T10:00:00Z', activity: { '2026-02-06': 3 } };
    expect(signalStateItem('alice', state, 2, '2026-02-06T10:00:01Z')).not.toHaveProperty('gsi1pk');
  });
});
