/**
 * Weekly reflection (req R-SLP-9): a pass over the week's summaries — batch logs,
 * nightly findings, idle and session summaries — never raw messages.
 */
import * as z from 'zod';
import { callCeiling } from '../model/bedrock-models.js';

export const WeeklyOutputSchema = z.object({
  /** How the user's focus shifted across the week. */
  trajectory: z.string().max(2000).default(''),
  /** Things discussed, then dropped (or newly taken up). */
  topic_drift: z
    .array(z.object({ topic: z.string().min(1).max(200), status: z.enum(['dropped', 'new', 'continuing']) }))
    .max(20)
    .default([]),
  weekly_patterns: z.array(z.string().min(1).max(500)).max(10).default([]),
  unresolved_arcs: z.array(z.string().min(1).max(500)).max(10).default([]),
});
export type WeeklyOutput = z.infer<typeof WeeklyOutputSchema>;

export const WEEKLY_TOOL = {
  name: 'record_weekly_reflection',
  description: 'Record the weekly reflection over the summaries.',
};

export const WEEKLY_SYSTEM_PROMPT = `You are the weekly reflection of an AI agent's long-term memory. You read the week's
summaries of the conversations with one user (not the raw messages) and report: the
trajectory (how their focus shifted), topic drift (topics dropped, new or continuing),
weekly patterns, and unresolved arcs (threads across sessions without conclusion).`;

export interface WeekSummary {
  source: 'batch' | 'nightly' | 'summary';
  at: string;
  text: string;
}

/**
 * The week's summaries in time order, each headed by its source and day. The day, not the
 * instant: the weekly run looks for shifts across days and sessions, the order says
 * which came first within one, and every heading is billed on the call.
 */
export function weeklyPrompt(summaries: readonly WeekSummary[]): string {
  return `## The week's summaries\n${[...summaries]
    .sort((a, b) => a.at.localeCompare(b.at))
    .map((s) => `### ${s.source} — ${s.at.slice(0, 10)}\n${s.text}`)
    .join('\n\n')}\n`;
}

/**
 * The most tokens a weekly call over this prompt can use (`callCeiling`, as the nightly's).
 */
export function weeklyCallCeiling(prompt: string, toolSchema: Record<string, unknown>, maxTokens: number): number {
  return callCeiling({ system: WEEKLY_SYSTEM_PROMPT, prompt, tool: { ...WEEKLY_TOOL, toolSchema } }, maxTokens);
}

/**
 * Req R-SLP-13's weekly budget: the week's summaries, newest first, each kept while the call's
 * ceiling over those kept stays within `budget` — the newest are where the week's trajectory
 * ends and its arcs are still open, while the oldest days' nightly runs and the previous weeks
 * have reflected on what came before. One too large to fit is left out and the next, older and
 * smaller, may still be kept. Returns what is kept (in the week's order) and what is left out (newest first).
 */
export function pickWeekWithinBudget(
  week: readonly WeekSummary[],
  budget: number,
  ceilingOf: (prompt: string) => number,
): { kept: WeekSummary[]; leftOut: WeekSummary[] } {
  const kept: WeekSummary[] = [];
  const leftOut: WeekSummary[] = [];
  for (const s of [...week].sort((a, b) => b.at.localeCompare(a.at))) {
    if (ceilingOf(weeklyPrompt([...kept, s])) <= budget) kept.push(s);
    else leftOut.push(s);
  }
  const order = new Map(week.map((s, i) => [s, i]));
  return { kept: kept.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)), leftOut };
}

/** The distinct days (UTC) of a week's conversation: its batch logs and context summaries (nightly findings restate them). */
export function conversationDays(summaries: readonly WeekSummary[]): number {
  return new Set(summaries.filter((s) => s.source !== 'nightly').map((s) => s.at.slice(0, 10))).size;
}

/**
 * A weekly run's reflection as a markdown document for people, rendered from its run record
 * (`weekly`, and `windowTo`: the run's scheduled time) when read — the sleep-time run list
 * serves it as `markdown`. It is not stored as an S3 object.
 */
export function weeklyMarkdown(windowTo: string, w: WeeklyOutput): string {
  const list = (items: string[]) => (items.length > 0 ? items.map((i) => `- ${i}`).join('\n') : '- (none)');
  return [
    `# Weekly reflection — week to ${windowTo.slice(0, 10)}`,
    '',
    '## Trajectory',
    w.trajectory || '(none)',
    '',
    '## Topic drift',
    list(w.topic_drift.map((d) => `${d.topic}: ${d.status}`)),
    '',
    '## Weekly patterns',
    list(w.weekly_patterns),
    '',
    '## Unresolved arcs',
    list(w.unresolved_arcs),
    '',
  ].join('\n');
}
