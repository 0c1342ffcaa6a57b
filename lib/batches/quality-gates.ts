/**
 * The five code-enforced quality gates of req R-GATE (no model involved), in the seed's
 * order: turn existence, keyword match, related file exists (inside the user's own
 * Knowledge/), BM25 dedup against Knowledge, drift guard. Each removes items and says why;
 * the batch log keeps every rejection. Ours besides: `failed_turn` after turn existence, and
 * `transient_data` after keyword match.
 */
import type { TurnSaved } from '../../events/turn-saved.js';
import type { KnowledgeDoc } from '../knowledge/knowledge.js';
import type { KnowledgeSearch } from '../knowledge/knowledge-search.js';
import { safeKnowledgePath } from '../kernel/memory-paths.js';
import type { ItemCategory, BatchAnswer } from './batch-answer.js';
import { contentWords } from '../kernel/text.js';
import { transientData } from '../kernel/transient-data.js';

/**
 * `failed_turn`: every turn the item cites was validated FAIL or RETRY (req R-CAND-3: only
 * knowledge from successful turns is remembered). `deleted`: the item repeats a fact a person
 * deleted (its tombstone, lib/forget/tombstone.ts; req R-DEL-2), checked where items are staged.
 * `transient_data`: the item holds a URL or a price (req R-CAND-2, lib/kernel/transient-data.ts).
 */
export type GateName =
  | 'turn_existence'
  | 'failed_turn'
  | 'keyword_match'
  | 'transient_data'
  | 'related_file_exists'
  | 'dedup'
  | 'drift_guard'
  | 'deleted';

/**
 * Req R-CAND-3 (seed 002's commit rule, "only knowledge from successful turns enters long-term
 * storage"): a turn its agent validated FAIL or RETRY is not mined. APPROVE, REVISE (the answer
 * was revised, then given) and no validation at all (most publishers send none) are not failed.
 */
export const failedTurn = (turn: Pick<TurnSaved, 'signals'> | undefined): boolean =>
  turn?.signals?.validation === 'FAIL' || turn?.signals?.validation === 'RETRY';

export interface Rejection {
  category: ItemCategory;
  item: string;
  gate: GateName;
  reason: string;
  /** Dedup: the Knowledge document (path relative to Knowledge/) the item repeats — which is seen again. */
  existing?: string;
}

export interface GateContext {
  /** Turns of the batch, plus any other indexed turn an item cites. */
  turns: ReadonlyMap<number, TurnSaved>;
  /** The user's promoted Knowledge, searchable (ids are paths relative to Knowledge/). */
  knowledge: KnowledgeSearch<KnowledgeDoc>;
  /** The same documents by path, for the related-file gate and the drift guard. */
  knowledgeDocs: ReadonlyMap<string, KnowledgeDoc>;
}

/** Req R-GATE-5: a new fact this similar to an existing Knowledge document is already known. */
export const DEDUP_THRESHOLD = 0.8;
/** Req R-GATE-6: a fact held with more confidence than this resists a single-turn correction. */
export const DRIFT_GUARD_CONFIDENCE = 0.9;

type AnyItem = BatchAnswer[ItemCategory][number];

const label = (item: AnyItem): string => {
  if ('title' in item) return item.title;
  if ('question' in item) return item.question;
  if ('what_changed' in item) return `${item.existing_file}: ${item.what_changed}`;
  return `${item.file_a} <-> ${item.file_b}`;
};

const evidenceText = (item: AnyItem): string => {
  if ('content' in item) return `${item.title.replace(/_/g, ' ')} ${item.content}`;
  if ('question' in item) return item.question;
  if ('what_changed' in item) return item.what_changed;
  return item.relationship;
};

const pathsOf = (item: AnyItem): string[] => {
  if ('related_existing' in item) return item.related_existing;
  if ('existing_file' in item) return [item.existing_file];
  if ('file_a' in item) return [item.file_a, item.file_b];
  return [];
};

/** Run the gates; returns the surviving output and every rejection. */
export function applyQualityGates(
  output: BatchAnswer,
  ctx: GateContext,
): { passed: BatchAnswer; rejections: Rejection[] } {
  const rejections: Rejection[] = [];
  const passed: BatchAnswer = { new_facts: [], corrections: [], connections: [], open_questions: [] };
  const categories: ItemCategory[] = ['new_facts', 'corrections', 'connections', 'open_questions'];
  for (const category of categories) {
    for (const item of output[category] as AnyItem[]) {
      const gated = gateItem(category, item, ctx);
      if ('gate' in gated) rejections.push(gated);
      else (passed[category] as AnyItem[]).push(gated);
    }
  }
  return { passed, rejections };
}

/** The item that passed (citing only its successful turns), or why not. */
function gateItem(category: ItemCategory, proposed: AnyItem, ctx: GateContext): Rejection | AnyItem {
  const reject = (gate: GateName, reason: string): Rejection => ({ category, item: label(proposed), gate, reason });

  const missing = proposed.source_turns.filter((t) => !ctx.turns.has(t));
  if (missing.length > 0) return reject('turn_existence', `source turns not in the turn index: ${missing.join(', ')}`);

  // The failed turns an item cites are dropped from its evidence; with none left, it is not mined.
  const failed = proposed.source_turns.filter((t) => failedTurn(ctx.turns.get(t)));
  if (failed.length > 0 && failed.length === proposed.source_turns.length)
    return reject('failed_turn', `every cited turn was validated FAIL or RETRY: ${failed.join(', ')}`);
  const item =
    failed.length === 0
      ? proposed
      : { ...proposed, source_turns: proposed.source_turns.filter((t) => !failed.includes(t)) };

  const keywords = new Set(contentWords(evidenceText(item)));
  const cited = item.source_turns.map((t) => ctx.turns.get(t)).filter((t): t is TurnSaved => t !== undefined);
  const evidence = cited.some((t) =>
    contentWords(`${t.query} ${t.context ?? ''} ${t.response}`).some((w) => keywords.has(w)),
  );
  if (!evidence)
    return reject('keyword_match', `no keyword of the item appears in cited turns ${item.source_turns.join(', ')}`);

  const transient = transientData(evidenceText(item));
  if (transient)
    return reject('transient_data', `transient data is not remembered: a ${transient.form} (${transient.excerpt})`);

  for (const path of pathsOf(item)) {
    const safe = safeKnowledgePath(path);
    if (safe === null)
      return reject('related_file_exists', `path leaves the user's Knowledge folder: ${JSON.stringify(path)}`);
    if (!ctx.knowledgeDocs.has(safe)) return reject('related_file_exists', `no such knowledge file: ${safe}`);
  }

  if ('content' in item) {
    const best = ctx.knowledge.similar(item.content, item.title)[0];
    if (best && best.similarity > DEDUP_THRESHOLD) {
      return {
        ...reject(
          'dedup',
          `similar to ${best.doc.id} (BM25 similarity ${best.similarity.toFixed(2)} > ${DEDUP_THRESHOLD})`,
        ),
        existing: best.doc.id,
      };
    }
  }

  if ('existing_file' in item) {
    const path = safeKnowledgePath(item.existing_file) ?? '';
    const doc = ctx.knowledgeDocs.get(path);
    if (doc && doc.confidence > DRIFT_GUARD_CONFIDENCE && item.source_turns.length <= 1) {
      return reject(
        'drift_guard',
        `${path} holds confidence ${doc.confidence} > ${DRIFT_GUARD_CONFIDENCE}; one turn cannot correct it`,
      );
    }
  }
  return item;
}
