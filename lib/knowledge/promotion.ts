/**
 * The promotion lifecycle of req R-PRO: after each batch, a staged item similar
 * (BM25 > 0.7) to one of the batch's new outputs gains a promotion; at 2 it moves to
 * Knowledge/. A new output that recurs in a staged item reinforces it instead of being
 * staged a second time, so one piece of knowledge has one staged file.
 */
import { renderFrontMatter } from '../kernel/front-matter.js';
import type { KnowledgeDoc } from './knowledge.js';
import { summarise } from './knowledge.js';
import { KnowledgeSearch } from './knowledge-search.js';
import type { StagedDocument, StagedKind } from './staging.js';

export const PROMOTION_SIMILARITY = 0.7;
export const PROMOTIONS_TO_KNOWLEDGE = 2;
/** Each recurrence adds this to the confidence a document is promoted with (capped). */
export const RECURRENCE_CONFIDENCE_STEP = 0.05;
export const MAX_PROMOTED_CONFIDENCE = 0.95;

/** A staged document as stored (the staging area's record of it). */
export interface StagedRecord {
  path: string;
  kind: StagedKind;
  title: string;
  category: string;
  text: string;
  confidence: number;
  sourceTurns: number[];
  batchId: string;
  stagedAt: string;
  meta: Record<string, unknown>;
  body: string;
  /** Batches that reinforced it, in order; promotion_count is its length. */
  promotedBy: string[];
  /** `discarded`: a reviewer turned it down; it is kept so that it never comes back. */
  status: 'staged' | 'promoted' | 'discarded';
  knowledgePath?: string;
  review?: { decision: 'promoted' | 'discarded'; by: string; at: string; reason?: string };
}

export interface Suppression {
  doc: StagedDocument;
  /** The discarded record it repeats. */
  discarded: StagedRecord;
  similarity: number;
}

export interface Reinforcement {
  doc: StagedDocument;
  staged: StagedRecord;
  similarity: number;
}

/**
 * Split the batch's new documents into those that recur in an earlier batch's staged
 * record (each record reinforced at most once per batch) and those to stage.
 */
export function findRecurrences(
  staged: readonly StagedRecord[],
  fresh: readonly StagedDocument[],
  batchId: string,
): { reinforcements: Reinforcement[]; toStage: StagedDocument[]; suppressed: Suppression[] } {
  const earlier = staged.filter((s) => s.batchId !== batchId);
  // Stemmed, irregular forms at their base: a fact a model words again ("bought" for "buys",
  // "hospitals" for "hospital") still recurs; measured on reworded and same-topic pairs (BENCHMARKS.md).
  const index = new KnowledgeSearch(
    earlier.map((s) => ({ ...s, id: s.path })),
    { stem: true, baseForms: true },
  );
  const used = new Set<string>();
  const reinforcements: Reinforcement[] = [];
  const toStage: StagedDocument[] = [];
  const suppressed: Suppression[] = [];
  for (const doc of fresh) {
    const match = index
      .similar(doc.text, doc.title)
      .find((m) => m.similarity > PROMOTION_SIMILARITY && m.doc.kind === doc.kind && !used.has(m.doc.path));
    if (match?.doc.status === 'discarded') {
      // A reviewer discarded this piece of knowledge: it is neither staged again nor promoted.
      suppressed.push({ doc, discarded: match.doc, similarity: match.similarity });
    } else if (match) {
      used.add(match.doc.path);
      reinforcements.push({ doc, staged: match.doc, similarity: match.similarity });
    } else toStage.push(doc);
  }
  return { reinforcements, toStage, suppressed };
}

/** Where a promoted record goes under Knowledge/: its staged name without the batch suffix, unless taken. */
export function knowledgePathFor(record: Pick<StagedRecord, 'path'>, taken: ReadonlySet<string>): string {
  const plain = record.path.replace(/--[^/]+\.md$/, '.md');
  return taken.has(plain) ? record.path : plain;
}

/** The Knowledge document a staged record becomes. */
export function promotedDocument(
  record: StagedRecord,
  knowledgePath: string,
  promotedAt: string,
): { markdown: string; doc: KnowledgeDoc } {
  const confidence = Math.min(
    MAX_PROMOTED_CONFIDENCE,
    record.confidence + RECURRENCE_CONFIDENCE_STEP * record.promotedBy.length,
  );
  const meta = {
    ...record.meta,
    promotion_count: record.promotedBy.length,
    promoted_by: record.promotedBy,
    promoted_at: promotedAt,
    confidence,
  };
  return {
    markdown: renderFrontMatter(meta, record.body),
    doc: {
      id: knowledgePath,
      title: record.title,
      text: record.text,
      category: record.category,
      confidence,
      sourceTurns: record.sourceTurns,
      summary: summarise(record.text),
      promotedAt,
    },
  };
}

/** The staged document's front matter keys in the order staging writes them (stagedDocuments); the rest follow by name. */
const STAGED_META_ORDER = [
  'kind',
  'title',
  'category',
  'staged_at',
  'batch_id',
  'promotion_count',
  'source_turns',
  'confidence',
];

/**
 * The staged document with its current promotion count, rendered from its record: the review
 * list serves it and the store writes it under Knowledge_staging/ (lib/knowledge/knowledge-store.adapter.ts).
 * A DynamoDB map is an unordered collection of name-value pairs
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes.Document.Map),
 * so the front matter is put back in staging's order and the maps inside it in name order: one
 * record renders the same bytes however it was read, and a rewrite of its object is idempotent.
 */
export function restagedMarkdown(record: StagedRecord): string {
  const meta: Record<string, unknown> = {
    ...record.meta,
    promotion_count: record.promotedBy.length,
    promoted_by: record.promotedBy,
  };
  const rank = (k: string) => (STAGED_META_ORDER.includes(k) ? STAGED_META_ORDER.indexOf(k) : STAGED_META_ORDER.length);
  const keys = Object.keys(meta).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return renderFrontMatter(Object.fromEntries(keys.map((k) => [k, byName(meta[k])])), record.body);
}

/** A value with the keys of every map in it in name order. */
function byName(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(byName);
  if (value === null || typeof value !== 'object') return value;
  const map = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(map)
      .sort()
      .map((k) => [k, byName(map[k])]),
  );
}
