/**
 * Periodic context summaries of req R-SUM: after inactivity (or when a session closes, or
 * on request), the model is asked "Write a concise summary of the current context." and
 * the instruction and the answer are stored as a normal turn pair — one markdown document
 * holding the system turn and the assistant turn (`summaryDocument`) — visible to the user
 * and soft-deletable (deleted=true; never removed, never returned by search again).
 */
import type { TurnSaved } from '../../events/turn-saved.js';
import { assembleBatch } from './batch-assembly.js';
import { renderFrontMatter } from './front-matter.js';
import { summaryDocKey } from './memory-paths.js';

/** Summary settings (req R-SUM), per stage with per-user overrides. */
export interface SummarySettings {
  enabled: boolean;
  prompt: string;
  maxTokens: number;
}

export const DEFAULT_SUMMARY_PROMPT = 'Write a concise summary of the current context.';
export const defaultSummarySettings: SummarySettings = { enabled: true, prompt: DEFAULT_SUMMARY_PROMPT, maxTokens: 2000 };

export const SUMMARY_CONTEXT_PREAMBLE =
  'You are the memory of an AI assistant. This is the current context of your conversation with the user, oldest first:';

/** The current context given to the model: the job's turns within the token budget. */
export function summaryContext(turns: readonly TurnSaved[], budgetTokens: number): { system: string; included: number[] } {
  const batch = assembleBatch(turns, budgetTokens);
  return { system: `${SUMMARY_CONTEXT_PREAMBLE}\n\n${batch.document}`, included: batch.included };
}

export interface SummaryPair {
  userId: string;
  /** The job id, e.g. `summary-12-18`. */
  id: string;
  kind: string;
  trigger: string;
  createdAt: string;
  sourceTurns: number[];
  prompt: string;
  text: string;
  modelId: string;
  inputTokens: number;
  outputTokens: number;
  deleted: boolean;
  /** The pair's one document, rendered from its record (`key` is where pairs written before issue 19 kept it in S3; since then it is not stored). */
  document: { key: string; markdown: string };
}

/** What the pair's document is rendered from: its record (the DynamoDB item holds every field). */
export type SummaryRecord = Omit<SummaryPair, 'document'> & { edited?: number };

/** The turns' headings in a pair's document: the instruction under the first, the answer under the second. */
export const SUMMARY_TURN_HEADINGS = { system: '## system', assistant: '## assistant' } as const;

/**
 * The pair as one markdown document (issue 19: one S3 PUT, not two): front matter naming the
 * summary, then the system turn and the assistant turn, each under its heading. Rendered
 * whole from the record, so an edit or a deletion rewrites it without reading it first.
 */
export function summaryDocument(p: SummaryRecord): string {
  const meta = {
    type: 'summary',
    summary_id: p.id,
    kind: p.kind,
    trigger: p.trigger,
    created_at: p.createdAt,
    source_turns: p.sourceTurns,
    deleted: p.deleted,
    model: p.modelId,
    ...(p.edited ? { edited: p.edited } : {}),
  };
  return renderFrontMatter(meta, `${SUMMARY_TURN_HEADINGS.system}\n\n${p.prompt}\n\n${SUMMARY_TURN_HEADINGS.assistant}\n\n${p.text}`);
}

/**
 * Longest summary kept, in UTF-16 units: about four times what the default budget of 2000
 * tokens yields (≈4 characters a token), at most 128 KB of UTF-8. The pair's record holds
 * the text and DynamoDB refuses items over 400 KB, so an answer without bound (a model told
 * to "write forever") would fail the job on every delivery. A longer answer is cut here,
 * and says so.
 */
export const MAX_SUMMARY_CHARS = 32_000;

/** The summary text within MAX_SUMMARY_CHARS, never ending in half a surrogate pair. */
export function capSummaryText(text: string): string {
  if (text.length <= MAX_SUMMARY_CHARS) return text;
  const marker = '… [summary cut at its length cap]';
  let cut = text.slice(0, MAX_SUMMARY_CHARS - marker.length);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}${marker}`;
}

/** The pair and its document, `users/{u}/summaries/{id}.md`; the text capped (capSummaryText). */
export function summaryPair(input: Omit<SummaryPair, 'document'>): SummaryPair {
  const p = { ...input, text: capSummaryText(input.text) };
  return { ...p, document: { key: summaryDocKey(p.userId, p.id), markdown: summaryDocument(p) } };
}
