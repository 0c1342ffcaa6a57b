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
 * - session close: ephemeral entries are cleared when their session closes ("Session cleanup").
 *
 * Confidence is computed from the last sighting and `now`, never from an earlier sweep's
 * result: every decision is deterministic in the entry and `now`, so a rerun decides the same.
 */
import { type DecayPolicy, DECAY_WRITE_STEP, decayed, SLOW_DECAY } from '../knowledge/confidence-decay.js';
import type { MemoryItem, Tier } from '../items/memory-item.js';
import { type AuditEntry, promoteTier } from './memory-tiers.js';

export const CORROBORATION_GAIN = 0.15;
export const AUTO_PROMOTION = { aboveConfidence: 0.8, minSessions: 2 } as const;
export const GARBAGE_BELOW = 0.1;
export const UNSUPPORTED_BELOW = 0.5;
/** Most sessions an entry's sightings keep (the newest): enough for any criterion here. */
export const MAX_SIGHTINGS = 50;

const DECAY: Record<Tier, DecayPolicy | null> = { ephemeral: null, short_term: { afterDays: 1, halfLifeDays: 7 }, long_term: SLOW_DECAY };

const round2 = (n: number) => Math.round(n * 100) / 100;

export type Sightings = NonNullable<MemoryItem['seen']>;

/** An entry's sightings; one written before they were kept was seen once, when last updated. */
export const sightingsOf = (item: MemoryItem): Sightings => item.seen ?? { sessions: item.sessionId ? [item.sessionId] : [], at: item.updatedAt, confidence: item.confidence };

/** Its confidence at `now`: what it had when last seen, decayed by its tier's policy. */
export function confidenceAt(item: MemoryItem, now: Date): number {
  const seen = sightingsOf(item);
  const policy = DECAY[item.tier];
  return policy ? decayed(seen.confidence, seen.at, now, policy) : seen.confidence;
}

/** The entry seen in use now (a turn it served was approved): its decay starts again from its confidence. */
export function seenInUse(item: MemoryItem, now: Date): MemoryItem {
  return { ...item, seen: { ...sightingsOf(item), at: now.toISOString(), confidence: item.confidence } };
}


/** What the policy does to an entry: the entry as it becomes, and its audit entry's what and why. */
export interface TierDecision {
  item: MemoryItem;
  audit: Pick<AuditEntry, 'action' | 'from' | 'to' | 'reason'>;
}

/** A short-term entry written again in a session it was not seen in; null when that changes nothing (a retry, another tier). */
export function corroborate(item: MemoryItem, sessionId: string | undefined, now: Date): TierDecision | null {
  if (item.tier !== 'short_term' || item.deleted || sessionId === undefined) return null;
  const seen = sightingsOf(item);
  if (seen.sessions.includes(sessionId)) return null;
  const confidence = round2(Math.min(1, confidenceAt(item, now) + CORROBORATION_GAIN));
  const sessions = [...seen.sessions, sessionId].slice(-MAX_SIGHTINGS);
  return {
    item: { ...item, confidence, seen: { sessions, at: now.toISOString(), confidence } },
    audit: { action: 'corroborate', from: String(item.confidence), to: String(confidence), reason: `written again in session ${sessionId} (${sessions.length} sessions)` },
  };
}

/** Short-term → long-term when confidence > 0.8 and it was seen in 2+ sessions; null otherwise. */
export function autoPromotion(item: MemoryItem, now: Date): TierDecision | null {
  if (item.tier !== 'short_term' || item.deleted) return null;
  const confidence = confidenceAt(item, now);
  const sessions = sightingsOf(item).sessions.length;
  if (!(confidence > AUTO_PROMOTION.aboveConfidence) || sessions < AUTO_PROMOTION.minSessions) return null;
  const move = promoteTier({ ...item, confidence }, now);
  if (!move.ok) return null;
  const reason = `automatic: confidence ${confidence} > ${AUTO_PROMOTION.aboveConfidence}, seen in ${sessions} sessions`;
  return { item: move.item, audit: { action: 'promote', from: move.from, to: move.to, reason } };
}

/** Past its TTL at `now`: gone, with why (its confidence when it expired). Null while it lives. */
export function expireEntry(item: MemoryItem, now: Date): TierDecision | null {
  if (item.deleted || item.expiresAt === null || Date.parse(item.expiresAt) > now.getTime()) return null;
  const confidence = confidenceAt(item, new Date(item.expiresAt));
  const reason =
    confidence < UNSUPPORTED_BELOW ? `unverified/unsupported: confidence ${confidence} < ${UNSUPPORTED_BELOW} when its TTL ran out` : `TTL ran out at ${item.expiresAt} (confidence ${confidence})`;
  return { item: { ...item, confidence, deleted: true }, audit: { action: 'expire', from: item.tier, reason } };
}

/** The nightly review of one entry: expire, collect, promote or decay it; null when nothing changes. */
export function reviewTierEntry(item: MemoryItem, now: Date): TierDecision | null {
  if (item.deleted || !item.id.startsWith('mem:')) return null;
  const expired = expireEntry(item, now);
  if (expired) return expired;
  const confidence = confidenceAt(item, now);
  if (confidence < GARBAGE_BELOW) {
    return { item: { ...item, confidence, deleted: true }, audit: { action: 'garbage', from: item.tier, reason: `confidence ${confidence} < ${GARBAGE_BELOW}` } };
  }
  const promoted = autoPromotion(item, now);
  if (promoted) return promoted;
  if (item.confidence - confidence < DECAY_WRITE_STEP) return null;
  return { item: { ...item, confidence }, audit: { action: 'decay', from: String(item.confidence), to: String(confidence), reason: `not seen again since ${sightingsOf(item).at}` } };
}

/** An ephemeral entry of a session that closed: cleared. Null for anything else. */
export function closeSession(item: MemoryItem, sessionId: string): TierDecision | null {
  if (item.deleted || item.tier !== 'ephemeral' || item.sessionId !== sessionId) return null;
  return { item: { ...item, deleted: true }, audit: { action: 'session_close', from: 'ephemeral', reason: `session ${sessionId} closed` } };
}
