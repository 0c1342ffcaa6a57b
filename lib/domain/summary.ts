/**
 * Periodic context summaries of seed 003: after inactivity (or when a session closes, or
 * on request), the model is asked "Write a concise summary of the current context." and
 * the instruction and the answer are stored as a normal turn pair — a system document and
 * an assistant document — visible to the user and soft-deletable (deleted=true; never
 * removed, never returned by search again).
 */
import type { TurnSaved } from '../../events/turn-saved.js';
import { assembleBatch } from './batch-assembly.js';
import { renderFrontMatter } from './front-matter.js';

/** Summary settings (seed 003), per stage with per-user overrides. */
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
  system: { key: string; markdown: string };
  assistant: { key: string; markdown: string };
}

const meta = (p: Omit<SummaryPair, 'system' | 'assistant'>, role: 'system' | 'assistant') => ({
  type: 'reflection',
  role,
  reflection_id: p.id,
  kind: p.kind,
  trigger: p.trigger,
  created_at: p.createdAt,
  source_turns: p.sourceTurns,
  deleted: p.deleted,
  ...(role === 'assistant' ? { model: p.modelId } : {}),
});

/** The two documents of the pair, under `users/{u}/reflections/{id}/`. */
export function summaryPair(p: Omit<SummaryPair, 'system' | 'assistant'>): SummaryPair {
  const base = `users/${p.userId}/reflections/${p.id}`;
  return {
    ...p,
    system: { key: `${base}/system.md`, markdown: renderFrontMatter(meta(p, 'system'), p.prompt) },
    assistant: { key: `${base}/assistant.md`, markdown: renderFrontMatter(meta(p, 'assistant'), p.text) },
  };
}
