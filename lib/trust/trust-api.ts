/** memory.save and scope trust (req R-SCOPE): candidates committed only on an APPROVE validation, and a validation outcome moving the trust of the items a turn used, of every kind. */
import type { ValidationOutcome } from '../../events/turn-saved.js';
import { isLive, type MemoryItem, mergeAttributes } from '../items/memory-item.js';
import { commitDecision, transientCandidate } from './memory-candidates.js';
import { seenInUse } from '../tiers/tier-policy.js';
import { type AuditEntry, type NewTierEntry, newTierItem } from '../tiers/memory-tiers.js';
import { adjustTrust, applyOutcome, isDerivedId, NO_TRUST, newScopeExpiry } from './scope-trust.js';
import { MemoryApiError } from '../memory-api/memory-api-error.js';
import type { MemoryApiDeps } from '../memory-api/deps.js';
import { updateItem } from '../tiers/tiers-api.js';

export interface Candidate extends Omit<NewTierEntry, 'sourceTurns' | 'clientId' | 'ttlSeconds' | 'sessionId'> {}

/** memory.save: commit the candidates of a turn if (and only if) its validation is APPROVE. */
export async function save(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: {
    turnId?: number | undefined;
    sessionId?: string | undefined;
    validation?: ValidationOutcome | undefined;
    candidates: Candidate[];
  },
): Promise<{ committed: MemoryItem[]; discarded: number; reason?: string }> {
  const now = deps.clock.now();
  const entry = req.turnId !== undefined ? (await deps.turns.turnIndex(userId, [req.turnId]))[0] : undefined;
  const stored = entry?.validation as ValidationOutcome | undefined;
  const decision = commitDecision(stored, req.validation);
  const discard = (reason: string, note: string) =>
    deps.audit.append([
      {
        userId,
        itemId: `turn:${req.turnId ?? 'none'}`,
        action: 'discard_candidates',
        actor,
        at: now.toISOString(),
        reason,
        note,
      },
    ]);
  if (!decision.commit) {
    await discard(decision.reason, `${req.candidates.length} candidate(s)`);
    return { committed: [], discarded: req.candidates.length, reason: decision.reason };
  }
  const transient = req.candidates.map(transientCandidate);
  const kept = req.candidates.filter((_, i) => transient[i] === undefined);
  const reasons = transient.filter((r): r is string => r !== undefined);
  if (reasons.length > 0)
    await discard(
      reasons.join('; '),
      `${reasons.length} of ${req.candidates.length} candidate(s): transient data (req R-CAND-2)`,
    );
  const committed: MemoryItem[] = [];
  for (const c of kept) committed.push(await commit(deps, actor, userId, c, { ...req, entry }, now));
  return reasons.length > 0
    ? { committed, discarded: reasons.length, reason: reasons.join('; ') }
    : { committed, discarded: 0 };
}

/** One candidate committed as a NEW-scope long-term item, and its `commit` audit entry. */
async function commit(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  c: Candidate,
  turn: {
    turnId?: number | undefined;
    sessionId?: string | undefined;
    entry?: { attributes?: Record<string, string> | undefined } | undefined;
  },
  now: Date,
): Promise<MemoryItem> {
  const sourceTurns = turn.turnId !== undefined ? [turn.turnId] : [];
  const attributes = mergeAttributes(sourceTurns, () => turn.entry?.attributes);
  const fresh = newTierItem(
    userId,
    'long_term',
    { ...c, sessionId: turn.sessionId, sourceTurns, clientId: undefined },
    now,
    attributes,
  );
  // Req R-SCOPE-1: a new document is NEW scope, which expires unless use earns it trust.
  const item: MemoryItem = { ...fresh, expiresAt: newScopeExpiry(now), path: `memory/long_term/${fresh.id}` };
  const res = await deps.items.create(item);
  // Keyed at the item's own createdAt and written once: a retry whose first attempt died between the
  // item and its audit entry records the commit still; a repeat of a recorded one writes nothing.
  await deps.audit.appendOnce({
    userId,
    itemId: item.id,
    action: 'commit',
    actor,
    at: res.item.createdAt,
    to: 'long_term',
    reason: `turn ${turn.turnId ?? '(none)'} validated APPROVE`,
  });
  return res.item;
}

type TrustMove = { id: string; trustFrom: number; trustTo: number; scopeFrom: string; scopeTo: string };
type OutcomeRequest = { ids: string[]; validation: ValidationOutcome; turnId?: number | undefined };

/**
 * Req R-SCOPE-2: the validation outcome of a turn that used these items moves their trust,
 * whatever their kind: an API-written item's (`mem:`) quality and scope, a derived item's
 * trust record (lib/trust/scope-trust.ts ItemTrust). Skipped: only ids that name no live item.
 */
export async function recordOutcome(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: OutcomeRequest,
): Promise<{ changes: TrustMove[]; skipped: Array<{ id: string; reason: string }> }> {
  const ids = [...new Set(req.ids)];
  const derived = await recordDerivedOutcomes(deps, actor, userId, ids.filter(isDerivedId), req);
  const changes: TrustMove[] = [];
  const skipped: Array<{ id: string; reason: string }> = [];
  for (const id of ids) {
    const done = isDerivedId(id) ? derived.get(id) : await recordItemOutcome(deps, actor, userId, id, req);
    if (done && 'reason' in done) skipped.push({ id, reason: done.reason });
    else if (done) changes.push(done);
  }
  return { changes, skipped };
}

/** An API-written item: its quality and scope move (applyOutcome), with the store's optimistic check. */
async function recordItemOutcome(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  id: string,
  req: OutcomeRequest,
): Promise<TrustMove | { reason: string }> {
  let change: ReturnType<typeof applyOutcome> | undefined;
  try {
    await updateItem(
      deps,
      userId,
      id,
      (i) => {
        change = applyOutcome(i, req.validation, deps.clock.now());
        const action =
          change.scopeTo === change.scopeFrom
            ? 'trust'
            : scopeRank(change.scopeTo) > scopeRank(change.scopeFrom)
              ? 'scope_up'
              : 'scope_down';
        // A turn the item helped pass is the item seen in use: its decay starts again (lib/tiers/tier-policy.ts).
        const used = req.validation === 'APPROVE' ? seenInUse(change.item, deps.clock.now()) : change.item;
        return {
          item: used,
          audit: {
            action,
            from: `${change.scopeFrom} (trust ${change.trustFrom})`,
            to: `${change.scopeTo} (trust ${change.trustTo})`,
            reason: because(req),
          },
        };
      },
      actor,
    );
  } catch (error) {
    if (error instanceof MemoryApiError && error.kind === 'not_found') return { reason: error.message };
    throw error;
  }
  if (!change) throw new Error(`no trust change computed for ${id}`);
  return {
    id,
    trustFrom: change.trustFrom,
    trustTo: change.trustTo,
    scopeFrom: change.scopeFrom,
    scopeTo: change.scopeTo,
  };
}

/** Attempts of one derived item's trust write before the request answers 409. */
const TRUST_ATTEMPTS = 8;

/**
 * Derived items (turns, episodes, staged items, Knowledge facts and findings, summaries, diary
 * entries): their own quality from their stores (the catalog, no trust folded), their trust
 * records, and for each an adjustment written on the condition that no other outcome wrote
 * one since it was read; one that lost reads its record again and decides again, so
 * outcomes at once all count. An outcome that moves nothing (REVISE, or trust already at its
 * bound) writes nothing. Scope and expiry are the item's store's.
 */
async function recordDerivedOutcomes(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  ids: readonly string[],
  req: OutcomeRequest,
): Promise<Map<string, TrustMove | { reason: string }>> {
  const out = new Map<string, TrustMove | { reason: string }>();
  if (ids.length === 0) return out;
  const now = deps.clock.now();
  const [items, records] = await Promise.all([
    deps.catalog.itemsById(userId, ids, { trust: false }),
    deps.trust.get(userId, ids),
  ]);
  for (const id of ids) {
    const item = items.get(id);
    if (!item || !isLive(item, now)) {
      out.set(id, { reason: `memory item ${id} of ${userId} not found` });
      continue;
    }
    let trust = records.get(id) ?? NO_TRUST;
    for (let attempt = 1; ; attempt++) {
      const move = adjustTrust(item.quality, trust, req.validation);
      const change = {
        id,
        trustFrom: move.trustFrom,
        trustTo: move.trustTo,
        scopeFrom: item.scope,
        scopeTo: item.scope,
      };
      if (move.trustTo === move.trustFrom) {
        out.set(id, change);
        break;
      }
      const audit: AuditEntry = {
        userId,
        itemId: id,
        action: 'trust',
        actor,
        at: deps.clock.now().toISOString(),
        from: `trust ${move.trustFrom}`,
        to: `trust ${move.trustTo}`,
        reason: because(req),
      };
      if (await deps.trust.record(userId, id, trust.outcomes, move.next, audit)) {
        out.set(id, change);
        break;
      }
      if (attempt >= TRUST_ATTEMPTS)
        throw new MemoryApiError('conflict', `the trust of ${id} kept changing; try again`);
      trust = (await deps.trust.get(userId, [id])).get(id) ?? NO_TRUST;
    }
  }
  return out;
}

const because = (req: OutcomeRequest) =>
  `validation ${req.validation}${req.turnId !== undefined ? ` of turn ${req.turnId}` : ''}`;

const scopeRank = (s: string) => ['new', 'user', 'global'].indexOf(s);
