/**
 * Periodic context summaries of req R-SUM: after inactivity (or when a session closes, or
 * on request), the model is asked "Write a concise summary of the current context." and
 * the instruction and the answer are stored as a normal turn pair — one markdown document
 * holding the system turn and the assistant turn (`summaryDocument`) — visible to the user
 * and soft-deletable (deleted=true; never removed, never returned by search again).
 */
import type { TurnSaved } from '../../events/turn-saved.js';
import { assembleBatch } from '../batches/batch-assembly.js';
import { estimateTokens } from '../kernel/text.js';
import { renderFrontMatter } from '../kernel/front-matter.js';
import { summaryDocKey } from '../kernel/memory-paths.js';

/** Summary settings (req R-SUM), per stage with per-user overrides. */
export interface SummarySettings {
  enabled: boolean;
  prompt: string;
  maxTokens: number;
}

export const DEFAULT_SUMMARY_PROMPT = 'Write a concise summary of the current context.';
export const defaultSummarySettings: SummarySettings = {
  enabled: true,
  prompt: DEFAULT_SUMMARY_PROMPT,
  maxTokens: 2000,
};

export const SUMMARY_CONTEXT_PREAMBLE =
  'You are the memory of an AI assistant. This is the current context of your conversation with the user, oldest first:';

/** The preamble when the session's previous summary is carried forward (seed 003: "everything currently in working context"). */
export const SUMMARY_CARRIED_PREAMBLE =
  'You are the memory of an AI assistant. This is the current context of your conversation with the user: the summary written earlier in this session, then the turns since, oldest first. Summarise all of it:';

/**
 * Longest previous summary carried into the next one, in characters (≈ 500 tokens at 4 a
 * token, `estimateTokens`): a "concise summary" is well under it (the offline model's run to
 * 300–600 characters), so a normal one travels whole, while one written to the 2,000-token
 * cap of req R-SUM-3 (or edited long) costs at most a quarter of that on every later summary of
 * its session. The carried text comes out of the turns' budget, so the context stays within it.
 */
export const MAX_CARRIED_SUMMARY_CHARS = 2_000;

/** The session's summary before this one, carried forward: its id, the turns it stands for, its text (as a person may have edited it). */
export interface CarriedSummary {
  id: string;
  sourceTurns: readonly number[];
  text: string;
}

/** A carried summary's text within MAX_CARRIED_SUMMARY_CHARS, cut after its last whole sentence (or word) that fits, saying so. */
export function capCarriedText(text: string): string {
  const flat = text.trim();
  if (flat.length <= MAX_CARRIED_SUMMARY_CHARS) return flat;
  const marker = ' […]';
  const head = flat.slice(0, MAX_CARRIED_SUMMARY_CHARS - marker.length);
  const end = Math.max(head.lastIndexOf('. '), head.lastIndexOf('.\n'), head.lastIndexOf('? '), head.lastIndexOf('! '));
  const cut = end > MAX_CARRIED_SUMMARY_CHARS / 2 ? head.slice(0, end + 1) : head.replace(/\s+\S*$/, '');
  return `${cut}${marker}`;
}

/** The heading a carried summary goes under: the turns it stands for, as the nightly prompt heads a summary (the offline model reads both). */
export const carriedHeading = (sourceTurns: readonly number[]): string =>
  `### Summary of turns ${Math.min(...sourceTurns)}–${Math.max(...sourceTurns)}`;

/**
 * The current context given to the model: the session's previous summary, when there is one
 * (capped: capCarriedText), then the job's turns within what is left of the token budget.
 * `sourceTurns` are the turns the new summary stands for: those it read and those the
 * carried summary stood for, so a forget of any of them finds it (its text carries theirs).
 */
export function summaryContext(
  turns: readonly TurnSaved[],
  budgetTokens: number,
  carried: CarriedSummary | null = null,
): { system: string; included: number[]; sourceTurns: number[] } {
  if (!carried || carried.sourceTurns.length === 0) {
    const batch = assembleBatch(turns, budgetTokens);
    return {
      system: `${SUMMARY_CONTEXT_PREAMBLE}\n\n${batch.document}`,
      included: batch.included,
      sourceTurns: batch.included,
    };
  }
  const block = `${carriedHeading(carried.sourceTurns)}\n${capCarriedText(carried.text)}`;
  const batch = assembleBatch(turns, Math.max(1, budgetTokens - estimateTokens(block)));
  const sourceTurns = [...new Set([...carried.sourceTurns, ...batch.included])].sort((a, b) => a - b);
  return {
    system: `${SUMMARY_CARRIED_PREAMBLE}\n\n${block}\n\n${batch.document}`,
    included: batch.included,
    sourceTurns,
  };
}

export interface SummaryPair {
  userId: string;
  /** The job id, e.g. `summary-12-18`. */
  id: string;
  kind: string;
  trigger: string;
  createdAt: string;
  /** The turns the summary stands for: those it read, and those of the summary it carried forward (`carried`). */
  sourceTurns: number[];
  /** The session of its newest turn (absent from summaries written before summaries carried their session's previous one). */
  sessionId?: string;
  /** The id of the session's previous summary whose text it carried forward (seed 003: the whole working context), if any. */
  carried?: string;
  prompt: string;
  text: string;
  modelId: string;
  inputTokens: number;
  outputTokens: number;
  deleted: boolean;
  /** The pair's one document, rendered from its record (`key` is where older pairs kept it in S3; it is no longer stored). */
  document: { key: string; markdown: string };
}

/** What the pair's document is rendered from: its record (the DynamoDB item holds every field). */
export type SummaryRecord = Omit<SummaryPair, 'document'> & { edited?: number };

/** The turns' headings in a pair's document: the instruction under the first, the answer under the second. */
export const SUMMARY_TURN_HEADINGS = { system: '## system', assistant: '## assistant' } as const;

/**
 * The pair as one markdown document (one S3 PUT, not two): front matter naming the
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
    ...(p.carried ? { carried: p.carried } : {}),
    deleted: p.deleted,
    model: p.modelId,
    ...(p.edited ? { edited: p.edited } : {}),
  };
  return renderFrontMatter(
    meta,
    `${SUMMARY_TURN_HEADINGS.system}\n\n${p.prompt}\n\n${SUMMARY_TURN_HEADINGS.assistant}\n\n${p.text}`,
  );
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
