/**
 * Contradiction (req R-TIER-8; seed 004: "✗ Contradicted: Later image shows no mug →
 * confidence -= 0.3", and under "Demotion & Decay": "Long-term → Short-term: … detected
 * inconsistencies", "Short-term → Ephemeral: … user contradiction"). A tier entry contradicted
 * by some evidence loses `contradictionCost` of its confidence (as decayed at `now`); below
 * its tier's floor it moves one tier down, with reason `contradiction`. The entry keeps the
 * state before each contradiction, so a reviewer can undo it. Pure: the use cases
 * (lib/tiers/tier-review.ts) apply a decision with a conditional write.
 */
import type { MemoryItem } from '../items/memory-item.js';
import { demoteTier } from './memory-tiers.js';
import { confidenceAt, round2, type TierDecision } from './tier-policy.js';
import { DEFAULT_TIER_POLICY, type TierPolicy } from './tier-settings.js';

/** How many contradictions an entry keeps (the newest): how far back undo reaches. */
export const MAX_CONTRADICTIONS = 20;

export interface Contradiction {
  /** Who contradicts: the credential's subject, or the pipeline's actor. */
  by: string;
  /** What contradicts it (a turn, an item id): the same evidence twice counts once, so a redelivery does not count again. */
  evidence?: string | undefined;
  note?: string | undefined;
}

/** The entry contradicted at `now`: its confidence lowered, and one tier down when below its tier's floor. Null when this evidence already counted. */
export function contradict(
  item: MemoryItem,
  c: Contradiction,
  now: Date,
  policy: TierPolicy = DEFAULT_TIER_POLICY,
): TierDecision | null {
  if (item.deleted) return null;
  const past = item.contradictions ?? [];
  if (c.evidence !== undefined && past.some((p) => p.evidence === c.evidence)) return null;
  const at = now.toISOString();
  const before = {
    tier: item.tier,
    status: item.status,
    confidence: item.confidence,
    expiresAt: item.expiresAt,
    ...(item.seen ? { seen: item.seen } : {}),
  };
  const record = { at, by: c.by, ...(c.evidence !== undefined ? { evidence: c.evidence } : {}), before };
  const confidence = round2(Math.max(0, confidenceAt(item, now, policy) - policy.contradictionCost));
  const lowered: MemoryItem = {
    ...item,
    confidence,
    seen: { sessions: item.seen?.sessions ?? [], at, confidence },
    contradictions: [...past, record].slice(-MAX_CONTRADICTIONS),
  };
  const floor = item.tier === 'ephemeral' ? 0 : policy.floors[item.tier];
  const note = c.note ? { note: c.note } : {};
  const why = `contradicted${c.evidence !== undefined ? ` by ${c.evidence}` : ''}: confidence ${item.confidence} → ${confidence}`;
  if (confidence < floor) {
    const move = demoteTier(lowered, now, policy.ttlSeconds);
    if (move.ok)
      return {
        item: move.item,
        audit: {
          action: 'demote',
          from: move.from,
          to: move.to,
          reason: 'contradiction',
          note: `${why} < ${floor}, the ${item.tier} floor${c.note ? `; ${c.note}` : ''}`,
        },
      };
  }
  return {
    item: lowered,
    audit: { action: 'contradict', from: String(item.confidence), to: String(confidence), reason: why, ...note },
  };
}

/** The last contradiction undone: the entry's tier, status, confidence, expiry and sightings as they were before it. Null when there is none. */
export function undoContradiction(item: MemoryItem): TierDecision | null {
  const last = item.contradictions?.at(-1);
  if (item.deleted || !last) return null;
  const { seen, ...before } = last.before;
  const rest = item.contradictions?.slice(0, -1) ?? [];
  const restored: MemoryItem = { ...item, ...before, ...(seen ? { seen } : {}), contradictions: rest };
  if (rest.length === 0) delete restored.contradictions;
  const reason = `undid the contradiction of ${last.at}${last.evidence !== undefined ? ` by ${last.evidence}` : ''}: ${item.tier} at ${item.confidence} → ${before.tier} at ${before.confidence}`;
  return { item: restored, audit: { action: 'undo_contradict', from: item.tier, to: before.tier, reason } };
}
