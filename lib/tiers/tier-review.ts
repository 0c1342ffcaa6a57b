/**
 * The tier policy's use cases (lib/tiers/tier-policy.ts), each at an input time — the
 * session close's arrival, the nightly run's or the sweep's scheduled time — never the wall
 * clock: a session's close promotes its ephemeral entries that matter and clears the rest (the signal function), the nightly run
 * reviews a user's entries (expire, collect, promote, decay), the daily sweep expires every
 * user's entries whose TTL ran out. Every move is one conditional write with its audit entry
 * (MemoryItemStore.move), by the actor `tier-policy`; a rerun finds nothing left to do.
 */
import type { MemoryItem } from '../items/memory-item.js';
import { nextUpdatedAt } from './memory-tiers.js';
import type { AuditEntry } from './memory-tiers.js';
import {
  autoPromotion,
  closeSession,
  corroborate,
  expireEntry,
  recur,
  reviewTierEntry,
  type TierDecision,
} from './tier-policy.js';
import { type Contradiction, contradict, undoContradiction } from './contradiction.js';
import { DEFAULT_TIER_POLICY, type TierPolicy } from './tier-settings.js';
import type { MemoryItemStore } from '../items/memory-item.port.js';

export const POLICY_ACTOR = 'tier-policy';
const MAX_ATTEMPTS = 3;

export type TierItems = Pick<MemoryItemStore, 'get' | 'move'>;

/**
 * One entry through a decision: read, decide, move on the condition that it is unchanged;
 * read and decide again when it changed meanwhile. The decision that landed, or null.
 */
export async function applyDecision(
  items: TierItems,
  userId: string,
  id: string,
  decide: (item: MemoryItem) => TierDecision | null,
  now: Date,
  actor = POLICY_ACTOR,
): Promise<TierDecision | null> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const current = await items.get(userId, id);
    const decision = current ? decide(current) : null;
    if (!current || !decision) return null;
    const item = { ...decision.item, updatedAt: nextUpdatedAt(current.updatedAt, now) };
    const audit: AuditEntry = { userId, itemId: id, actor, at: item.updatedAt, ...decision.audit };
    if (await items.move(item, current.updatedAt, audit)) return { item, audit: decision.audit };
  }
  throw new Error(`memory item ${id} of ${userId} kept changing under the tier policy (${MAX_ATTEMPTS} attempts)`);
}

/** A short-term entry written again in another session: seen again, and promoted if that earns it (both audited). */
export async function corroborateEntry(
  items: TierItems,
  actor: string,
  userId: string,
  id: string,
  sessionId: string | undefined,
  now: Date,
  policy: TierPolicy = DEFAULT_TIER_POLICY,
): Promise<MemoryItem | null> {
  const seen = await applyDecision(items, userId, id, (i) => corroborate(i, sessionId, now, policy), now, actor);
  if (!seen) return null;
  return (await applyDecision(items, userId, id, (i) => autoPromotion(i, now, policy), now))?.item ?? seen.item;
}

/** An ephemeral entry written again in its session: one more occurrence, or new signs of significance (tier-policy.ts `recur`). */
export async function recurEntry(
  items: TierItems,
  actor: string,
  userId: string,
  id: string,
  write: Parameters<typeof recur>[1],
  now: Date,
): Promise<MemoryItem | null> {
  return (await applyDecision(items, userId, id, (i) => recur(i, write), now, actor))?.item ?? null;
}

/**
 * A session closed at `now` (req R-TIER-5, R-TIER-11): each of its ephemeral entries that
 * matters is promoted to short-term, with why; the rest are cleared. Each is one conditional
 * move with its audit entry, so a redelivered close finds nothing left to do. How many of each.
 */
export async function closeSessionEphemera(
  items: TierItems & Pick<MemoryItemStore, 'sessionEphemera'>,
  userId: string,
  sessionId: string,
  now: Date,
  policy: TierPolicy = DEFAULT_TIER_POLICY,
): Promise<{ promoted: number; cleared: number }> {
  const done = { promoted: 0, cleared: 0 };
  for (const id of await items.sessionEphemera(userId, sessionId)) {
    const decision = await applyDecision(items, userId, id, (i) => closeSession(i, sessionId, now, policy), now);
    if (decision) done[decision.audit.action === 'promote' ? 'promoted' : 'cleared'] += 1;
  }
  return done;
}

/**
 * A tier entry contradicted (req R-TIER-8): confidence down, and one tier down below its
 * floor, audited. Conditional on the entry being unchanged since it was read, and read again
 * on a race, so two concurrent contradictions both count; the same `evidence` counts once.
 * The entry as it became, or null when nothing changed (gone, or that evidence counted already).
 */
export async function contradictEntry(
  items: TierItems,
  userId: string,
  id: string,
  c: Contradiction,
  now: Date,
  policy: TierPolicy = DEFAULT_TIER_POLICY,
): Promise<TierDecision | null> {
  return applyDecision(items, userId, id, (i) => contradict(i, c, now, policy), now, c.by);
}

/** A reviewer undoes the entry's last contradiction: its tier and confidence as before, audited. Null when it has none. */
export async function undoContradictionOf(
  items: TierItems,
  actor: string,
  userId: string,
  id: string,
  now: Date,
): Promise<TierDecision | null> {
  return applyDecision(items, userId, id, undoContradiction, now, actor);
}

export type TierReport = Record<'expire' | 'garbage' | 'promote' | 'decay', number>;

/** The nightly review of a user's entries at the run's scheduled time `now`. What it did. */
export async function reviewTiers(
  items: TierItems & Pick<MemoryItemStore, 'list'>,
  userId: string,
  now: Date,
  policy: TierPolicy = DEFAULT_TIER_POLICY,
): Promise<TierReport> {
  const report: TierReport = { expire: 0, garbage: 0, promote: 0, decay: 0 };
  for (const entry of await items.list(userId)) {
    if (!reviewTierEntry(entry, now, policy)) continue;
    const done = await applyDecision(items, userId, entry.id, (i) => reviewTierEntry(i, now, policy), now);
    const action = done?.audit.action;
    if (action === 'expire' || action === 'garbage' || action === 'promote' || action === 'decay') report[action] += 1;
  }
  return report;
}

/** The daily sweep at `now`: every user's entries whose TTL ran out on one of `days`, expired with the reason. How many. */
export async function expireTierEntries(
  items: TierItems & Pick<MemoryItemStore, 'expiringOn'>,
  days: readonly string[],
  now: Date,
  policy: TierPolicy = DEFAULT_TIER_POLICY,
): Promise<number> {
  let expired = 0;
  for (const day of days) {
    for (const entry of await items.expiringOn(day)) {
      if (!expireEntry(entry, now, policy)) continue;
      if (await applyDecision(items, entry.userId, entry.id, (i) => expireEntry(i, now, policy), now)) expired += 1;
    }
  }
  return expired;
}
