/**
 * Req R-TIER-8 in the pipeline: a correction a batch stages contradicts the Knowledge fact it
 * names (`existing_file`) at once — confidence down by the tier policy's cost, demoted below
 * the long-term floor (lib/knowledge/fact-contradiction.ts) — while the correction itself
 * waits in staging to recur or be reviewed; once promoted it rewrites the fact's text
 * (lib/knowledge/correction.ts). The staged file is the evidence, so a redelivered batch,
 * or the correction recurring, costs the fact nothing more. A correction names only Knowledge
 * documents (the prompt lists those), so tier entries are contradicted through the API only.
 */
import type { Job } from '../../events/job.js';
import { contradictKnowledgeFact } from '../knowledge/contradict-fact.js';
import { DEFAULT_TIER_POLICY } from '../tiers/tier-settings.js';
import type { BatchInput } from './batch-input.js';
import { REFLECTION_ACTOR } from './batch-tier-entries.js';
import type { Staged } from './batch-staging.js';
import type { ReflectionDeps } from './reflection-deps.js';

/** The Knowledge facts the batch's staged corrections contradicted (`Knowledge/…`). */
export async function contradictCorrected(
  job: Job,
  input: Pick<BatchInput, 'batchAt'>,
  staged: Pick<Staged, 'toStage'>,
  deps: Pick<ReflectionDeps, 'knowledge' | 'graph' | 'tierPolicy' | 'audit'>,
): Promise<string[]> {
  const policy = deps.tierPolicy ?? DEFAULT_TIER_POLICY;
  const contradicted: string[] = [];
  for (const doc of staged.toStage) {
    const target = doc.meta.existing_file;
    if (doc.kind !== 'correction' || typeof target !== 'string') continue;
    const fact = await contradictKnowledgeFact(deps, REFLECTION_ACTOR, job.userId, target, {
      by: `Knowledge_staging/${doc.path}`,
      at: input.batchAt,
      cost: policy.contradictionCost,
      floor: policy.floors.long_term,
    });
    if (fact) contradicted.push(`Knowledge/${fact.id}`);
  }
  return contradicted;
}
