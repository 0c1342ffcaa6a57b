/** memory.save and scope trust (req R-SCOPE): candidates committed only on an APPROVE validation, and a validation outcome moving the trust of the items a turn used. */
import type { ValidationOutcome } from '../../../events/turn-saved.js';
import { type MemoryItem, mergeAttributes } from '../../domain/memory-item.js';
import { commitDecision } from '../../domain/memory-candidates.js';
import { seenInUse } from '../../domain/tier-policy.js';
import { type NewTierEntry, newTierItem } from '../../domain/memory-tiers.js';
import { applyOutcome, newScopeExpiry } from '../../domain/scope-trust.js';
import { MemoryApiError } from '../memory-api-error.js';
import type { MemoryApiDeps } from './deps.js';
import { updateItem } from './tiers.js';

export interface Candidate extends Omit<NewTierEntry, 'sourceTurns' | 'clientId' | 'ttlSeconds' | 'sessionId'> {}

/** memory.save: commit the candidates of a turn if (and only if) its validation is APPROVE. */
export async function save(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: { turnId?: number | undefined; sessionId?: string | undefined; validation?: ValidationOutcome | undefined; candidates: Candidate[] },
): Promise<{ committed: MemoryItem[]; discarded: number; reason?: string }> {
  const now = deps.clock.now();
  const entry = req.turnId !== undefined ? (await deps.turns.turnIndex(userId, [req.turnId]))[0] : undefined;
  const stored = entry?.validation as ValidationOutcome | undefined;
  const decision = commitDecision(stored, req.validation);
  if (!decision.commit) {
    await deps.audit.append([
      { userId, itemId: `turn:${req.turnId ?? 'none'}`, action: 'discard_candidates', actor, at: now.toISOString(), reason: decision.reason, note: `${req.candidates.length} candidate(s)` },
    ]);
    return { committed: [], discarded: req.candidates.length, reason: decision.reason };
  }
  const sourceTurns = req.turnId !== undefined ? [req.turnId] : [];
  const attributes = mergeAttributes(sourceTurns, () => entry?.attributes);
  const committed: MemoryItem[] = [];
  for (const c of req.candidates) {
    const fresh = newTierItem(userId, 'long_term', { ...c, sessionId: req.sessionId, sourceTurns, clientId: undefined }, now, attributes);
    // Req R-SCOPE-1: a new document is NEW scope, which expires unless use earns it trust.
    const item: MemoryItem = { ...fresh, expiresAt: newScopeExpiry(now), path: `memory/long_term/${fresh.id}` };
    const res = await deps.items.create(item);
    if (res.created) await deps.audit.append([{ userId, itemId: item.id, action: 'commit', actor, at: now.toISOString(), to: 'long_term', reason: `turn ${req.turnId ?? '(none)'} validated APPROVE` }]);
    committed.push(res.item);
  }
  return { committed, discarded: 0 };
}

/** Req R-SCOPE-2: the validation outcome of a turn that used these items moves their trust. */
export async function recordOutcome(
  deps: MemoryApiDeps,
  actor: string,
  userId: string,
  req: { ids: string[]; validation: ValidationOutcome; turnId?: number | undefined },
): Promise<{ changes: Array<{ id: string; trustFrom: number; trustTo: number; scopeFrom: string; scopeTo: string }>; skipped: Array<{ id: string; reason: string }> }> {
  const changes: Array<{ id: string; trustFrom: number; trustTo: number; scopeFrom: string; scopeTo: string }> = [];
  const skipped: Array<{ id: string; reason: string }> = [];
  for (const id of [...new Set(req.ids)]) {
    if (!id.startsWith('mem:')) {
      skipped.push({ id, reason: 'trust is tracked for API-written items (mem:…); derived knowledge gains trust by recurring' });
      continue;
    }
    let change: ReturnType<typeof applyOutcome> | undefined;
    try {
      await updateItem(
        deps,
        userId,
        id,
        (i) => {
          change = applyOutcome(i, req.validation, deps.clock.now());
          const action = change.scopeTo === change.scopeFrom ? 'trust' : scopeRank(change.scopeTo) > scopeRank(change.scopeFrom) ? 'scope_up' : 'scope_down';
          // A turn the item helped pass is the item seen in use: its decay starts again (lib/domain/tier-policy.ts).
          const used = req.validation === 'APPROVE' ? seenInUse(change.item, deps.clock.now()) : change.item;
          return {
            item: used,
            audit: { action, from: `${change.scopeFrom} (trust ${change.trustFrom})`, to: `${change.scopeTo} (trust ${change.trustTo})`, reason: `validation ${req.validation}${req.turnId !== undefined ? ` of turn ${req.turnId}` : ''}` },
          };
        },
        actor,
      );
    } catch (error) {
      if (error instanceof MemoryApiError && error.kind === 'not_found') {
        skipped.push({ id, reason: error.message });
        continue;
      }
      throw error;
    }
    if (change) changes.push({ id, trustFrom: change.trustFrom, trustTo: change.trustTo, scopeFrom: change.scopeFrom, scopeTo: change.scopeTo });
  }
  return { changes, skipped };
}

const scopeRank = (s: string) => ['new', 'user', 'global'].indexOf(s);
