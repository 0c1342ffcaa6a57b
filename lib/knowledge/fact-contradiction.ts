/**
 * A promoted Knowledge fact contradicted (req R-TIER-8, as tier entries are in
 * lib/tiers/contradiction.ts): a batch staged a correction of it, or a person said it is
 * wrong. The fact loses the tier policy's `contradictionCost` of its confidence; below the
 * long-term floor it is demoted — served as a short-term item (lib/items/source-items.ts)
 * until a correction, revert, edit or restore changes it. Its text is unchanged: what is
 * right instead is the correction's to say, once promoted (lib/knowledge/correction.ts).
 *
 * The contradiction is a change in the fact's history (the confidence before it), so the
 * revert that undoes a correction undoes it too; the same evidence counts once, so a
 * redelivered batch costs nothing more. Pure: the caller stores what these return.
 */
import type { KnowledgeChange, KnowledgeDoc } from './knowledge.js';

export interface FactContradiction {
  /** The evidence: a staged correction's file (`Knowledge_staging/…`), or what a person named. */
  by: string;
  at: string;
  /** Confidence lost (the tier policy's `contradictionCost`). */
  cost: number;
  /** Below this the fact is demoted (the tier policy's long-term floor). */
  floor: number;
  note?: string | undefined;
}

/** The confidence a contradiction leaves. */
export const loweredConfidence = (confidence: number, cost: number): number =>
  Math.round(Math.max(0, confidence - cost) * 100) / 100;

const DEMOTED = 'demoted';

/** The contradiction this evidence made, if it counted already. */
export const contradictionBy = (doc: KnowledgeDoc, by: string): KnowledgeChange | undefined =>
  doc.history?.find((h) => h.change === 'contradiction' && h.by === by);

/** Whether that contradiction demoted the fact: its reason's first part (before any note) says so. */
export const demotedBy = (change: KnowledgeChange): boolean =>
  change.reason?.split('; ')[0]?.endsWith(`: ${DEMOTED}`) ?? false;

/** Whether this evidence counted against the fact already. */
export const hasContradicted = (doc: KnowledgeDoc, by: string): boolean => contradictionBy(doc, by) !== undefined;

/** The fact contradicted; null when this evidence counted already. */
export function contradictFact(doc: KnowledgeDoc, c: FactContradiction): KnowledgeDoc | null {
  if (hasContradicted(doc, c.by)) return null;
  const confidence = loweredConfidence(doc.confidence, c.cost);
  const demote = confidence < c.floor && doc.demotedAt === undefined;
  const why = `confidence ${doc.confidence} → ${confidence}${demote ? ` < ${c.floor}, the long-term floor: ${DEMOTED}` : ''}`;
  const entry: KnowledgeChange = {
    at: c.at,
    change: 'contradiction',
    by: c.by,
    text: doc.text,
    confidence: doc.confidence,
    reason: c.note ? `${why}; ${c.note}` : why,
    ...(doc.demotedAt ? { demotedAt: doc.demotedAt } : {}),
  };
  return {
    ...doc,
    confidence,
    // Decay and a later sighting go on from the lowered confidence (knowledge-hygiene.ts).
    baseConfidence: confidence,
    ...(demote ? { demotedAt: c.at } : {}),
    history: [...(doc.history ?? []), entry],
  };
}

/** Whether the fact's latest change is a contradiction (what undoing a contradiction reverts). */
export const lastChangeIsContradiction = (doc: KnowledgeDoc): boolean =>
  doc.history?.at(-1)?.change === 'contradiction';
