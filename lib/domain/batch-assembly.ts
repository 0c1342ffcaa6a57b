/**
 * Batch data assembly of seed 000 §3: the batch's turns compiled into one document
 * within a token budget, dropping the oldest turns first when it does not fit.
 */
import type { TurnSaved } from '../../events/turn-saved.js';
import { estimateTokens } from './text.js';

export interface AssembledBatch {
  document: string;
  /** Turns in the document, ascending. */
  included: number[];
  /** Turns left out to keep within the budget (the oldest). */
  omitted: number[];
  tokens: number;
}

export function renderTurnForBatch(turn: TurnSaved): string {
  const lines = [`### Turn ${turn.turnId} — ${turn.timestamp} (session ${turn.sessionId})`, `**User:** ${turn.query}`];
  if (turn.context) lines.push(`**Context:** ${turn.context}`);
  lines.push(`**Agent:** ${turn.response}`);
  return lines.join('\n');
}

/**
 * Compile turns (any order) into the batch document. Whole turns are dropped oldest first
 * until the estimate fits `budgetTokens`; the newest turn is always kept, cut to the budget.
 */
export function assembleBatch(turns: readonly TurnSaved[], budgetTokens = 4000): AssembledBatch {
  const sorted = [...turns].sort((a, b) => a.turnId - b.turnId);
  const rendered = sorted.map((t) => ({ turnId: t.turnId, text: renderTurnForBatch(t) }));
  const omitted: number[] = [];
  const total = () => estimateTokens(rendered.map((r) => r.text).join('\n\n'));
  while (rendered.length > 1 && total() > budgetTokens) {
    const dropped = rendered.shift();
    if (dropped) omitted.push(dropped.turnId);
  }
  const last = rendered[0];
  if (last && rendered.length === 1 && total() > budgetTokens) {
    last.text = `${last.text.slice(0, budgetTokens * 4 - 20)}\n[…truncated]`;
  }
  const document = rendered.map((r) => r.text).join('\n\n');
  return { document, included: rendered.map((r) => r.turnId), omitted, tokens: estimateTokens(document) };
}

/** One existing Knowledge document, as shown to the model so it knows what exists. */
export interface ExistingKnowledge {
  path: string;
  summary: string;
}

export const REFLECTOR_SYSTEM_PROMPT = `You are the batch memory reflector of an AI agent's long-term memory.
You review a batch of recent conversation turns between a user and the agent and report only
differential knowledge worth keeping about the user and their world:
- new_facts: durable facts, concepts or patterns that are NEW (not already in existing knowledge);
- corrections: where the user corrected something that existing knowledge states (cite its file);
- connections: links between two existing knowledge files that these turns reveal;
- open_questions: questions the user raised that stayed unresolved.
Rules: cite every item's source_turns by the turn numbers shown; at most 2 new_facts, 1 correction,
2 connections, 2 open_questions; skip small talk and transient details; paths are relative to
Knowledge/ and must be ones listed under existing knowledge. Report through the record_reflection tool.`;

export function buildReflectorPrompt(batch: AssembledBatch, existing: readonly ExistingKnowledge[]): string {
  const known =
    existing.length === 0
      ? '(none yet)'
      : existing.map((k) => `- ${k.path}: ${k.summary.replace(/\s+/g, ' ').slice(0, 200)}`).join('\n');
  return `## Existing knowledge\n${known}\n\n## Turns to review\n${batch.document}\n`;
}
