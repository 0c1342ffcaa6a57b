/** A promoted Knowledge document as the reflector sees it (its search-index entry). */
import type { SearchableDoc } from './knowledge-search.js';

export interface KnowledgeDoc extends SearchableDoc {
  /** `id` is the path relative to Knowledge/, e.g. `Facts/reef_tank.md`. */
  category: string;
  confidence: number;
  sourceTurns: number[];
  /** First sentences of the text, shown to the model. */
  summary: string;
  promotedAt: string;
  /** The nightly run that stored the document (its findings): a redelivery of the run knows its own. */
  storedBy?: string;
  /**
   * Fact hygiene (lib/knowledge/knowledge-hygiene.ts): the confidence when last verified
   * (absent: `confidence` is it), when that was (absent: `promotedAt`), and when the nightly
   * sweep pruned the fact (soft delete, restorable for RECOVERY_DAYS).
   */
  baseConfidence?: number;
  verifiedAt?: string;
  prunedAt?: string;
  /**
   * When a contradiction took the fact below the long-term floor (lib/knowledge/fact-contradiction.ts): it is
   * served as a short-term item until a correction, revert, edit or restore changes it.
   */
  demotedAt?: string;
  /** Corrections, reverts, edits and restores (lib/knowledge/correction.ts), oldest first: what the text was before each. */
  history?: KnowledgeChange[];
}

export const summarise = (text: string, max = 200): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
};

/** One change of a Knowledge document: what it was before, and who changed it when. */
export interface KnowledgeChange {
  at: string;
  /**
   * `edit`: a person's new text (POST …/memory/items/{id}); `restore`: a person brought back the text an edit or
   * restore replaced; `contradiction`: evidence against the fact lowered its confidence, text unchanged (fact-contradiction.ts).
   */
  change: 'correction' | 'revert' | 'edit' | 'restore' | 'contradiction';
  /** The correction's staged file (`Knowledge_staging/…`), the contradicting evidence, or the person who reverted, edited or restored. */
  by: string;
  /** The text and confidence the document had before this change. */
  text: string;
  confidence: number;
  /** Its demotion before this change (KnowledgeDoc.demotedAt), which reverting the change restores. */
  demotedAt?: string;
  reason?: string;
}
