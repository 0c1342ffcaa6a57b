/**
 * Scope promotion of req R-SCOPE: NEW → USER → GLOBAL. Documents gain trust through use:
 * a validation outcome of a turn that used the item moves its trust (APPROVE up, RETRY and
 * FAIL down, REVISE not at all). Enough trust makes a NEW item USER (it stops expiring);
 * lost trust demotes GLOBAL → USER → NEW (NEW items expire again). GLOBAL is reached only
 * on an administrator's request: it is shared with every user.
 *
 * The seed defers the numbers to a confidence system it does not include; ours are below.
 */
import type { ValidationOutcome } from '../../events/turn-saved.js';
import type { MemoryItem, Scope } from '../items/memory-item.js';

export const TRUST_STEP: Record<ValidationOutcome, number> = { APPROVE: 0.1, REVISE: 0, RETRY: -0.1, FAIL: -0.2 };
/** NEW → USER at or above this trust. */
export const USER_SCOPE_TRUST = 0.7;
/** USER → NEW below this trust; GLOBAL → USER below GLOBAL_KEEP_TRUST. */
export const NEW_SCOPE_BELOW = 0.4;
export const GLOBAL_KEEP_TRUST = 0.6;
/** How long a NEW item lives unless it earns USER scope (req R-SCOPE-1: "TTL expiration"). */
export const NEW_SCOPE_TTL_DAYS = 30;

const round = (n: number) => Math.round(n * 1000) / 1000;

export interface TrustChange {
  item: MemoryItem;
  trustFrom: number;
  trustTo: number;
  scopeFrom: Scope;
  scopeTo: Scope;
}

export function newScopeExpiry(now: Date): string {
  return new Date(now.getTime() + NEW_SCOPE_TTL_DAYS * 86_400_000).toISOString();
}

/** Apply one validation outcome of a turn that used the item. */
export function applyOutcome(item: MemoryItem, outcome: ValidationOutcome, now: Date): TrustChange {
  const trustTo = round(Math.min(1, Math.max(0, item.quality + TRUST_STEP[outcome])));
  let scopeTo: Scope = item.scope;
  if (item.scope === 'new' && trustTo >= USER_SCOPE_TRUST) scopeTo = 'user';
  else if (item.scope === 'user' && trustTo < NEW_SCOPE_BELOW) scopeTo = 'new';
  else if (item.scope === 'global' && trustTo < GLOBAL_KEEP_TRUST) scopeTo = 'user';
  let expiresAt = item.expiresAt;
  // Only the scope decides the TTL of long-term items (short-lived tiers keep theirs); decay may still collect an unused one (lib/tiers/tier-policy.ts).
  if (item.tier === 'long_term' && scopeTo !== item.scope) expiresAt = scopeTo === 'new' ? newScopeExpiry(now) : null;
  return {
    item: { ...item, quality: trustTo, scope: scopeTo, expiresAt, updatedAt: now.toISOString() },
    trustFrom: item.quality,
    trustTo,
    scopeFrom: item.scope,
    scopeTo,
  };
}

/**
 * The trust of a derived item (a turn, an episode, a staged item, a Knowledge fact or nightly
 * finding, a summary, a diary entry: every kind but the API's `mem:` items, whose trust is
 * their own `quality`). Its store keeps the quality it derives (a fact's confidence, which the
 * nightly run still moves); validation outcomes move an adjustment kept beside it, one small
 * record per item, counted so that two outcomes at once both count (a write conditional on the
 * count read). The item's trust is its quality plus the adjustment, within 0..1. Its scope and
 * expiry stay its store's (a staged item expires by the staging rules, a fact decays by the
 * nightly hygiene): only the trust moves, and with it the item's place in search.
 */
export interface ItemTrust {
  /** Added to the item's own quality (kept so that the sum stays within 0..1 when it was written). */
  adjustment: number;
  /** How many outcomes moved it: the condition of the next write. */
  outcomes: number;
}

export const NO_TRUST: ItemTrust = { adjustment: 0, outcomes: 0 };

/** Ids whose trust is an adjustment beside the item (every kind but `mem:`). */
export const isDerivedId = (id: string): boolean => !id.startsWith('mem:');

/** A derived item's trust: its quality plus its adjustment, within 0..1. */
export function trustedQuality(quality: number, trust: Pick<ItemTrust, 'adjustment'>): number {
  return round(Math.min(1, Math.max(0, quality + trust.adjustment)));
}

/** The item as search ranks it and retrieve returns it: its quality its trust. */
export function withTrust<T extends { quality: number }>(item: T, trust: Pick<ItemTrust, 'adjustment'> | undefined): T {
  return trust && trust.adjustment !== 0 ? { ...item, quality: trustedQuality(item.quality, trust) } : item;
}

/** One validation outcome of a turn that used a derived item of quality `quality` (R-SCOPE-2's steps, TRUST_STEP). */
export function adjustTrust(
  quality: number,
  trust: ItemTrust,
  outcome: ValidationOutcome,
): { trustFrom: number; trustTo: number; next: ItemTrust } {
  const trustFrom = trustedQuality(quality, trust);
  const trustTo = round(Math.min(1, Math.max(0, trustFrom + TRUST_STEP[outcome])));
  return { trustFrom, trustTo, next: { adjustment: round(trustTo - quality), outcomes: trust.outcomes + 1 } };
}
