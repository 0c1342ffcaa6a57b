/**
 * Memory tiers of req R-TIER: ephemeral → short-term → long-term, each entry in a
 * CWMState envelope (`status`). Short-lived tiers expire by TTL; promotion moves an entry
 * one tier up, demotion one tier down with a reason (contradiction, decay, superseded).
 * Every move is an audit entry: who, what, when, why.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import type { MemoryItem, Significance, Status, Tier } from '../items/memory-item.js';
import { DEFAULT_TIER_POLICY, type TierPolicy } from './tier-settings.js';

export const TIER_ORDER: readonly Tier[] = ['ephemeral', 'short_term', 'long_term'];

const STATUS_OF: Record<Tier, Status> = { ephemeral: 'ephemeral', short_term: 'short_term', long_term: 'canonical' };

/**
 * Default time to live per tier, seconds. Req R-TIER-1's tier table: short-term entries have a
 * "configurable TTL (default 7d)" — the validation window in which they must earn promotion;
 * its implementation notes shorten that per entry type (1 hour for conversation, 15 minutes
 * for perception). Ephemeral entries live as long as their session: its close promotes those
 * that matter and clears the rest (closeSessionEphemera), and an hour after their write if no close ever comes.
 * Long-term entries do not expire; decay collects them (reviewTierEntry).
 */
export const DEFAULT_TTL_SECONDS: Record<Tier, number | null> = { ...DEFAULT_TIER_POLICY.ttlSeconds, long_term: null };
/** The TTLs a stage sets (lib/tiers/tier-settings.ts `ttlSeconds`). */
export type TierTtls = TierPolicy['ttlSeconds'];
/** Per entry type overrides of the short-term TTL (req R-TIER-2 implementation notes). */
export const SHORT_TERM_TTL_BY_TYPE: Record<string, number> = { conversation: 3600, perception: 900 };
export const MAX_TTL_SECONDS = 30 * 86_400;

export const DemotionReasonSchema = z.enum(['contradiction', 'decay', 'superseded', 'other']);
export type DemotionReason = z.infer<typeof DemotionReasonSchema>;

export type AuditAction =
  | 'create'
  | 'corroborate'
  | 'decay'
  | 'expire'
  | 'garbage'
  | 'session_close'
  | 'promote'
  | 'demote'
  | 'delete'
  | 'scope_up'
  | 'scope_down'
  | 'trust'
  | 'review_promote'
  | 'review_discard'
  | 'summary_delete'
  | 'summary_request'
  | 'commit'
  | 'discard_candidates'
  | 'settings_change'
  | 'summary_edit'
  | 'diary_keep'
  | 'diary_drop'
  | 'edit'
  | 'restore'
  | 'forget'
  | 'recur'
  | 'contradict'
  | 'undo_contradict';

export interface AuditEntry {
  userId: string;
  itemId: string;
  action: AuditAction;
  /** Who: the credential's subject. */
  actor: string;
  at: string;
  from?: string;
  to?: string;
  reason?: string;
  note?: string;
  /**
   * An `edit` or `restore` (POST …/memory/items/{id}[/restore]): the text it replaced. The item
   * keeps the same text in its own history under the entry's `at`, which restore reads. Served
   * to the user's readers, who may read the item and its history anyway; never logged.
   */
  previous?: string;
}

export function ttlFor(
  tier: Tier,
  type: string | undefined,
  requested: number | undefined,
  ttls: TierTtls = DEFAULT_TIER_POLICY.ttlSeconds,
): number | null {
  if (tier === 'long_term') return null;
  if (requested !== undefined) return Math.min(requested, MAX_TTL_SECONDS);
  if (tier === 'short_term' && type && SHORT_TERM_TTL_BY_TYPE[type] !== undefined)
    return SHORT_TERM_TTL_BY_TYPE[type] ?? null;
  return ttls[tier];
}

const expiry = (now: Date, ttl: number | null) =>
  ttl === null ? null : new Date(now.getTime() + ttl * 1000).toISOString();

/**
 * A stable id: the same entry written twice (a retry) is the same item. A short-term entry's
 * id leaves its session out: the tier spans sessions (req R-TIER-1: "cross-session lookups"), so
 * the same entry written in another session meets the first and corroborates it.
 */
export function memoryItemId(userId: string, parts: ReadonlyArray<string | number | undefined>): string {
  return `mem:${createHash('sha256')
    .update(JSON.stringify([userId, ...parts]))
    .digest('hex')
    .slice(0, 20)}`;
}

export interface NewTierEntry {
  text: string;
  title?: string | undefined;
  type?: string | undefined;
  sessionId?: string | undefined;
  primaryTopic?: string | undefined;
  keywords?: string[] | undefined;
  userPurpose?: string | undefined;
  dataRequirements?: string[] | undefined;
  contentTypes?: string[] | undefined;
  confidence?: number | undefined;
  sourceTurns?: number[] | undefined;
  ttlSeconds?: number | undefined;
  /** A client's idempotency key; by default the id is derived from the content. */
  clientId?: string | undefined;
  /** Why a pipeline wrote it (req R-TIER-11: e.g. `new fact staged by batch B`); kept on the item and its create entry. */
  reason?: string | undefined;
  /** An ephemeral entry's signs of significance (req R-TIER-11): its session's close promotes it. */
  significance?: Significance[] | undefined;
}

export function newTierItem(
  userId: string,
  tier: Tier,
  e: NewTierEntry,
  now: Date,
  attributes: Record<string, string> = {},
  ttls: TierTtls = DEFAULT_TIER_POLICY.ttlSeconds,
): MemoryItem {
  const at = now.toISOString();
  const contentTypes = e.contentTypes ?? (e.type ? [e.type] : ['note']);
  return {
    id: memoryItemId(
      userId,
      e.clientId !== undefined
        ? ['client', e.clientId]
        : [tier, tier === 'short_term' ? undefined : e.sessionId, e.type, e.text],
    ),
    kind: 'memory',
    userId,
    path: '',
    title: e.title ?? e.text.slice(0, 80),
    text: e.text,
    primaryTopic: e.primaryTopic ?? '',
    keywords: e.keywords ?? [],
    userPurpose: e.userPurpose ?? '',
    dataRequirements: e.dataRequirements ?? [],
    contentTypes,
    scope: 'new',
    quality: e.confidence ?? 0.5,
    confidence: e.confidence ?? 0.5,
    tier,
    status: STATUS_OF[tier],
    createdAt: at,
    updatedAt: at,
    expiresAt: expiry(now, ttlFor(tier, e.type, e.ttlSeconds, ttls)),
    sourceTurns: e.sourceTurns ?? [],
    attributes,
    ...(e.sessionId ? { sessionId: e.sessionId } : {}),
    ...(e.reason ? { reason: e.reason } : {}),
    seen: { sessions: e.sessionId ? [e.sessionId] : [], at, confidence: e.confidence ?? 0.5 },
    ...(tier === 'ephemeral'
      ? { occurrences: 1, ...(e.significance?.length ? { significance: [...new Set(e.significance)].sort() } : {}) }
      : {}),
    deleted: false,
  };
}

/**
 * The entry on another tier from `now`: the new tier's TTL starts, and so does its validation
 * (a move is a sighting: decay counts from it, at the confidence the entry has).
 */
function moved(item: MemoryItem, to: Tier, now: Date, ttls: TierTtls): MemoryItem {
  const at = now.toISOString();
  const seen = item.seen ? { seen: { ...item.seen, at, confidence: item.confidence } } : {};
  return {
    ...item,
    ...seen,
    tier: to,
    status: STATUS_OF[to],
    expiresAt: expiry(now, ttlFor(to, item.contentTypes[0], undefined, ttls)),
    updatedAt: at,
  };
}

/** A new updatedAt that differs from the old one even within the same millisecond (it is the optimistic-lock token). */
export function nextUpdatedAt(previous: string, now: Date): string {
  return new Date(Math.max(now.getTime(), Date.parse(previous) + 1)).toISOString();
}

export type TierMove = { ok: true; item: MemoryItem; from: Tier; to: Tier } | { ok: false; reason: string };

/** One tier up; the TTL of the new tier starts now (long-term: none). */
export function promoteTier(item: MemoryItem, now: Date, ttls: TierTtls = DEFAULT_TIER_POLICY.ttlSeconds): TierMove {
  const i = TIER_ORDER.indexOf(item.tier);
  const to = TIER_ORDER[i + 1];
  if (!to) return { ok: false, reason: `${item.id} is already ${item.tier}, the top tier` };
  return { ok: true, from: item.tier, to, item: moved(item, to, now, ttls) };
}

/** One tier down, with a reason; the item expires on the lower tier's TTL from now. */
export function demoteTier(item: MemoryItem, now: Date, ttls: TierTtls = DEFAULT_TIER_POLICY.ttlSeconds): TierMove {
  const i = TIER_ORDER.indexOf(item.tier);
  const to = i > 0 ? TIER_ORDER[i - 1] : undefined;
  if (!to) return { ok: false, reason: `${item.id} is already ${item.tier}, the bottom tier` };
  return { ok: true, from: item.tier, to, item: moved(item, to, now, ttls) };
}
