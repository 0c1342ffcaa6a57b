/**
 * The smoke test's conversation does what the smoke checks rely on, under the seed's signal
 * numbers: one batch, fired by count at turn 10, and one session-close summary over the
 * whole session — computed by the real signal accumulator, not assumed.
 */
import { describe, expect, it } from 'vitest';
import { TurnQueueMessageSchema } from '../../events/index.js';
import { accumulate, type SignalItem } from '../../lib/signals/signal-accumulator.js';
import { initialSignalState } from '../../lib/signals/signal-state.js';
import { defaultSignalConfig } from '../../lib/signals/signal-weights.js';
import { SEARCH_WORD, smokeConversation } from '../../infra/smoke/conversation.js';

const NOW = new Date('2026-03-02T10:00:00Z');

describe('the smoke conversation', () => {
  it('is valid on the TurnQueue, ends at now and names one user and session', () => {
    const c = smokeConversation('smoke-x', NOW);
    for (const event of [...c.turns, c.close]) expect(TurnQueueMessageSchema.safeParse(event).success).toBe(true);
    expect(c.turns.map((t) => t.turnId)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(new Set([...c.turns, c.close].map((e) => `${e.userId}/${e.sessionId}`))).toEqual(
      new Set([`smoke-x/${c.sessionId}`]),
    );
    expect(c.close.timestamp).toBe(NOW.toISOString());
    expect(c.turns.every((t) => Date.parse(t.timestamp) < NOW.getTime())).toBe(true);
  });

  it('fires a batch by count (turns 1–10), one at the close over what is left (11–12) and one session-close summary (turns 1–12)', () => {
    const c = smokeConversation('smoke-x', NOW);
    const items: SignalItem[] = [
      ...c.turns.map((turn) => ({ kind: 'turn' as const, turn })),
      { kind: 'session_closed', sessionId: c.sessionId },
    ];
    const { triggers, outcomes } = accumulate(initialSignalState(), items, defaultSignalConfig, NOW, () => false);
    expect(triggers.map((t) => [t.jobId, t.kind, t.trigger])).toEqual([
      ['batch-1-10', 'batch', 'turn_count'],
      ['batch-11-12', 'batch', 'session_closed'],
      ['summary-1-12', 'session-close', 'session_closed'],
    ]);
    // No turn reads as a correction: the smoke run must not depend on urgency.
    expect(outcomes.flatMap((o) => o.signals)).not.toContain('user_correction');
  });

  it('starts where it is told, for a user that already has turns', () => {
    const c = smokeConversation('smoke-x', NOW, 501);
    expect(c.turns[0]?.turnId).toBe(501);
    expect(c.turns.at(-1)?.turnId).toBe(512);
  });

  it('uses its search word only in what it publishes', () => {
    const c = smokeConversation('smoke-x', NOW);
    expect(c.search.word).toBe(SEARCH_WORD);
    expect(c.turns.some((t) => t.query.toLowerCase().includes(SEARCH_WORD))).toBe(true);
  });
});
