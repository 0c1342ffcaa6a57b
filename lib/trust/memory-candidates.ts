/**
 * Memory staging of req R-CAND-1: the planner's memory candidates (preferences, facts,
 * patterns) are committed to memory only when the turn's validation is APPROVE; on REVISE,
 * RETRY or FAIL they are discarded, so failed or revised turns never pollute memory.
 * Committed candidates start in NEW scope (they expire unless use earns them trust).
 */
import type { ValidationOutcome } from '../../events/turn-saved.js';
import { transientData } from '../kernel/transient-data.js';

export type CommitDecision = { commit: true } | { commit: false; reason: string };

/**
 * `stored` is the validation the turn index holds for the turn (authoritative when the
 * turn arrived already), `claimed` what the caller says. Unknown → nothing is committed.
 */
export function commitDecision(
  stored: ValidationOutcome | undefined,
  claimed: ValidationOutcome | undefined,
): CommitDecision {
  const outcome = stored ?? claimed;
  if (outcome === undefined)
    return {
      commit: false,
      reason: 'the turn has no validation outcome yet: send validation, or save after the turn.saved event',
    };
  if (stored !== undefined && claimed !== undefined && stored !== claimed) {
    return { commit: false, reason: `the turn's stored validation is ${stored}, not ${claimed}` };
  }
  if (outcome !== 'APPROVE')
    return { commit: false, reason: `validation ${outcome}: candidates are discarded (only APPROVE commits)` };
  return { commit: true };
}

/**
 * Req R-CAND-2: a candidate holding transient data (a URL or a price) is discarded, whatever the
 * validation. Why, by the candidate's place in the request and not its words (the reason is kept
 * in the audit trail), or undefined when it may be committed.
 */
export function transientCandidate(
  candidate: { text: string; title?: string | undefined },
  index: number,
): string | undefined {
  const found = transientData(`${candidate.title ?? ''} ${candidate.text}`);
  return found && `candidate ${index + 1} holds a ${found.form}`;
}
