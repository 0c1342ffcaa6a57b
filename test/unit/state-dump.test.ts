/**
 * The canonical dump of a user's state (issue 8) keeps what the memory holds and masks what
 * measures the machine: durations, times of processing, TTLs counted from them, message tags.
 */
import { describe, expect, it } from 'vitest';
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
      // A staged item's time is its batch's last turn's (issue 20 item 14): an input, compared exactly.
      body: '---\nstaged_at: 2023-05-08T13:56:00.000Z\npromoted_at: 2026-11-22T<processing time>\nbatch_id: batch-1-10\n---\n# x',
      duration_ms: '<duration>',
      expiresAt: '2026-12-22T<processing time>',
      model: { estimatedCostUsd: '<processing>', inputTokens: 10, modelId: 'm', reused: '<processing>' },
      promoted_at: '2026-11-22T<processing time>',
      staged_at: '2023-05-08T13:56:00.000Z',
      timestamp: '2023-05-08T13:56:00.000Z',
    });
    // A batch log's timestamp is when the batch ran.
    expect(normalise({ timestamp: '2026-11-22T08:01:02Z' }, { timestampIsProcessing: true })).toEqual({ timestamp: '2026-11-22T<processing time>' });
  });
});
