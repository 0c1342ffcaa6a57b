/**
 * The selective diary (req R-DIARY): after a batch, the agent writes a reflection entry
 * only when the batch mattered by one of the seed's impact criteria; otherwise the attempt
 * is rejected and the reason logged (batch log and function log), so the criteria can be
 * tuned. A per-turn diary would write one entry per turn; this one writes at most one per
 * batch, and only for batches that pass.
 *
 * The criteria are the seed's; what counts as evidence for each is ours (all from what the
 * batch already knows, no extra model call):
 * - impact (changes how the agent should behave): a correction passed the gates; the batch
 *   was fired by an error, correction or user_request event; a reviewed turn was validated
 *   FAIL, RETRY or REVISE, or flagged a contradiction; an episode failed;
 * - reusable (will matter in future sessions): an item was promoted to Knowledge or recurred
 *   (a reinforcement: it came back in another batch);
 * - lesson (a pattern to extract): a pattern or a connection was staged; a failed episode
 *   says why; the model's assessment calls for caution (≥ CAUTION_FOR_LESSON);
 * - user signal (the user said it matters): "please remember", "remember that", "don't
 *   forget", "keep in mind", "from now on", "make a note", "this is important"… in a user
 *   message — asking the agent to keep something, not "remember when…".
 */
import type { TurnSaved } from '../../events/turn-saved.js';
import type { EmotionState } from '../batches/emotion-state.js';
import { renderFrontMatter } from '../kernel/front-matter.js';
import type { ReflectionEntry, BatchAnswer } from '../batches/batch-answer.js';

export const DIARY_CRITERIA = ['impact', 'reusable', 'lesson', 'user_signal'] as const;
export type DiaryCriterion = (typeof DIARY_CRITERIA)[number];

export const CAUTION_FOR_LESSON = 0.5;
const BEHAVIOUR_EVENTS = new Set(['event:error', 'event:correction', 'event:user_request']);
/** Asking the agent to keep something, not reminiscing ("remember when…") or small talk ("it's important to rest"). */
const USER_SIGNAL =
  /\b(please remember|remember that|remember this|don'?t forget|do not forget|keep in mind|from now on|make a note|note that|this is important|it'?s important to me)\b/i;

export interface DiaryInput {
  batchId: string;
  trigger: string;
  turns: ReadonlyArray<Pick<TurnSaved, 'turnId' | 'query' | 'signals' | 'episode'>>;
  /** What passed the gates. */
  passed: BatchAnswer;
  staged: ReadonlyArray<{ path: string; title: string; category: string; text: string }>;
  promoted: readonly string[];
  reinforced: ReadonlyArray<{ item: string; staged_file: string }>;
  assessment: EmotionState | null;
  /** The model's reflection on the agent.event that fired the batch (req R-EVT), if it gave one. */
  reflection?: ReflectionEntry | null;
}

export interface DiaryDecision {
  write: boolean;
  /** The evidence found for each criterion (empty lists: not met). */
  criteria: Record<DiaryCriterion, string[]>;
  /** Why no entry was written (when `write` is false). */
  reason?: string;
}

export function decideDiaryEntry(input: DiaryInput): DiaryDecision {
  const criteria: Record<DiaryCriterion, string[]> = { impact: [], reusable: [], lesson: [], user_signal: [] };
  for (const c of input.passed.corrections) criteria.impact.push(`correction of ${c.existing_file}`);
  if (BEHAVIOUR_EVENTS.has(input.trigger)) criteria.impact.push(`fired by ${input.trigger}`);
  for (const t of input.turns) {
    const v = t.signals?.validation;
    if (v === 'FAIL' || v === 'RETRY' || v === 'REVISE') criteria.impact.push(`turn ${t.turnId} validated ${v}`);
    if (t.signals?.contradiction) criteria.impact.push(`turn ${t.turnId} contradicted earlier findings`);
    if (t.episode && !t.episode.outcome.success) {
      criteria.impact.push(`episode of turn ${t.turnId} failed`);
      if (t.episode.outcome.failureReason)
        criteria.lesson.push(`turn ${t.turnId}: ${t.episode.goal} failed (${t.episode.outcome.failureReason})`);
    }
    const said = USER_SIGNAL.exec(t.query);
    if (said) criteria.user_signal.push(`turn ${t.turnId}: "${said[0]}"`);
  }
  for (const p of input.promoted) criteria.reusable.push(`promoted ${p}`);
  for (const r of input.reinforced) criteria.reusable.push(`recurred: ${r.item}`);
  for (const s of input.staged)
    if (s.category === 'Patterns' || s.category === 'Connections')
      criteria.lesson.push(`${s.category === 'Patterns' ? 'pattern' : 'connection'}: ${s.title}`);
  if (input.assessment && input.assessment.caution >= CAUTION_FOR_LESSON)
    criteria.lesson.push(`caution ${input.assessment.caution}`);
  if (input.reflection)
    criteria.lesson.push(`reflection after ${input.trigger}: ${input.reflection.insight.slice(0, 120)}`);
  const write = DIARY_CRITERIA.some((c) => criteria[c].length > 0);
  return write
    ? { write, criteria }
    : { write, criteria, reason: 'no impact, nothing reusable, no lesson and no user signal in this batch' };
}

/** An entry's path among the user's memory (`memory.retrieve`, the batch log): `diary/{batchId}.md`. */
export const diaryPath = (batchId: string): string => `diary/${batchId}.md`;

/**
 * The entry as markdown (path `diary/{batchId}.md`): front matter and its body, rendered from
 * the record, which holds both (`text` is the body). It is not stored as an S3
 * object: the record is the entry, this its rendering for people (the diary list serves it).
 */
export function diaryMarkdown(r: DiaryRecord): string {
  const meta = {
    kind: 'diary',
    entry_type: r.type,
    batch_id: r.id,
    trigger: r.trigger,
    turns: r.turns,
    criteria: DIARY_CRITERIA.filter((c) => r.criteria[c].length > 0),
    ...(r.reflection ? { confidence: r.reflection.confidence } : {}),
    ...(r.emotion ? { assessment: r.emotion } : {}),
  };
  return renderFrontMatter(meta, r.text);
}

/** The entry's markdown body: the reflection, the criteria met and their evidence, what was learned, what stays open. */
function diaryBody(input: DiaryInput, decision: DiaryDecision): string {
  const met = DIARY_CRITERIA.filter((c) => decision.criteria[c].length > 0);
  const lines = [`# Diary: ${input.batchId}`, ''];
  if (input.reflection)
    lines.push(
      `**Insight**: ${input.reflection.insight}`,
      `**Recommendation**: ${input.reflection.recommendation}`,
      '',
    );
  lines.push(...met.map((c) => `- **${c.replace('_', ' ')}**: ${decision.criteria[c].join('; ')}`));
  const clip = (t: string) => (t.length > 240 ? `${t.slice(0, 239)}…` : t);
  const learned = [
    ...input.staged.map((s) => `${s.title}: ${clip(s.text.replace(/\s+/g, ' '))}`),
    ...input.reinforced.map((r) => `${r.item} (again)`),
  ];
  if (learned.length > 0) lines.push('', '## Learned', ...learned.map((t) => `- ${t}`));
  if (input.passed.open_questions.length > 0)
    lines.push('', '## Still open', ...input.passed.open_questions.map((q) => `- ${q.question}`));
  return `${lines.join('\n')}\n`;
}

/**
 * A diary entry as stored, a PersonaEntry in the seed's words: every batch's decision (a
 * rejected attempt is kept, req R-DIARY-3: "log all rejected entry attempts for tuning") and, for an
 * event's batch, the model's reflection (trigger, insight, recommendation, confidence) with its
 * emotion state. A person's override (keep or drop) wins over the criteria.
 */
export interface DiaryRecord {
  userId: string;
  /** The batch's id. */
  id: string;
  /** Input time: the newest reviewed turn's (the job's request time when it reviewed none). */
  at: string;
  trigger: string;
  /** `reflection`: the model reflected on an agent.event; `observation`: the selective diary's entry. */
  type: 'reflection' | 'observation';
  /** Whether the criteria wrote it. */
  written: boolean;
  criteria: Record<DiaryCriterion, string[]>;
  reason?: string;
  turns: number[];
  reflection?: ReflectionEntry;
  emotion?: EmotionState;
  /** The entry's text (its markdown body): what search finds. */
  text: string;
  override?: DiaryOverride;
}

export interface DiaryOverride {
  decision: 'keep' | 'drop';
  by: string;
  at: string;
  reason?: string;
}

/** Listed, searched and shown to the next reflection: kept by a person, or written and not dropped. */
export const diaryVisible = (r: Pick<DiaryRecord, 'written' | 'override'>): boolean =>
  r.override ? r.override.decision === 'keep' : r.written;

export function diaryRecord(userId: string, input: DiaryInput, decision: DiaryDecision, at: string): DiaryRecord {
  return {
    userId,
    id: input.batchId,
    at,
    trigger: input.trigger,
    type: input.reflection ? 'reflection' : 'observation',
    written: decision.write,
    criteria: decision.criteria,
    ...(decision.reason ? { reason: decision.reason } : {}),
    turns: input.turns.map((t) => t.turnId),
    ...(input.reflection ? { reflection: input.reflection } : {}),
    ...(input.assessment ? { emotion: input.assessment } : {}),
    text: diaryBody(input, decision),
  };
}
