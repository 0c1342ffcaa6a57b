/**
 * What the nightly run does with its merged findings (req R-SLP, R-DEL-2, R-GRAPH-1): reads
 * the tombstones among them, gates them into Knowledge to store, and adds their triples to
 * the relation graph.
 */
import type { Job } from '../../events/job.js';
import { buriedKeyOf, type Tombstone, tombstoneKeys } from '../forget/tombstone.js';
import type { ErasureLog } from '../forget/forget.port.js';
import type { GraphStore } from '../graph/graph.port.js';
import { recordRelations } from '../graph/graph-use-cases.js';
import { FINDING_EDGE_CONFIDENCE } from '../graph/relation-graph.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import type { KnowledgeEntry } from '../knowledge/knowledge.port.js';
import type { KnowledgeSearch } from '../knowledge/knowledge-search.js';
import { type Finding, findingDocument, gateFinding } from './nightly.js';
import type { SleepTimeRun } from './run-log.js';

/** Findings this similar to a Knowledge document are already known (as the batch dedup gate). */
const KNOWN_SIMILARITY = 0.8;

/** The tombstones among the findings' keys (one read for the run). */
export async function buriedFindings(
  job: Job,
  deps: { erasures?: Pick<ErasureLog, 'buried'> },
  merged: readonly Finding[],
): Promise<ReadonlyMap<string, Tombstone>> {
  if (!deps.erasures || merged.length === 0) return new Map();
  return deps.erasures.buried(
    job.userId,
    merged.flatMap((f) => tombstoneKeys(findingDocument(f, job.jobId, job.requestedAt).doc)),
  );
}

/**
 * Gate the merged findings; returns those that pass and are new, as Knowledge to store, and
 * the Knowledge facts found already known, which the run verifies as of its schedule time
 * (both in the run's one change of the index: maintainFacts).
 */
export function gateFindings(
  job: Job,
  merged: readonly Finding[],
  knowledge: KnowledgeSearch<KnowledgeDoc>,
  run: SleepTimeRun,
  buried: ReadonlyMap<string, Tombstone>,
) {
  const seen = new Map<string, { at: string; by: string }>();
  const stored: KnowledgeEntry[] = [];
  for (const f of merged) {
    const gate = gateFinding(f);
    if (gate) {
      run.findingsRejected.push({ category: f.category, statement: f.statement, reason: gate });
      continue;
    }
    if (isBuried(f, job, buried)) {
      run.findingsRejected.push({
        category: f.category,
        statement: f.statement,
        reason: 'deleted: repeats a finding a person deleted (req R-DEL-2)',
      });
      continue;
    }
    const known = knowledge.similar(f.statement)[0];
    if (known && known.similarity > KNOWN_SIMILARITY) {
      run.findingsRejected.push({
        category: f.category,
        statement: f.statement,
        reason: `already known: ${known.doc.id}`,
      });
      seen.set(known.doc.id, { at: job.requestedAt, by: `nightly run ${job.jobId}` });
      continue;
    }
    const doc = findingDocument(f, job.jobId, job.requestedAt);
    stored.push({ path: doc.path, markdown: doc.markdown, doc: doc.doc });
    knowledge.add(doc.doc);
    run.stored.push({ path: `Knowledge/${doc.path}`, statement: f.statement });
  }
  run.memoriesStored = run.stored.length;
  return { seen, stored };
}

/** Whether the finding, as the document it would be, repeats a deleted one (its tombstone: lib/forget/tombstone.ts). */
const isBuried = (f: Finding, job: Job, buried: ReadonlyMap<string, Tombstone>) =>
  buried.size > 0 && buriedKeyOf(findingDocument(f, job.jobId, job.requestedAt).doc, buried) !== null;

/** Req R-GRAPH-1's (subject, relationship, object) triples that passed the gates join the relation graph; returns how many edges they name (added or reinforced by this run, on whichever delivery). */
export async function relateFindings(
  job: Job,
  deps: { graph: GraphStore },
  merged: readonly Finding[],
  buried: ReadonlyMap<string, Tombstone>,
): Promise<number> {
  const triples = merged.filter(
    (f) =>
      f.category === 'relationship' &&
      f.subject &&
      f.relationship &&
      f.object &&
      !gateFinding(f) &&
      !isBuried(f, job, buried),
  );
  const edges = await recordRelations(
    job.userId,
    triples.map((f) => ({
      from: f.subject ?? '',
      relation: f.relationship ?? '',
      to: f.object ?? '',
      confidence: FINDING_EDGE_CONFIDENCE[f.confidence],
      provenance: { source: 'nightly' as const, id: job.jobId, turns: f.evidence_turns, at: job.requestedAt },
    })),
    job.requestedAt,
    deps.graph,
  );
  return edges.length;
}
