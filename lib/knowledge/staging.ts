/**
 * The staging area of req R-STG: surviving items become markdown documents with YAML
 * front matter under the user's Knowledge_staging/, invisible to search until promoted.
 * File names carry the batch id, so a redelivered job rewrites the same keys.
 */
import { MAX_ATTRIBUTE_BYTES, utf8Bytes } from '../../events/common.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { confidenceFor } from './confidence.js';
import { blendSourceReliability, normaliseDomain } from '../sources/source-reliability.js';
import { renderFrontMatter } from '../kernel/front-matter.js';
import type { BatchAnswer } from '../batches/batch-answer.js';
import { slugify } from '../kernel/text.js';

export type StagedKind = 'fact' | 'correction' | 'connection' | 'open_question';

export interface StagedDocument {
  /** Path relative to Knowledge_staging/ (and to Knowledge/ once promoted, minus the batch suffix). */
  path: string;
  kind: StagedKind;
  title: string;
  /** The folder: Facts, Concepts, Patterns, Corrections, Connections or Questions. */
  category: string;
  confidence: number;
  sourceTurns: number[];
  /** What similarity is computed on: the item's own words. */
  text: string;
  meta: Record<string, unknown>;
  body: string;
  markdown: string;
}

export interface StagingContext {
  batchId: string;
  stagedAt: string;
  turns: ReadonlyMap<number, TurnSaved>;
  /** Reliability of the domains the turns read successfully (req R-SRC-2), blended into confidence. */
  sourceReliability?: ReadonlyMap<string, number>;
}

/** The domains a turn's content came from: its sources that were read successfully. */
export function domainsRead(turn: Pick<TurnSaved, 'sources'> | undefined): string[] {
  return [
    ...new Set((turn?.sources ?? []).filter((s) => s.outcome === 'success').map((s) => normaliseDomain(s.domain))),
  ];
}

const basename = (path: string) => (path.split('/').pop() ?? path).replace(/\.md$/, '');

export function stagedDocuments(passed: BatchAnswer, ctx: StagingContext): StagedDocument[] {
  const docs: StagedDocument[] = [];
  const add = (
    kind: StagedKind,
    folder: string,
    title: string,
    text: string,
    sourceTurns: number[],
    extra: Record<string, unknown>,
  ) => {
    const doc = stagedDocument(ctx, { kind, folder, title, text, sourceTurns, extra });
    // Two items of one batch with one title are one document: the first (the model's order)
    // is kept, so which one is staged never depends on which of two writes lands first.
    if (!docs.some((d) => d.path === doc.path)) docs.push(doc);
  };

  for (const f of passed.new_facts) {
    add('fact', f.category, f.title, f.content, f.source_turns, { related_existing: f.related_existing });
  }
  for (const c of passed.corrections) {
    add('correction', 'Corrections', `correction of ${basename(c.existing_file)}`, c.what_changed, c.source_turns, {
      existing_file: c.existing_file,
      new_confidence_hint: c.new_confidence_hint,
    });
  }
  for (const c of passed.connections) {
    add(
      'connection',
      'Connections',
      `${basename(c.file_a)} and ${basename(c.file_b)}`,
      c.relationship,
      c.source_turns,
      {
        file_a: c.file_a,
        file_b: c.file_b,
      },
    );
  }
  for (const q of passed.open_questions) {
    add(
      'open_question',
      'Questions',
      q.question,
      q.why_unresolved ? `${q.question}\n\nWhy unresolved: ${q.why_unresolved}` : q.question,
      q.source_turns,
      {},
    );
  }
  return docs;
}

/** One passed item before it is a document: its kind, folder, title, words, cited turns and kind-specific front matter. */
interface StagedItem {
  kind: StagedKind;
  folder: string;
  title: string;
  text: string;
  sourceTurns: number[];
  extra: Record<string, unknown>;
}

/** What a staged document's front matter begins with: its record's own attributes, said again (the store keeps them once: knowledge-store.ts). */
export function stagedMetaHead(r: {
  kind: StagedKind;
  title: string;
  category: string;
  stagedAt: string;
  batchId: string;
  sourceTurns: number[];
  confidence: number;
}): Record<string, unknown> {
  return {
    kind: r.kind,
    title: r.title,
    category: r.category,
    staged_at: r.stagedAt,
    batch_id: r.batchId,
    promotion_count: 0,
    source_turns: r.sourceTurns,
    confidence: r.confidence,
  };
}

/** A staged document's body: its title as a heading, then its text. */
export const stagedBody = (title: string, text: string): string => `# ${title}\n\n${text}`;

/** One item as a staged document: confidence from its cited turns and their sources, front matter, markdown. */
function stagedDocument(
  ctx: StagingContext,
  { kind, folder, title, text, sourceTurns, extra }: StagedItem,
): StagedDocument {
  const cited = sourceTurns.map((t) => ctx.turns.get(t));
  const domains = [...new Set(cited.flatMap(domainsRead))];
  const reliability = Object.fromEntries(
    domains.flatMap((d) => (ctx.sourceReliability?.has(d) ? [[d, ctx.sourceReliability.get(d) as number]] : [])),
  );
  const confidence = blendSourceReliability(
    confidenceFor(cited.map((t) => ({ validation: t?.signals?.validation, quality: t?.signals?.quality }))),
    Object.values(reliability),
  );
  const attributes = citedAttributes(cited);
  const meta = {
    ...stagedMetaHead({
      kind,
      title,
      category: folder,
      stagedAt: ctx.stagedAt,
      batchId: ctx.batchId,
      sourceTurns,
      confidence,
    }),
    ...extra,
    ...(Object.keys(attributes).length > 0 ? { source_attributes: attributes } : {}),
    ...(Object.keys(reliability).length > 0 ? { source_reliability: reliability } : {}),
  };
  const path = `${folder}/${slugify(title)}--${ctx.batchId}.md`;
  const body = stagedBody(title, text);
  return {
    path,
    kind,
    title,
    category: folder,
    confidence,
    sourceTurns,
    text,
    meta,
    body,
    markdown: renderFrontMatter(meta, body),
  };
}

/**
 * Each cited turn's attributes, while they fit MAX_ATTRIBUTE_BYTES in all: twenty cited
 * turns of the largest attributes would make a record DynamoDB refuses on every delivery.
 */
function citedAttributes(cited: ReadonlyArray<TurnSaved | undefined>): Record<string, Record<string, string>> {
  const attributes: Record<string, Record<string, string>> = {};
  let bytes = 0;
  for (const t of cited) {
    if (!t?.attributes || String(t.turnId) in attributes) continue;
    const size = Object.entries(t.attributes).reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);
    if (bytes + size > MAX_ATTRIBUTE_BYTES) continue;
    bytes += size;
    attributes[String(t.turnId)] = t.attributes;
  }
  return attributes;
}
