import { describe, expect, it } from 'vitest';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import { closeSession, recur } from '../../lib/tiers/tier-policy.js';
import { contradict, undoContradiction } from '../../lib/tiers/contradiction.js';
import { tierPolicyOf } from '../../lib/tiers/tier-settings.js';

const now = new Date('2026-03-01T12:00:00.000Z');

describe('the tier rules of req R-TIER-8 and R-TIER-11', () => {
  it('promotes at session close an ephemeral entry the user marked or that recurred; clears the rest; a retry is no recurrence', () => {
    const marked = newTierItem('u1', 'ephemeral', { text: 'timezone is CET', sessionId: 's-1', significance: ['user_signal'] }, now);
    expect(closeSession(marked, 's-1', now)?.audit).toMatchObject({ action: 'promote', from: 'ephemeral', to: 'short_term', reason: 'session s-1 closed; it matters: user_signal' });
    const plain = newTierItem('u1', 'ephemeral', { text: 'scrolled down', sessionId: 's-1', sourceTurns: [1] }, now);
    expect(closeSession(plain, 's-1', now)?.audit.action).toBe('session_close');
    expect(recur(plain, { sessionId: 's-1', sourceTurns: [1] })).toBeNull();
    const again = recur(plain, { sessionId: 's-1', sourceTurns: [1, 4] });
    expect(again?.item.occurrences).toBe(2);
    expect(closeSession(again?.item ?? plain, 's-1', now)?.item).toMatchObject({ tier: 'short_term', deleted: false });
    expect(closeSession(closeSession(marked, 's-1', now)?.item ?? marked, 's-1', now)).toBeNull();
  });

  it('lowers a contradicted entry by 0.3, demotes it below its floor, counts evidence once, and undo restores it', () => {
    const fact = newTierItem('u1', 'long_term', { text: 'lives in Lisbon', confidence: 0.9 }, now);
    const once = contradict(fact, { by: 'r', evidence: 'turn:7' }, now);
    expect(once?.item).toMatchObject({ tier: 'long_term', confidence: 0.6 });
    expect(contradict(once?.item ?? fact, { by: 'r', evidence: 'turn:7' }, now)).toBeNull();
    const twice = contradict(once?.item ?? fact, { by: 'r', evidence: 'turn:8' }, now);
    expect(twice?.audit).toMatchObject({ action: 'demote', from: 'long_term', to: 'short_term', reason: 'contradiction' });
    expect(undoContradiction(twice?.item ?? fact)?.item).toMatchObject({ tier: 'long_term', status: 'canonical', confidence: 0.6, expiresAt: null });
  });

  it('refuses an invalid stage policy naming the field', () => {
    expect(() => tierPolicyOf({ contradictionCost: 2 })).toThrow(/tiers\.contradictionCost/);
    expect(tierPolicyOf({ floors: { short_term: 0.2 } }).floors).toEqual({ short_term: 0.2, long_term: 0.5 });
  });
});
