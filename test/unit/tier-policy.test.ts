import { describe, expect, it } from 'vitest';
import { newTierItem } from '../../lib/tiers/memory-tiers.js';
import {
  autoPromotion,
  closeSession,
  confidenceAt,
  corroborate,
  expireEntry,
  reviewTierEntry,
  seenInUse,
} from '../../lib/tiers/tier-policy.js';

const now = new Date('2026-03-01T12:00:00.000Z');
const later = (days: number) => new Date(now.getTime() + days * 86_400_000);

describe('the tier policy (req R-TIER)', () => {
  it('gives a short-term entry one id across sessions, so another session corroborates it (+0.15), and a retry does nothing', () => {
    const first = newTierItem('u1', 'short_term', { text: 'prefers tea', sessionId: 's-1', confidence: 0.6 }, now);
    expect(newTierItem('u1', 'short_term', { text: 'prefers tea', sessionId: 's-2' }, now).id).toBe(first.id);
    expect(newTierItem('u1', 'ephemeral', { text: 'prefers tea', sessionId: 's-2' }, now).id).not.toBe(
      newTierItem('u1', 'ephemeral', { text: 'prefers tea', sessionId: 's-1' }, now).id,
    );
    expect(corroborate(first, 's-1', now)).toBeNull();
    const seen = corroborate(first, 's-2', now);
    expect(seen?.item).toMatchObject({ confidence: 0.75, seen: { sessions: ['s-1', 's-2'], confidence: 0.75 } });
    expect(seen?.audit).toMatchObject({ action: 'corroborate', from: '0.6', to: '0.75' });
  });

  it('promotes short-term → long-term only above 0.8 and in 2+ sessions', () => {
    const one = newTierItem('u1', 'short_term', { text: 'x', sessionId: 's-1', confidence: 0.9 }, now);
    expect(autoPromotion(one, now)).toBeNull();
    const two = corroborate(one, 's-2', now)?.item;
    expect(two && autoPromotion(two, now)).toMatchObject({
      item: { tier: 'long_term', status: 'canonical', expiresAt: null },
      audit: { action: 'promote', from: 'short_term', to: 'long_term' },
    });
    const exactly = { ...newTierItem('u1', 'short_term', { text: 'y', sessionId: 's-1', confidence: 0.65 }, now) };
    const at08 = corroborate(exactly, 's-2', now)?.item;
    expect(at08?.confidence).toBe(0.8);
    expect(at08 && autoPromotion(at08, now)).toBeNull();
  });

  it('decays a short-term entry from a day after its last sighting, halving every 7 days; long-term ones after 30 days; ephemeral ones not at all', () => {
    const st = newTierItem('u1', 'short_term', { text: 'x', confidence: 0.6 }, now);
    expect(confidenceAt(st, later(1))).toBe(0.6);
    expect(confidenceAt(st, later(8))).toBe(0.3);
    const lt = newTierItem('u1', 'long_term', { text: 'x', confidence: 0.8 }, now);
    expect(confidenceAt(lt, later(30))).toBe(0.8);
    expect(confidenceAt(lt, later(90))).toBe(0.4);
    expect(confidenceAt(newTierItem('u1', 'ephemeral', { text: 'x', confidence: 0.6 }, now), later(5))).toBe(0.6);
  });

  it('reviews: expiry first (with why), then garbage below 0.1, then promotion, then decay; a rerun changes nothing', () => {
    const st = newTierItem('u1', 'short_term', { text: 'x', confidence: 0.6 }, now);
    expect(expireEntry(st, later(6))).toBeNull();
    expect(reviewTierEntry(st, later(7))?.audit).toEqual({
      action: 'expire',
      from: 'short_term',
      reason: 'unverified/unsupported: confidence 0.33 < 0.5 when its TTL ran out',
    });
    const sure = newTierItem('u1', 'short_term', { text: 'y', confidence: 0.95 }, now);
    expect(expireEntry(sure, later(7))?.audit.reason).toBe(`TTL ran out at ${sure.expiresAt} (confidence 0.52)`);
    const faint = newTierItem('u1', 'long_term', { text: 'z', confidence: 0.15 }, now);
    expect(reviewTierEntry(faint, later(70))?.audit).toMatchObject({ action: 'garbage', from: 'long_term' });
    const decaying = reviewTierEntry(st, later(3));
    expect(decaying?.audit).toMatchObject({ action: 'decay', from: '0.6', to: '0.49' });
    expect(decaying && reviewTierEntry(decaying.item, later(3))).toBeNull();
  });

  it('writes decay only once it has moved 0.05, and an item seen in use starts its decay again', () => {
    const lt = newTierItem('u1', 'long_term', { text: 'x', confidence: 0.8 }, now);
    expect(reviewTierEntry(lt, later(32))).toBeNull(); // 0.8 → 0.78: not yet worth a write
    expect(reviewTierEntry(lt, later(40))?.audit).toMatchObject({ action: 'decay', to: '0.71' });
    expect(confidenceAt(seenInUse(lt, later(40)), later(60))).toBe(0.8);
  });

  it('clears a closed session’s ephemeral entries only', () => {
    const e = newTierItem('u1', 'ephemeral', { text: 'x', sessionId: 's-1' }, now);
    expect(closeSession(e, 's-2')).toBeNull();
    expect(closeSession(e, 's-1')?.item.deleted).toBe(true);
    expect(closeSession(newTierItem('u1', 'short_term', { text: 'x', sessionId: 's-1' }, now), 's-1')).toBeNull();
  });
});
