/**
 * The code-enforced quality gates of seed 000 §5 (no model involved). Each gate removes
 * items and says why; the batch log keeps every rejection.
 * Implemented: turn existence, keyword evidence, related file exists (inside the user's
 * own Knowledge/). Still to come (issue 4): BM25 dedup and the drift guard.
 */
import type { TurnSaved } from '../../events/turn-saved.js';
import { safeKnowledgePath } from './memory-paths.js';
import type { ItemCategory, ReflectionOutput } from './reflection-output.js';
import { contentWords } from './text.js';

export type GateName = 'turn_existence' | 'keyword_match' | 'related_file_exists' | 'dedup' | 'drift_guard';

export interface Rejection {
  category: ItemCategory;
  item: string;
  gate: GateName;
  reason: string;
}

export interface GateContext {
  /** Turns of the batch, plus any other indexed turn an item cites. */
  turns: ReadonlyMap<number, TurnSaved>;
  /** Paths (relative to Knowledge/) of the user's existing knowledge documents. */
  knowledgePaths: ReadonlySet<string>;
}

type AnyItem = ReflectionOutput[ItemCategory][number];

const label = (category: ItemCategory, item: AnyItem): string => {
  if ('title' in item) return item.title;
  if ('question' in item) return item.question;
  if ('what_changed' in item) return `${item.existing_file}: ${item.what_changed}`;
  return `${item.file_a} <-> ${item.file_b}`;
};

const evidenceText = (category: ItemCategory, item: AnyItem): string => {
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
export function applyQualityGates(output: ReflectionOutput, ctx: GateContext): { passed: ReflectionOutput; rejections: Rejection[] } {
  const rejections: Rejection[] = [];
  const passed: ReflectionOutput = { new_facts: [], corrections: [], connections: [], open_questions: [] };
  const categories: ItemCategory[] = ['new_facts', 'corrections', 'connections', 'open_questions'];
  for (const category of categories) {
    for (const item of output[category] as AnyItem[]) {
      const rejection = gateItem(category, item, ctx);
      if (rejection) rejections.push(rejection);
      else (passed[category] as AnyItem[]).push(item);
    }
  }
  return { passed, rejections };
}

function gateItem(category: ItemCategory, item: AnyItem, ctx: GateContext): Rejection | null {
  const reject = (gate: GateName, reason: string): Rejection => ({ category, item: label(category, item), gate, reason });

  const missing = item.source_turns.filter((t) => !ctx.turns.has(t));
  if (missing.length > 0) return reject('turn_existence', `source turns not in the turn index: ${missing.join(', ')}`);

  const keywords = new Set(contentWords(evidenceText(category, item)));
  const cited = item.source_turns.map((t) => ctx.turns.get(t)).filter((t): t is TurnSaved => t !== undefined);
  const evidence = cited.some((t) => contentWords(`${t.query} ${t.context ?? ''} ${t.response}`).some((w) => keywords.has(w)));
  if (!evidence) return reject('keyword_match', `no keyword of the item appears in cited turns ${item.source_turns.join(', ')}`);

  for (const path of pathsOf(item)) {
    const safe = safeKnowledgePath(path);
    if (safe === null) return reject('related_file_exists', `path leaves the user's Knowledge folder: ${JSON.stringify(path)}`);
    if (!ctx.knowledgePaths.has(safe)) return reject('related_file_exists', `no such knowledge file: ${safe}`);
  }
  return null;
}
