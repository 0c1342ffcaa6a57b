/**
 * The tier policy: req R-TIER-6, R-TIER-7's "Promotion Criteria" and "Demotion & Decay" applied by code to
 * tier entries (the API-written `mem:` items of lib/tiers/memory-tiers.ts):
 *
 * - corroboration: a short-term entry written again in another session is seen again. Its
 *   confidence rises by CORROBORATION_GAIN (the seed's lifecycle example: "another
 *   observation confirms → confidence += 0.15") and the session joins its sightings;
 * - automatic promotion short-term → long-term: confidence > 0.8 and seen in 2+ sessions
 *   (the seed's "confidence threshold" and "cross-session consistency" criteria);
 * - decay: an entry nobody writes again loses confidence. A short-term one "decays slowly"
 *   inside its 7-day window (our numbers: from a day after its last sighting, halving every
 *   7 days, so one seen once at 0.6 ends its window below 0.5); a long-term one decays as
 *   Knowledge facts do (lib/knowledge/confidence-decay.ts); an ephemeral one lives a session;
 * - garbage: an entry of any tier below confidence 0.1 is collected ("Any tier → Garbage");
 * - expiry: past its TTL an entry is gone, logged "unverified/unsupported" when its
 *   confidence at expiry was below 0.5 (the seed's "DECAY (confidence < 0.5 at TTL expiration)");
 * - session close: an ephemeral entry that matters moves up to short-term, the rest are cleared
 *   ("Session cleanup"; req R-TIER-11, seed 004 "Ephemeral → Short-term Promotion … Triggers at
 *   session boundary"). It matters when its writer named a sign of significance (the user said
 *   so, it changed behaviour, a new fact, an open question: `significance`) or it recurred (written
 *   in `recurrenceMin` of the session's writes, each citing turns no earlier one did);
 * - contradiction (lib/tiers/contradiction.ts): confidence -= 0.3, below the tier's floor one tier down.
 *
 * The numbers are the stage's (lib/tiers/tier-settings.ts); the constants below are the defaults.
 *
 * Confidence is computed from the last sighting and `now`, never from an earlier sweep's
 * result: every decision is deterministic in the entry and `now`, so a rerun decides the same.
 */
import { DECAY_WRITE_STEP, decayed } from '../knowledge/confidence-decay.js';
import type { MemoryItem } from '../items/memory-item.js';
import { type AuditEntry, promoteTier } from './memory-tiers.js';
import { DEFAULT_TIER_POLICY, type TierPolicy } from './tier-settings.js';

const P = DEFAULT_TIER_POLICY;
export const CORROBORATION_GAIN = P.corroborationGain;
export const AUTO_PROMOTION = { aboveConfidence: P.promotionConfidence, minSessions: P.minSessions } as const;
export const GARBAGE_BELOW = P.garbageBelow;
export const UNSUPPORTED_BELOW = P.unsupportedBelow;
/** Most sessions an entry's sightings keep (the newest): enough for any criterion here. */
export const MAX_SIGHTINGS = 50;

export const round2 = (n: number) => Math.round(n * 100) / 100;

export type Sightings = NonNullable<MemoryItem['seen']>;

/** An entry's sightings; one written before they were kept was seen once, when last updated. */
export const sightingsOf = (item: MemoryItem): Sightings =>
  item.seen ?? { sessions: item.sessionId ? [item.sessionId] : [], at: item.updatedAt, confidence: item.confidence };

/** Its confidence at `now`: what it had when last seen, decayed by its tier's policy. */
export function confidenceAt(item: MemoryItem, now: Date, policy: TierPolicy = P): number {
  const seen = sightingsOf(item);
  return item.tier === 'ephemeral' ? seen.confidence : decayed(seen.confidence, seen.at, now, policy.decay[item.tier]);
}

/** The entry seen in use now (a turn it served was approved): its decay starts again from its confidence. */
export function seenInUse(item: MemoryItem, now: Date): MemoryItem {
  return { ...item, seen: { ...sightingsOf(item), at: now.toISOString(), confidence: item.confidence } };
}

/** What the policy does to an entry: the entry as it becomes, and its audit entry's what and why. */
export interface TierDecision {
  item: MemoryItem;
  audit: Pick<AuditEntry, 'action' | 'from' | 'to' | 'reason' | 'note'>;
}

/** A short-term entry written again in a session it was not seen in; null when that changes nothing (a retry, another tier). */
export function corroborate(
  item: MemoryItem,
  sessionId: string | undefined,
  now: Date,
  policy: TierPolicy = P,
): TierDecision | null {
  if (item.tier !== 'short_term' || item.deleted || sessionId === undefined) return null;
  const seen = sightingsOf(item);
  if (seen.sessions.includes(sessionId)) return null;
  const confidence = round2(Math.min(1, confidenceAt(item, now, policy) + policy.corroborationGain));
  const sessions = [...seen.sessions, sessionId].slice(-MAX_SIGHTINGS);
  return {
    item: { ...item, confidence, seen: { sessions, at: now.toISOString(), confidence } },
    audit: {
      action: 'corroborate',
      from: String(item.confidence),
      to: String(confidence),
      reason: `written again in session ${sessionId} (${sessions.length} sessions)`,
    },
  };
}

/** Short-term → long-term when confidence > 0.8 and it was seen in 2+ sessions; null otherwise. */
export function autoPromotion(item: MemoryItem, now: Date, policy: TierPolicy = P): TierDecision | null {
  if (item.tier !== 'short_term' || item.deleted) return null;
  const confidence = confidenceAt(item, now, policy);
  const sessions = sightingsOf(item).sessions.length;
  if (!(confidence > policy.promotionConfidence) || sessions < policy.minSessions) return null;
  const move = promoteTier({ ...item, confidence }, now, policy.ttlSeconds);
  if (!move.ok) return null;
  const reason = `automatic: confidence ${confidence} > ${policy.promotionConfidence}, seen in ${sessions} sessions`;
  return { item: move.item, audit: { action: 'promote', from: move.from, to: move.to, reason } };
}

/** Past its TTL at `now`: gone, with why (its confidence when it expired). Null while it lives. */
export function expireEntry(item: MemoryItem, now: Date, policy: TierPolicy = P): TierDecision | null {
  if (item.deleted || item.expiresAt === null || Date.parse(item.expiresAt) > now.getTime()) return null;
  const confidence = confidenceAt(item, new Date(item.expiresAt), policy);
  const reason =
    confidence < policy.unsupportedBelow
      ? `unverified/unsupported: confidence ${confidence} < ${policy.unsupportedBelow} when its TTL ran out`
      : `TTL ran out at ${item.expiresAt} (confidence ${confidence})`;
  return { item: { ...item, confidence, deleted: true }, audit: { action: 'expire', from: item.tier, reason } };
}

/** The nightly review of one entry: expire, collect, promote or decay it; null when nothing changes. */
export function reviewTierEntry(item: MemoryItem, now: Date, policy: TierPolicy = P): TierDecision | null {
  if (item.deleted || !item.id.startsWith('mem:')) return null;
  const expired = expireEntry(item, now, policy);
  if (expired) return expired;
  const confidence = confidenceAt(item, now, policy);
  if (confidence < policy.garbageBelow) {
    return {
      item: { ...item, confidence, deleted: true },
      audit: { action: 'garbage', from: item.tier, reason: `confidence ${confidence} < ${policy.garbageBelow}` },
    };
  }
  const promoted = autoPromotion(item, now, policy);
  if (promoted) return promoted;
  if (item.confidence - confidence < DECAY_WRITE_STEP) return null;
  return {
    item: { ...item, confidence },
    audit: {
      action: 'decay',
      from: String(item.confidence),
      to: String(confidence),
      reason: `not seen again since ${sightingsOf(item).at}`,
    },
  };
}

/** Why an ephemeral entry matters at its session's close: its signs of significance, and `recurrence` when it recurred. Empty: it does not. */
export function whyItMatters(item: MemoryItem, policy: TierPolicy = P): string[] {
  const recurred = (item.occurrences ?? 1) >= policy.recurrenceMin ? [`recurrence (${item.occurrences} writes)`] : [];
  return [...(item.significance ?? []), ...recurred];
}

/**
 * An ephemeral entry of a session that closed at `now`: promoted to short-term when it matters
 * (whyItMatters), with why; cleared otherwise. Null for anything else (a redelivered close finds
 * the promoted entry short-term and the cleared one deleted: nothing to do).
 */
export function closeSession(
  item: MemoryItem,
  sessionId: string,
  now: Date = new Date(item.updatedAt),
  policy: TierPolicy = P,
): TierDecision | null {
  if (item.deleted || item.tier !== 'ephemeral' || item.sessionId !== sessionId) return null;
  const why = whyItMatters(item, policy);
  const move = why.length > 0 ? promoteTier(item, now, policy.ttlSeconds) : null;
  if (move?.ok)
    return {
      item: move.item,
      audit: {
        action: 'promote',
        from: move.from,
        to: move.to,
        reason: `session ${sessionId} closed; it matters: ${why.join(', ')}`,
      },
    };
  return {
    item: { ...item, deleted: true },
    audit: { action: 'session_close', from: 'ephemeral', reason: `session ${sessionId} closed` },
  };
}

/**
 * An ephemeral entry written again in its session: its new signs of significance join, and a
 * write citing turns no earlier write cited is one more occurrence (a retry cites none, so it
 * changes nothing: null). Null for anything else.
 */
export function recur(
  item: MemoryItem,
  write: {
    sessionId?: string | undefined;
    sourceTurns?: readonly number[] | undefined;
    significance?: readonly string[] | undefined;
  },
): TierDecision | null {
  if (item.deleted || item.tier !== 'ephemeral' || write.sessionId !== item.sessionId) return null;
  const turns = (write.sourceTurns ?? []).filter((t) => !item.sourceTurns.includes(t));
  const signs = (write.significance ?? []).filter((s) => !(item.significance ?? []).includes(s as never));
  if (turns.length === 0 && signs.length === 0) return null;
  const occurrences = (item.occurrences ?? 1) + (turns.length > 0 ? 1 : 0);
  const significance = [...new Set([...(item.significance ?? []), ...signs])].sort() as MemoryItem['significance'];
  const sourceTurns = [...new Set([...item.sourceTurns, ...turns])].sort((a, b) => a - b);
  const reason =
    turns.length > 0
      ? `written again in session ${item.sessionId} (${occurrences} writes)`
      : `marked ${signs.join(', ')}`;
  return {
    item: { ...item, occurrences, sourceTurns, ...(significance?.length ? { significance } : {}) },
    audit: { action: 'recur', reason },
  };
}
