/**
 * Batch data assembly of req R-ASM: the batch's turns compiled into one document
 * within a token budget, dropping the oldest turns first when it does not fit.
 */
import type { AgentEventTrigger } from '../../events/agent-event.js';
import type { TurnSaved } from '../../events/turn-saved.js';
import { estimateTokens, slugify } from '../kernel/text.js';

export interface AssembledBatch {
  document: string;
  /** Turns in the document, ascending. */
  included: number[];
  /** Turns left out to keep within the budget (the oldest). */
  omitted: number[];
  tokens: number;
}

/**
 * Turns as a model reads them: a heading per day and session, then each turn as
 * `[Turn N] User: …` / `Agent: …`. Every character is billed on every call that reads the
 * turn (batch, summary, nightly), so the date is written once per group, not per turn; the
 * turn number is what the model cites. A session's id and a turn's time of day are left
 * out: an id tells the model nothing but that a new conversation began, which
 * the group's own heading already says, and no gate or answer field reads the hour.
 */
export function renderTurns(turns: readonly TurnSaved[]): string {
  const groups: string[] = [];
  let group = '';
  for (const turn of turns) {
    const next = `${turn.timestamp.slice(0, 10)} ${turn.sessionId}`;
    if (next !== group) groups.push(`### ${turn.timestamp.slice(0, 10)}`);
    group = next;
    groups[groups.length - 1] += `\n${renderTurnLine(turn)}`;
  }
  return groups.join('\n\n');
}

function renderTurnLine(turn: TurnSaved): string {
  const lines = [`[Turn ${turn.turnId}] User: ${turn.query}`];
  if (turn.context) lines.push(`Context: ${turn.context}`);
  lines.push(`Agent: ${turn.response}`);
  return lines.join('\n');
}

/**
 * Compile turns (any order) into the batch document. Whole turns are dropped oldest first
 * until the estimate fits `budgetTokens`; the newest turn is always kept, cut to the budget.
 */
export function assembleBatch(turns: readonly TurnSaved[], budgetTokens = 4000): AssembledBatch {
  const kept = [...turns].sort((a, b) => a.turnId - b.turnId);
  const omitted: number[] = [];
  while (kept.length > 1 && estimateTokens(renderTurns(kept)) > budgetTokens) {
    const dropped = kept.shift();
    if (dropped) omitted.push(dropped.turnId);
  }
  let document = renderTurns(kept);
  if (kept.length === 1 && estimateTokens(document) > budgetTokens) {
    document = `${document.slice(0, budgetTokens * 4 - 20)}\n[…truncated]`;
  }
  return { document, included: kept.map((t) => t.turnId), omitted, tokens: estimateTokens(document) };
}

const oneLine = (t: string) => t.replace(/\s+/g, ' ').trim();

/** One existing Knowledge document, as shown to the model so it knows what exists. */
export interface ExistingKnowledge {
  path: string;
  summary: string;
}

/**
 * The batch reflector's instructions (req R-LLM). Kept short: it is billed on every batch.
 * The answer's field names and types are in the structured output schema; what the schema
 * does not say (what each list is for, the hard caps of req R-LLM-3, a title's form, the
 * assessment's scales) is said here, once.
 */
export const REFLECTOR_SYSTEM_PROMPT = `You are the batch reflector of an AI agent's long-term memory. Report only what these turns
add about the user and their world:
- new_facts: durable facts, concepts or patterns not yet known (title: a slug; content: 2-5 sentences);
- corrections: known facts the user corrected (what_changed: the fact as it now reads);
- connections: two known files these turns link;
- open_questions: the user's questions left unresolved.
At most 2 new_facts, 1 correction, 2 connections, 2 open_questions; skip small talk. Cite source_turns
by turn number, files by their listed paths. Optional assessment: your confidence and the caution due
(0..1), the user's mood (-1..1).`;

/** A known document as a prompt lists it: `- path: summary`, or the path alone when its name already says the summary. */
export function knownLine(k: ExistingKnowledge, maxChars = 200): string {
  const summary = oneLine(k.summary).slice(0, maxChars);
  const name = (k.path.split('/').pop() ?? '').replace(/\.md$/, '');
  return slugify(summary) === name ? `- ${k.path}` : `- ${k.path}: ${summary}`;
}

/**
 * What to look for when an agent.event asked for the reflection (req R-EVT-1's triggers):
 * the event's kind decides the instruction, its `detail` (the error, the request, the
 * milestone) follows it.
 */
export const EVENT_INSTRUCTIONS: Record<AgentEventTrigger, string> = {
  error:
    'The agent hit an error. Look for what caused it and what the user needed instead; report what would prevent it next time.',
  user_request: 'The user asked for this reflection. Give priority to what they asked about.',
  correction:
    'The user corrected the agent. Find the existing knowledge the correction contradicts and report it as a correction.',
  session_boundary: 'A session ended. Keep what will matter in the next session.',
  milestone: 'The user reached a milestone. Record what it means for their goals.',
};

/** Why the batch runs now, when an agent.event asked for it. */
export interface ReflectionOccasion {
  trigger: AgentEventTrigger;
  detail?: string | undefined;
}

/** The occasion of a job whose trigger is `event:<kind>`; null for any other. */
export function occasionOf(job: { trigger: string; eventDetail?: string | undefined }): ReflectionOccasion | null {
  const kind = job.trigger.startsWith('event:') ? job.trigger.slice('event:'.length) : '';
  if (!(kind in EVENT_INSTRUCTIONS)) return null;
  return { trigger: kind as AgentEventTrigger, detail: job.eventDetail };
}

/** An earlier reflection entry, as the next event's batch is shown it (req R-EVT-2: reflections consult earlier ones). */
export interface EarlierReflection {
  at: string;
  trigger: string;
  insight: string;
  recommendation: string;
  confidence: number;
}

/** How many earlier reflection entries an event's batch is shown, newest first. */
export const EARLIER_REFLECTIONS_SHOWN = 3;

/**
 * The prompt of a batch. An event's batch (an `occasion`) says why it runs now, shows the
 * agent's latest reflection entries and asks for a new one: what the event teaches, building
 * on (or retiring) the earlier ones. An event's batch with no turn to review (`material`: the
 * event's own words, lib/batches/event-reflection.ts) reviews the event instead of turns.
 * `context` (an event's batch only) is what else it reads: short-term memory, plan outcomes.
 */
export function buildReflectorPrompt(
  batch: AssembledBatch,
  existing: readonly ExistingKnowledge[],
  occasion: ReflectionOccasion | null = null,
  earlier: readonly EarlierReflection[] = [],
  material = '',
  context = '',
): string {
  const known = existing.length === 0 ? '(none yet)' : existing.map((k) => knownLine(k)).join('\n');
  if (!occasion) return `## Existing knowledge\n${known}\n\n## Turns to review\n${batch.document}\n`;
  // The event's material holds its note; said once.
  const note =
    occasion.detail && !material ? `\nThe agent's note (${occasion.trigger}): ${oneLine(occasion.detail)}` : '';
  const why = `## Why now\n${EVENT_INSTRUCTIONS[occasion.trigger]}${note}\n\n`;
  const shown = earlier.slice(0, EARLIER_REFLECTIONS_SHOWN);
  const past =
    shown.length === 0
      ? '(none yet)'
      : shown
          .map(
            (e) =>
              `- ${e.at.slice(0, 10)}, after ${e.trigger} (confidence ${e.confidence}): ${oneLine(e.insight)} → ${oneLine(e.recommendation)}`,
          )
          .join('\n');
  const reviewed = material
    ? `## The event to reflect on\n${EVENT_ONLY_NOTE}\n${material}`
    : `## Turns to review\n${batch.document}`;
  const what = material ? 'what this event teaches' : 'what this event and these turns teach';
  const ask = `## Your reflection\nAlso fill \`reflection\`: ${what} about how the agent should act (insight), what it should do differently from now on (recommendation), and your confidence (0..1). Build on the earlier diary entries; say so when one no longer holds.`;
  // Req R-EVT-2: the short-term memory and the plans' outcomes (event-reflection.ts occasionContext).
  const more = context ? `${context}\n\n` : '';
  return `${why}## Existing knowledge\n${known}\n\n## Earlier diary entries\n${past}\n\n${more}${reviewed}\n\n${ask}\n`;
}

/** What the prompt of an event's batch with no turn says in place of the turns. */
export const EVENT_ONLY_NOTE =
  'No turn was waiting for a reflection: review the event itself. Cite a turn only when the event names it.';
