/**
 * The canonical dump of a user's state keeps what the memory holds and masks what
 * measures the machine: durations, times of processing, TTLs counted from them, message tags.
 */
import { describe, expect, it } from 'vitest';
import { differenceLines, type EquivalenceReport, recordKind } from '../../infra/local/fault-equivalence.js';
import { normalise } from '../../infra/local/state-dump.js';

describe('state dump normalisation', () => {
  it('masks durations, times of processing and TTLs, and keeps times that come from the input', () => {
    const item = {
      timestamp: '2023-05-08T13:56:00.000Z',
      staged_at: '2023-05-08T13:56:00.000Z',
      promoted_at: '2026-11-22T08:01:02.345Z',
      duration_ms: 17,
      expiresAt: Date.parse('2026-12-22T08:01:02Z') / 1000,
      appliedMessages: ['a1', 'b2'],
      model: { modelId: 'm', inputTokens: 10, reused: true, estimatedCostUsd: 0 },
      body: '---\nstaged_at: 2023-05-08T13:56:00.000Z\npromoted_at: 2026-11-22T08:01:02.345Z\nbatch_id: batch-1-10\n---\n# x',
    };
    expect(normalise(item)).toEqual({
      appliedMessages: '<message tags>',
      // A staged item's time is its batch's last turn's: an input, compared exactly.
      body: '---\nstaged_at: 2023-05-08T13:56:00.000Z\npromoted_at: 2026-11-22T<processing time>\nbatch_id: batch-1-10\n---\n# x',
      duration_ms: '<duration>',
      expiresAt: '2026-12-22T<processing time>',
      model: { estimatedCostUsd: '<processing>', inputTokens: 10, modelId: 'm', reused: '<processing>' },
      promoted_at: '2026-11-22T<processing time>',
      staged_at: '2023-05-08T13:56:00.000Z',
      timestamp: '2023-05-08T13:56:00.000Z',
    });
    // A batch log's timestamp is when the batch ran.
    expect(normalise({ timestamp: '2026-11-22T08:01:02Z' }, { timestampIsProcessing: true })).toEqual({
      timestamp: '2026-11-22T<processing time>',
    });
  });
});

describe('fault-equivalence differences kept', () => {
  it('names the kind of record of each difference: the item sort key prefix, the object folder', () => {
    expect(recordKind({ where: 'item', key: 'USER#u1|SUMMARY#0000000015#summary-1-15' })).toBe('SUMMARY#');
    expect(recordKind({ where: 'item', key: 'USER#u1|SIGNAL' })).toBe('SIGNAL#');
    expect(recordKind({ where: 'object', key: 'users/u1/Knowledge/Reflections/x.md' })).toBe('Knowledge/Reflections/');
    expect(recordKind({ where: 'object', key: 'users/u1/summaries/s.json' })).toBe('summaries/');
  });

  it('prints the differences by kind, the first few and the file holding all, only when there are some', () => {
    const none = { differences: 0, byKind: {}, sample: [] };
    const base = {
      determinism: none,
      equivalence: none,
      sustained: null,
      differencesFile: null,
    } as unknown as EquivalenceReport;
    expect(differenceLines(base)).toEqual([]);
    const some = {
      ...base,
      equivalence: {
        differences: 2,
        byKind: { 'SUMMARY#': 2 },
        sample: [{ userId: 'u1', where: 'item', key: 'USER#u1|SUMMARY#1#s', kind: 'only-a' }],
      },
      differencesFile: '/x/conv-30.json',
    } as unknown as EquivalenceReport;
    expect(differenceLines(some)).toEqual([
      'faults: 2 differences by kind {"SUMMARY#":2}',
      'faults: {"userId":"u1","where":"item","key":"USER#u1|SUMMARY#1#s","kind":"only-a"}',
      'every difference: /x/conv-30.json',
    ]);
  });
});
