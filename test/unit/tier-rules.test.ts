import { describe, expect, it } from 'vitest';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import { closeSession, recur } from '../../lib/tiers/tier-policy.js';
import { contradict, undoContradiction } from '../../lib/tiers/contradiction.js';
import { tierPolicyOf } from '../../lib/tiers/tier-settings.js';
import { contradictEntry } from '../../lib/tiers/tier-review.js';
import { MemoryItems } from '../../lib/items/memory-item.fake.js';

const now = new Date('2026-03-01T12:00:00.000Z');

describe('the tier rules of req R-TIER-8 and R-TIER-11', () => {
  it('promotes at session close an ephemeral entry the user marked or that recurred; clears the rest; a retry is no recurrence', () => {
    const marked = newTierItem(
      'u1',
      'ephemeral',
      { text: 'timezone is CET', sessionId: 's-1', significance: ['user_signal'] },
      now,
    );
    expect(closeSession(marked, 's-1', now)?.audit).toMatchObject({
      action: 'promote',
      from: 'ephemeral',
      to: 'short_term',
      reason: 'session s-1 closed; it matters: user_signal',
    });
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
    expect(twice?.audit).toMatchObject({
      action: 'demote',
      from: 'long_term',
      to: 'short_term',
      reason: 'contradiction',
    });
    expect(undoContradiction(twice?.item ?? fact)?.item).toMatchObject({
      tier: 'long_term',
      status: 'canonical',
      confidence: 0.6,
      expiresAt: null,
    });
  });

  it('counts two concurrent contradictions both: the one whose write lost reads again and lowers what the other left', async () => {
    const items = new MemoryItems();
    const fact = newTierItem('u1', 'long_term', { text: 'lives in Lisbon', confidence: 0.9 }, now);
    await items.create(fact);
    // Both read the entry before either writes: one conditional write loses and must read again.
    let readers = 0;
    let release: () => void = () => {};
    const bothRead = new Promise<void>((r) => (release = r));
    const read = items.get.bind(items);
    items.get = async (userId, id) => {
      const item = await read(userId, id);
      if (++readers === 2) release();
      if (readers <= 2) await bothRead;
      return item;
    };
    const contradiction = (evidence: string) => contradictEntry(items, 'u1', fact.id, { by: 'r', evidence }, now);
    const [a, b] = await Promise.all([contradiction('turn:7'), contradiction('turn:8')]);
    expect(readers).toBe(3);
    expect([a?.audit.action, b?.audit.action].sort()).toEqual(['contradict', 'demote']);
    expect(await read('u1', fact.id)).toMatchObject({ tier: 'short_term', confidence: 0.3 });
    expect((await read('u1', fact.id))?.contradictions?.map((c) => c.evidence).sort()).toEqual(['turn:7', 'turn:8']);
    expect(items.audit.map((e) => e.action)).toEqual(['contradict', 'demote']);
  });

  it('refuses an invalid stage policy naming the field', () => {
    expect(() => tierPolicyOf({ contradictionCost: 2 })).toThrow(/tiers\.contradictionCost/);
    expect(tierPolicyOf({ floors: { short_term: 0.2 } }).floors).toEqual({ short_term: 0.2, long_term: 0.5 });
  });
});
