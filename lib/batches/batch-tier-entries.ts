/**
 * Req R-TIER-11: reflection feeds the tiers. Each observation a batch accepted — staged, or
 * recurring in an earlier batch's staged item — enters the user's short-term tier as the
 * API's entries do (lib/tiers/tier-entry.port.ts), with why and its source turns. Ids derive
 * from the staged item's kind and words, so a redelivery writes nothing new, and a recurrence
 * from another session corroborates the first entry (confidence + 0.15, promoted to long-term
 * at > 0.8 seen in 2+ sessions: lib/tiers/tier-policy.ts). Items from turns validated FAIL or
 * RETRY never get here: the `failed_turn` gate rejected them (req R-CAND-3).
 */
import type { Job } from '../../events/job.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import type { NewTierEntry } from '../tiers/memory-tiers.js';
import type { StagedKind } from '../knowledge/staging.js';
import type { Gated, Staged } from './batch-staging.js';
import type { ReflectionDeps } from './reflection-deps.js';

/** Who the audit trail says wrote the entries. */
export const REFLECTION_ACTOR = 'reflector';

const KIND_WORDS: Record<StagedKind, string> = {
  fact: 'new fact',
  correction: 'correction',
  connection: 'connection',
  open_question: 'open question',
};

/** The session of the latest cited turn (the sighting's session), if the batch read it. */
function sessionOf(sourceTurns: readonly number[], turns: ReadonlyMap<number, TurnSaved>): string | undefined {
  const cited = sourceTurns.flatMap((t) => turns.get(t) ?? []);
  return cited.sort((a, b) => b.turnId - a.turnId)[0]?.sessionId;
}

/** The entries of what the batch staged and what recurred, in that order. */
export function batchTierEntries(
  job: Pick<Job, 'jobId'>,
  gated: Pick<Gated, 'turns'>,
  staged: Pick<Staged, 'toStage' | 'reinforcements'>,
): NewTierEntry[] {
  const staging = staged.toStage.map((d) => ({
    text: d.text,
    title: d.title,
    type: d.kind,
    confidence: d.confidence,
    sourceTurns: d.sourceTurns,
    sessionId: sessionOf(d.sourceTurns, gated.turns),
    reason: `${KIND_WORDS[d.kind]} staged by batch ${job.jobId}`,
  }));
  // The recurring observation is the staged item's entry seen again: its words make the same id.
  const recurring = staged.reinforcements.map((r) => ({
    text: r.staged.text,
    title: r.staged.title,
    type: r.staged.kind,
    confidence: r.staged.confidence,
    sourceTurns: r.doc.sourceTurns,
    sessionId: sessionOf(r.doc.sourceTurns, gated.turns),
    reason: `${KIND_WORDS[r.staged.kind]} recurred in batch ${job.jobId} (Knowledge_staging/${r.staged.path})`,
  }));
  return [...staging, ...recurring];
}

/** Writes the batch's entries to the user's short-term tier; the ids written or seen again. */
export async function feedShortTerm(
  job: Job,
  gated: Gated,
  staged: Staged,
  deps: Pick<ReflectionDeps, 'tiers'>,
): Promise<string[]> {
  if (!deps.tiers) return [];
  const ids: string[] = [];
  for (const entry of batchTierEntries(job, gated, staged)) {
    const { item } = await deps.tiers.write(job.userId, 'short_term', entry, REFLECTION_ACTOR);
    ids.push(item.id);
  }
  return ids;
}
