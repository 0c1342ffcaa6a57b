/**
 * Corrections applied to the Knowledge they target (req R-PRO-4's
 * `corrections`, its drift guard in quality-gates.ts). A staged correction that is promoted
 * — by recurrence or by a reviewer — changes its target document instead of becoming a
 * document of its own:
 *
 * - the target's text becomes the correction's `what_changed` (the model is asked for the
 *   fact as it should now read), and its confidence moves by `new_confidence_hint`;
 * - the text and confidence it had are kept in the document's `history`, newest last, with
 *   who changed it; a correction already in the history is not applied twice (a redelivered
 *   batch, a second reviewer);
 * - `revertLatest` undoes the latest change, and is itself a change in the history, so it
 *   can be undone the same way.
 *
 * A corrected fact counts as verified at the correction's time (knowledge-hygiene.ts decays
 * from there). Pure: the caller stores what these return.
 */
import { type KnowledgeChange, type KnowledgeDoc, summarise } from './knowledge.js';
import { MAX_PROMOTED_CONFIDENCE } from './promotion.js';

export type ConfidenceHint = 'higher' | 'lower' | 'same';

/** How far one correction moves the target's confidence, and the floor it never goes under. */
export const HINT_STEP = 0.1;
export const MIN_CORRECTED_CONFIDENCE = 0.1;

export interface CorrectionInput {
  /** The correction's staged file, `Knowledge_staging/Corrections/…`: its identity in the history. */
  by: string;
  text: string;
  hint: ConfidenceHint;
  at: string;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function hintedConfidence(confidence: number, hint: ConfidenceHint): number {
  const step = hint === 'higher' ? HINT_STEP : hint === 'lower' ? -HINT_STEP : 0;
  return round2(Math.min(MAX_PROMOTED_CONFIDENCE, Math.max(MIN_CORRECTED_CONFIDENCE, confidence + step)));
}

/** The hint a staged correction carries in its front matter (`same` when absent or unknown). */
export function hintOf(meta: Record<string, unknown>): ConfidenceHint {
  const hint = meta.new_confidence_hint;
  return hint === 'higher' || hint === 'lower' ? hint : 'same';
}

/** Whether this correction is in the document's history already. */
export const hasApplied = (doc: KnowledgeDoc, by: string): boolean =>
  (doc.history ?? []).some((h) => h.change === 'correction' && h.by === by);

function changed(doc: KnowledgeDoc, to: { text: string; confidence: number }, entry: KnowledgeChange): KnowledgeDoc {
  const { prunedAt: _pruned, demotedAt, ...rest } = doc;
  return {
    ...rest,
    text: to.text,
    summary: summarise(to.text),
    confidence: to.confidence,
    baseConfidence: to.confidence,
    verifiedAt: entry.at,
    history: [...(doc.history ?? []), { ...entry, ...(demotedAt ? { demotedAt } : {}) }],
  };
}

/** The target as the correction leaves it; unchanged when the correction is applied already. */
export function applyCorrection(doc: KnowledgeDoc, correction: CorrectionInput): KnowledgeDoc {
  if (hasApplied(doc, correction.by)) return doc;
  const entry: KnowledgeChange = {
    at: correction.at,
    change: 'correction',
    by: correction.by,
    text: doc.text,
    confidence: doc.confidence,
  };
  // What this correction cost the fact when it was staged (fact-contradiction.ts) is not charged to its new text.
  const contradicted = doc.history?.find((h) => h.change === 'contradiction' && h.by === correction.by);
  const from = contradicted?.confidence ?? doc.confidence;
  return changed(doc, { text: correction.text, confidence: hintedConfidence(from, correction.hint) }, entry);
}

/** The document with its latest change undone, or null when it was never changed. */
export function revertLatest(doc: KnowledgeDoc, by: string, at: string, reason?: string): KnowledgeDoc | null {
  const latest = doc.history?.at(-1);
  if (!latest) return null;
  const entry: KnowledgeChange = {
    at,
    change: 'revert',
    by,
    text: doc.text,
    confidence: doc.confidence,
    ...(reason ? { reason } : {}),
  };
  const reverted = changed(doc, { text: latest.text, confidence: latest.confidence }, entry);
  return latest.demotedAt ? { ...reverted, demotedAt: latest.demotedAt } : reverted;
}

/**
 * A person's new text for the document (itemEdit): its confidence stays, and it counts as
 * verified now (the person vouched for it). The text it had is kept in its history under `at`,
 * the time of the edit's audit entry, so itemRestore can find it.
 */
export function applyEdit(
  doc: KnowledgeDoc,
  edit: { text: string; by: string; at: string; reason?: string | undefined },
): KnowledgeDoc {
  const entry: KnowledgeChange = {
    at: edit.at,
    change: 'edit',
    by: edit.by,
    text: doc.text,
    confidence: doc.confidence,
    ...(edit.reason ? { reason: edit.reason } : {}),
  };
  return changed(doc, { text: edit.text, confidence: doc.confidence }, entry);
}

/**
 * The document with the text back that its edit (or restore) at `editAt` replaced, or null when
 * its history has no edit or restore at that time. The restore is itself a change in the
 * history (the text it replaced, under `at`), so it can be restored away the same way.
 */
export function restoreEdit(
  doc: KnowledgeDoc,
  editAt: string,
  restore: { by: string; at: string; reason?: string | undefined },
): KnowledgeDoc | null {
  const edit = doc.history?.find((h) => h.at === editAt && (h.change === 'edit' || h.change === 'restore'));
  if (!edit) return null;
  const entry: KnowledgeChange = {
    at: restore.at,
    change: 'restore',
    by: restore.by,
    text: doc.text,
    confidence: doc.confidence,
    ...(restore.reason ? { reason: restore.reason } : {}),
  };
  return changed(doc, { text: edit.text, confidence: doc.confidence }, entry);
}

/** The document's markdown after a change: its front matter kept, with the new confidence and history, and the new body. */
export function changedMeta(meta: Record<string, unknown>, doc: KnowledgeDoc): Record<string, unknown> {
  return { ...meta, confidence: doc.confidence, changed_at: doc.history?.at(-1)?.at, history: doc.history ?? [] };
}
