/**
 * Hygiene of promoted Knowledge facts (req R-GRAPH: "confidence
 * decay for unverified old edges and facts", "pruning as soft delete with a recovery
 * window"), the same rules as the relation graph's edges (lib/knowledge/confidence-decay.ts):
 *
 * - a fact is verified when something sees it again: a batch's new fact the dedup gate
 *   finds already in Knowledge, or a nightly finding "already known". Its confidence goes
 *   back to what it was when last verified, at the time of the turns that saw it (input
 *   times, so replays agree); a pruned fact seen again comes back;
 * - the nightly sweep decays what stayed unverified past DECAY_AFTER_DAYS (writing the
 *   confidence when it has fallen DECAY_WRITE_STEP below the stored one), prunes it below
 *   PRUNE_BELOW (hidden from search and retrieve, still in the index and on S3, restorable
 *   through the API), and removes it when it stayed pruned past RECOVERY_DAYS;
 * - every change is logged with its reason in the user's hygiene log (the graph's).
 *
 * Pure: the caller stores what these return. Facts a person stated through the API are
 * memory items, not Knowledge documents, and are never touched here.
 */
import { DECAY_WRITE_STEP, decayed, PRUNE_BELOW, pastRecovery, RECOVERY_DAYS } from './confidence-decay.js';
import type { KnowledgeDoc } from './knowledge.js';
import type { GraphLogEntry } from '../graph/relation-graph.js';

export interface FactHygieneResult {
  /** Every doc that stays in the index, changed or not, in the input order. */
  docs: KnowledgeDoc[];
  /** Paths removed for good (pruned past the recovery window): their documents go too. */
  removed: string[];
  log: GraphLogEntry[];
}

const baseOf = (d: KnowledgeDoc) => d.baseConfidence ?? d.confidence;
const verifiedAtOf = (d: KnowledgeDoc) => d.verifiedAt ?? d.promotedAt;

/** One sweep over a user's Knowledge at `now`; a rerun at the same `now` changes nothing. */
export function factHygiene(docs: readonly KnowledgeDoc[], now: Date): FactHygieneResult {
  const at = now.toISOString();
  const log: GraphLogEntry[] = [];
  const removed: string[] = [];
  const kept: KnowledgeDoc[] = [];
  for (const d of docs) {
    if (d.prunedAt) {
      if (pastRecovery(d.prunedAt, now)) {
        removed.push(d.id);
        log.push({
          at,
          action: 'remove',
          fact: d.id,
          detail: `pruned on ${d.prunedAt.slice(0, 10)}, not restored within ${RECOVERY_DAYS} days`,
        });
      } else kept.push(d);
      continue;
    }
    const confidence = decayed(baseOf(d), verifiedAtOf(d), now);
    // Decay is written in steps of DECAY_WRITE_STEP (as the tier entries'), not each 0.01 it
    // moves: every such write rewrote the user's whole index snapshot (an S3 PUT), logged an
    // entry and marked the fact for the search index, night after night.
    if (confidence >= PRUNE_BELOW && d.confidence - confidence < DECAY_WRITE_STEP) {
      kept.push(d);
      continue;
    }
    const since = verifiedAtOf(d).slice(0, 10);
    if (confidence < PRUNE_BELOW) {
      kept.push({ ...d, baseConfidence: baseOf(d), confidence, prunedAt: at });
      log.push({
        at,
        action: 'prune',
        fact: d.id,
        detail: `confidence ${confidence} below ${PRUNE_BELOW}, unverified since ${since}; restorable for ${RECOVERY_DAYS} days`,
      });
    } else {
      kept.push({ ...d, baseConfidence: baseOf(d), confidence });
      log.push({
        at,
        action: 'decay',
        fact: d.id,
        detail: `confidence ${d.confidence} → ${confidence}, unverified since ${since}`,
      });
    }
  }
  return { docs: kept, removed, log };
}

/**
 * Facts seen again at `at` (path → when and by what): confidence back to its base, verified
 * then, un-pruned. Only a newer sighting counts (a replayed older batch changes nothing).
 * Returns the docs (all, in order), and the paths that changed; a pruned fact's return is logged.
 */
export function verifyFacts(
  docs: readonly KnowledgeDoc[],
  seen: ReadonlyMap<string, { at: string; by: string }>,
): { docs: KnowledgeDoc[]; verified: string[]; log: GraphLogEntry[] } {
  const verified: string[] = [];
  const log: GraphLogEntry[] = [];
  const out = docs.map((d) => {
    const s = seen.get(d.id);
    if (!s || !(Date.parse(s.at) > Date.parse(verifiedAtOf(d)))) return d;
    verified.push(d.id);
    const { prunedAt, ...rest } = d;
    if (prunedAt) log.push({ at: s.at, action: 'restore', fact: d.id, detail: `seen again by ${s.by}` });
    return { ...rest, baseConfidence: baseOf(d), confidence: baseOf(d), verifiedAt: s.at };
  });
  return { docs: out, verified, log };
}

/** A pruned fact back, verified at `at` (a person restored it). */
export function restoreFact(doc: KnowledgeDoc, at: string): KnowledgeDoc {
  const { prunedAt: _restored, ...rest } = doc;
  return { ...rest, baseConfidence: baseOf(doc), confidence: baseOf(doc), verifiedAt: at };
}
